import { describe, expect, it } from "vitest";
import { colorWanted, outputFormat, renderList, renderOne, type View } from "./output.ts";

type Row = { name: string; status: string; id: string };
const VIEW: View<Row> = {
  kind: "device",
  name: (r) => r.name,
  columns: [
    { header: "name", value: (r) => r.name },
    { header: "status", value: (r) => r.status, tone: (t) => (t === "FAILED" ? "bad" : undefined) },
    { header: "id", value: (r) => r.id, wide: true },
  ],
};
const page = {
  items: [
    { name: "kef-gpu-1", status: "AVAILABLE", id: "a1" },
    { name: "kef-gpu-10", status: "FAILED", id: "b2" },
  ],
  count: 57,
};
const plain = (format: Parameters<typeof renderList>[2]["format"]) => ({ format, color: false });

describe("renderList", () => {
  it("table: upper-case headers, aligned columns, no borders, no trailing spaces", async () => {
    expect(await renderList(VIEW, page, plain("table"))).toBe(
      "NAME        STATUS\nkef-gpu-1   AVAILABLE\nkef-gpu-10  FAILED\n",
    );
  });
  it("wide adds the wide columns", async () => {
    expect((await renderList(VIEW, page, plain("wide"))).split("\n")[0]).toBe("NAME        STATUS     ID");
  });
  it("colours a cell only when asked", async () => {
    const coloured = await renderList(VIEW, page, { format: "table", color: true });
    expect(coloured).toContain("\u001b[31mFAILED\u001b[39m");
    // The colour codes do not count in the column widths.
    expect(coloured.split("\n")[2]).toBe("kef-gpu-10  \u001b[31mFAILED\u001b[39m");
  });
  it("json and yaml carry the items and the hub's count", async () => {
    expect(JSON.parse(await renderList(VIEW, page, plain("json")))).toEqual(page);
    expect(await renderList(VIEW, page, plain("yaml"))).toContain("count: 57\n");
  });
  it("name prints kind/name a line; count the total, not the page", async () => {
    expect(await renderList(VIEW, page, plain("name"))).toBe("device/kef-gpu-1\ndevice/kef-gpu-10\n");
    expect(await renderList(VIEW, page, plain("count"))).toBe("57\n");
  });
  it("an empty table prints nothing", async () => {
    expect(await renderList(VIEW, { items: [], count: 0 }, plain("table"))).toBe("");
  });
  it("one resource as json is the resource itself", async () => {
    expect(JSON.parse(await renderOne(VIEW, page.items[0]!, plain("json")))).toEqual(page.items[0]);
  });
});

describe("outputFormat", () => {
  it("takes -o, else --format, else table", () => {
    expect(outputFormat({ format: "count" })).toBe("count");
    expect(outputFormat({ output: "json", format: "count" })).toBe("json");
    expect(outputFormat({})).toBe("table");
  });
  it("refuses a format the command does not offer", () => {
    expect(() => outputFormat({ output: "count" }, ["table", "json"])).toThrow(/not one of table, json/);
  });
});

describe("colorWanted", () => {
  it("only on a terminal, never with NO_COLOR, always with FORCE_COLOR", () => {
    expect(colorWanted({ isTTY: true }, {})).toBe(true);
    expect(colorWanted({ isTTY: false }, {})).toBe(false);
    expect(colorWanted({ isTTY: true }, { NO_COLOR: "1" })).toBe(false);
    expect(colorWanted({ isTTY: true }, { TERM: "dumb" })).toBe(false);
    expect(colorWanted({ isTTY: false }, { FORCE_COLOR: "1" })).toBe(true);
  });
});
