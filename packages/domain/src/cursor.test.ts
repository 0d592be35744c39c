import { describe, expect, it } from "vitest";
import { BadRequest } from "./errors.ts";
import { base64DecodedLength, decodeBase64Url, encodeBase64Url } from "./base64url.ts";
import { decodeCursor, decodeSequenceCursor, encodeCursor, encodeSequenceCursor } from "./cursor.ts";
import { SiteCreateSchema, SitePatchSchema } from "./sites.ts";

describe("cursors", () => {
  it("round-trip an id and are opaque URL-safe text", () => {
    const id = "0190a5b4-1234-7abc-8def-0123456789ab";
    const c = encodeCursor(id);
    expect(c).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(c).not.toContain(id);
    expect(decodeCursor(c)).toBe(id);
  });

  it.each(["", "garbage", "not base64!", encodeBase64Url("{}"), encodeBase64Url('{"after":"x; drop table"}')])(
    "rejects %j as a 400",
    (c) => {
      expect(() => decodeCursor(c)).toThrow(BadRequest);
    },
  );
});

describe("sequence cursors", () => {
  it("round-trip a sequence number", () => {
    expect(decodeSequenceCursor(encodeSequenceCursor(123_456_789_012n))).toBe(123_456_789_012n);
  });
  it.each(["", "not base64!", encodeBase64Url("12a"), encodeBase64Url("1".repeat(19))])("rejects %j as a 400", (c) => {
    expect(() => decodeSequenceCursor(c)).toThrow(BadRequest);
  });
});

describe("base64url", () => {
  it.each([
    ["", ""],
    ["a", "YQ"],
    ["ab", "YWI"],
    ["abc", "YWJj"],
    ['{"after":"x"}', "eyJhZnRlciI6IngifQ"],
    ["Keflavík ✓", "S2VmbGF2w61rIOKckw"],
  ])("encodes UTF-8 text %j unpadded, and decodes it back", (text, encoded) => {
    expect(encodeBase64Url(text)).toBe(encoded);
    expect(decodeBase64Url(encoded)).toBe(text);
  });
  it("tells the decoded length of padded base64 without decoding", () => {
    expect([
      base64DecodedLength(""),
      base64DecodedLength("YQ=="),
      base64DecodedLength("YWI="),
      base64DecodedLength("YWJj"),
    ]).toEqual([0, 1, 2, 3]);
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
