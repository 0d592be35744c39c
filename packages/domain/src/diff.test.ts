import { expect, it } from "vitest";
import { diffFields } from "./diff.ts";

it("reports changed fields only, ignoring bookkeeping", () => {
  expect(diffFields({ a: 1, b: [1], version: 1 }, { a: 1, b: [1, 2], version: 2 })).toEqual({
    b: { before: [1], after: [1, 2] },
  });
});
it("reports every field for a create and a delete", () => {
  expect(diffFields(null, { a: 1, version: 1 })).toEqual({ a: { before: null, after: 1 } });
  expect(diffFields({ a: 1 }, null)).toEqual({ a: { before: 1, after: null } });
});
