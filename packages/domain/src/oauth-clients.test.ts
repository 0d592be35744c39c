import { describe, expect, it } from "vitest";
import { decodeSlugCursor, encodeCursor } from "./cursor.ts";
import { MachineClientCreateSchema } from "./oauth-clients.ts";

describe("MachineClientCreateSchema", () => {
  it.each([
    [{ clientId: "matrix-prod", scopes: ["fleet.read"] }, true],
    [{ clientId: "ci-bot", scopes: ["fleet.read", "fleet.operate"], description: "CI" }, true],
    [{ clientId: "matrix-prod", scopes: [] }, false],
    [{ clientId: "matrix-prod", scopes: ["agent:netbox"] }, false],
    [{ clientId: "matrix-prod", scopes: ["fleet.read", "fleet.read"] }, false],
    [{ clientId: "Matrix", scopes: ["fleet.read"] }, false],
    [{ clientId: "-lead", scopes: ["fleet.read"] }, false],
    [{ clientId: "a".repeat(64), scopes: ["fleet.read"] }, false],
    [{ clientId: "ok", scopes: ["fleet.read"], description: "" }, false],
    [{ clientId: "ok", scopes: ["fleet.read"], description: "x".repeat(501) }, false],
    [{ clientId: "ok", scopes: ["fleet.read"], kind: "admin" }, false],
  ])("%j valid: %s", (body, valid) => {
    expect(MachineClientCreateSchema.safeParse(body).success).toBe(valid);
  });
});

describe("slug cursors", () => {
  it("round-trip a client id and refuse anything else", () => {
    expect(decodeSlugCursor(encodeCursor("matrix-prod"))).toBe("matrix-prod");
    expect(() => decodeSlugCursor(encodeCursor("Not A Slug"))).toThrow(/cursor/);
    expect(() => decodeSlugCursor("%%%")).toThrow(/cursor/);
  });
});
