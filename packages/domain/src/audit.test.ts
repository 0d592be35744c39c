import { describe, expect, it } from "vitest";
import { z } from "zod";
import { auditPrincipal } from "./audit.ts";
import { commaList } from "./common.ts";
import { DiscrepancyFleetQuerySchema } from "./discrepancies.ts";
import { siteSilenceRefusal } from "./sites.ts";

describe("auditPrincipal", () => {
  it.each([
    ["person:ada@example.com", undefined, { kind: "person", name: "ada@example.com" }],
    ["fleet-admin", { kind: "admin" }, { kind: "client", name: "fleet-admin" }],
    ["slurm-agent-sys1", { kind: "agent" }, { kind: "agent", name: "slurm-agent-sys1" }],
    ["hub:config", undefined, { kind: "hub", name: "hub:config" }],
    ["local", undefined, { kind: "hub", name: "local" }],
    ["deleted-client", undefined, { kind: "client", name: "deleted-client" }],
  ] as const)("%s is named %o", (id, client, named) => {
    expect(auditPrincipal(id, client)).toEqual(named);
  });
});

describe("commaList", () => {
  const kinds = commaList(z.enum(["a", "b", "c"]), 2);
  it("parses comma-separated values, trimming and dropping duplicates and empty ones", () => {
    expect(kinds.parse("a,b")).toEqual(["a", "b"]);
    expect(kinds.parse(" a , a,,b")).toEqual(["a", "b"]);
  });
  it("refuses an unknown value naming it, an empty list, and more values than allowed", () => {
    expect(kinds.safeParse("a,nope").error?.issues[0]?.message).toMatch(/^'nope': /);
    expect(kinds.safeParse(",").error?.issues[0]?.message).toBe("one to 2 comma-separated values");
    expect(kinds.safeParse("a,b,c").error?.issues[0]?.message).toBe("one to 2 comma-separated values");
  });
  it("is what the fleet-wide discrepancy list reads its site and kind filters with", () => {
    expect(DiscrepancyFleetQuerySchema.parse({ site: "kef1,glo1", kind: "unobserved" })).toMatchObject({
      site: ["kef1", "glo1"],
      kind: ["unobserved"],
    });
    expect(DiscrepancyFleetQuerySchema.safeParse({ kind: "unobserved,nope" }).success).toBe(false);
  });
});

describe("siteSilenceRefusal", () => {
  it("refuses a silence window longer than staleness, and allows equal or shorter", () => {
    expect(siteSilenceRefusal(601_000, 600_000)).toMatch(/601 s is longer than the staleness window \(600 s\)/);
    expect(siteSilenceRefusal(600_000, 600_000)).toBeNull();
    expect(siteSilenceRefusal(10_000, 600_000)).toBeNull();
  });
});
