import { expect, it } from "vitest";
import { diffFields, sameJson } from "./diff.ts";

it("reports changed fields only, ignoring bookkeeping", () => {
  expect(diffFields({ a: 1, b: [1], version: 1 }, { a: 1, b: [1, 2], version: 2 })).toEqual({
    b: { before: [1], after: [1, 2] },
  });
});
it("reports every field for a create and a delete", () => {
  expect(diffFields(null, { a: 1, o: { x: 1 }, version: 1 })).toEqual({
    a: { before: null, after: 1 },
    o: { before: null, after: { x: 1 } },
  });
  expect(diffFields({ a: 1 }, null)).toEqual({ a: { before: 1, after: null } });
});
it("names the changed field inside an object, and an object that appears or goes as a whole", () => {
  expect(
    diffFields(
      { ironic: { provisionState: "available", powerState: "power off" }, hold: null },
      { ironic: { provisionState: "active", powerState: "power off" }, hold: { by: "x" } },
    ),
  ).toEqual({
    "ironic.provisionState": { before: "available", after: "active" },
    hold: { before: null, after: { by: "x" } },
  });
});
it("compares a list of typed entries (conditions) entry by entry", () => {
  const ready = { type: "Ready", status: "True" };
  expect(
    diffFields(
      { conditions: [ready, { type: "Healthy", status: "Unknown" }] },
      { conditions: [ready, { type: "Healthy", status: "False" }, { type: "Cordoned", status: "True" }] },
    ),
  ).toEqual({
    "conditions.Healthy": {
      before: { type: "Healthy", status: "Unknown" },
      after: { type: "Healthy", status: "False" },
    },
    "conditions.Cordoned": { before: null, after: { type: "Cordoned", status: "True" } },
  });
  // Entries without distinct types are compared as a whole list.
  expect(diffFields({ l: [{ type: "a" }, { type: "a" }] }, { l: [{ type: "a" }] })).toEqual({
    l: { before: [{ type: "a" }, { type: "a" }], after: [{ type: "a" }] },
  });
});
it("compares values as JSON: key order, undefined keys and Dates against their ISO strings are no change", () => {
  const at = new Date("2026-12-04T00:00:00.000Z");
  expect(
    diffFields(
      { o: { a: 1, b: [1, { c: 2 }], u: undefined }, t: at },
      { o: { b: [1, { c: 2 }], a: 1 }, t: at.toISOString() },
    ),
  ).toEqual({});
  expect(diffFields({ o: { a: [1, 2] } }, { o: { a: [2, 1] } })).toEqual({ "o.a": { before: [1, 2], after: [2, 1] } });
  expect(diffFields({ o: { a: null } }, { o: { a: 0 } })).toEqual({ "o.a": { before: null, after: 0 } });
});
it("a Date changed to another Date is a change; a list of interfaces (type is their kind) is compared whole", () => {
  const a = new Date("2026-12-04T00:00:00.000Z");
  const b = new Date("2026-12-04T00:00:01.000Z");
  expect(diffFields({ t: a, o: { t: a } }, { t: b, o: { t: b } })).toEqual({
    t: { before: a, after: b },
    "o.t": { before: a, after: b },
  });
  const nics = [{ name: "eth0", type: "1000base-t" }];
  const moved = [{ name: "eth1", type: "1000base-t" }];
  expect(diffFields({ interfaces: nics }, { interfaces: moved })).toEqual({
    interfaces: { before: nics, after: moved },
  });
});
it("sameJson: equal as JSON text would be, whatever the key order", () => {
  const at = new Date("2026-12-04T00:00:00.000Z");
  // What jsonb gives back (keys reordered) equals what was written.
  expect(sameJson({ b: [1, { y: 2, x: 1 }], a: "s" }, { a: "s", b: [1, { x: 1, y: 2 }] })).toBe(true);
  expect(sameJson(null, undefined)).toBe(true);
  expect(sameJson([null], [undefined])).toBe(true);
  expect(sameJson({ a: 1, u: undefined }, { a: 1 })).toBe(true);
  expect(sameJson({ t: at }, { t: at.toISOString() })).toBe(true);
  // A null key is not an absent one; order inside a list counts; types count.
  expect(sameJson({ a: null }, {})).toBe(false);
  expect(sameJson([1, 2], [2, 1])).toBe(false);
  expect(sameJson({ a: "1" }, { a: 1 })).toBe(false);
  expect(sameJson([], {})).toBe(false);
  expect(sameJson(null, 0)).toBe(false);
  expect(sameJson({ a: { b: [1, { c: null }] } }, { a: { b: [1, { c: false }] } })).toBe(false);
});
