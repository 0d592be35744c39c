import { describe, expect, it } from "vitest";
import { BadRequest } from "./errors.ts";
import { base64DecodedLength, decodeBase64Url, encodeBase64Url } from "./base64url.ts";
import {
  decodeCursor,
  decodeListCursor,
  decodeSequenceCursor,
  encodeCursor,
  encodeListCursor,
  encodeSequenceCursor,
  filterFingerprint,
} from "./cursor.ts";
import { SiteCreateSchema, SitePatchSchema } from "./sites.ts";
import { DEVICE_SORTS } from "./devices.ts";

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

describe("list cursors (sorted lists)", () => {
  const id = "0190a5b4-1234-7abc-8def-0123456789ab";
  const byName = { sort: "-name", filters: filterFingerprint({ site: "lon1", cordoned: true }) };

  it("round-trip the last row's id and sort value, null included", () => {
    expect(decodeListCursor(encodeListCursor({ after: id, value: "gpu-007" }, byName), byName)).toEqual({
      after: id,
      value: "gpu-007",
    });
    expect(decodeListCursor(encodeListCursor({ after: id, value: null }, byName), byName)).toEqual({
      after: id,
      value: null,
    });
  });

  it("fingerprint the filters whatever their order, ignoring absent ones", () => {
    expect(filterFingerprint({ cordoned: true, site: "lon1", name: undefined })).toBe(byName.filters);
    expect(filterFingerprint({ cordoned: false, site: "lon1" })).not.toBe(byName.filters);
  });

  it.each([
    ["another sort", { ...byName, sort: "name" }],
    ["id order", { ...byName, sort: "id" }],
    ["other filters", { ...byName, filters: filterFingerprint({ site: "lon1" }) }],
  ])("refuse a cursor used with %s as a 400 naming cursor", (_, other) => {
    const c = encodeListCursor({ after: id, value: "gpu-007" }, byName);
    expect(() => decodeListCursor(c, other)).toThrow(
      expect.objectContaining({
        status: 400,
        code: "cursor_mismatch",
        errors: [expect.objectContaining({ path: "cursor" })],
      }),
    );
  });

  it("take a plain id cursor in id order only", () => {
    const idOrder = { sort: "id", filters: filterFingerprint({}) };
    expect(decodeListCursor(encodeCursor(id), idOrder)).toEqual({ after: id });
    expect(() => decodeListCursor(encodeCursor(id), byName)).toThrow(BadRequest);
    // Every other order, ascending or descending, with or without filters.
    for (const sort of DEVICE_SORTS)
      for (const filters of [idOrder.filters, byName.filters])
        expect(() => decodeListCursor(encodeCursor(id), { sort, filters }), sort).toThrow(BadRequest);
  });

  it.each(["", "garbage", encodeBase64Url('{"after":"x"}'), encodeBase64Url(`{"after":"${id}","s":"-name","v":3}`)])(
    "reject %j as a 400",
    (c) => {
      expect(() => decodeListCursor(c, byName)).toThrow(BadRequest);
    },
  );
});
