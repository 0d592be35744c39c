import { describe, expect, it } from "vitest";
import { BadRequest } from "./errors.ts";
import { decodeCursor, encodeCursor } from "./cursor.ts";
import { SiteCreateSchema, SitePatchSchema } from "./sites.ts";

describe("cursors", () => {
  it("round-trip an id and are opaque URL-safe text", () => {
    const id = "0190a5b4-1234-7abc-8def-0123456789ab";
    const c = encodeCursor(id);
    expect(c).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(c).not.toContain(id);
    expect(decodeCursor(c)).toBe(id);
  });

  it.each([
    "",
    "garbage",
    Buffer.from("{}").toString("base64url"),
    Buffer.from('{"after":"x; drop table"}').toString("base64url"),
  ])("rejects %j as a 400", (c) => {
    expect(() => decodeCursor(c)).toThrow(BadRequest);
  });
});

describe("site schemas", () => {
  it("accept a minimal site and reject unknown fields", () => {
    expect(SiteCreateSchema.parse({ slug: "sys1-ice2", name: "ICE2" })).toEqual({ slug: "sys1-ice2", name: "ICE2" });
    expect(SiteCreateSchema.safeParse({ slug: "a", name: "b", colour: "red" }).success).toBe(false);
  });
  it("do not let a patch change the slug or be empty", () => {
    expect(SitePatchSchema.safeParse({ slug: "x" }).success).toBe(false);
    expect(SitePatchSchema.safeParse({}).success).toBe(false);
    expect(SitePatchSchema.parse({ region: null })).toEqual({ region: null });
  });
});
