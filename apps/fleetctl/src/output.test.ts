import { describe, expect, it } from "vitest";
import { UsageError } from "./errors.ts";
import { age, colorWanted, jsonText, outputFormat, parseOutput, renderList, renderOne, type View } from "./output.ts";

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
    // Only the toned cell is coloured, and nothing is when colour is not asked for.
    expect(coloured.split("\u001b[")).toHaveLength(3);
    expect(await renderList(VIEW, page, plain("table"))).not.toContain("\u001b");
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
  it("value (openstack's -f value): each row's cells one space apart, no header", async () => {
    expect(await renderList(VIEW, page, plain("value"))).toBe("kef-gpu-1 AVAILABLE\nkef-gpu-10 FAILED\n");
  });
  it("-c keeps the columns named, in any case, in the order given, wide ones included", async () => {
    const o = { ...plain("value"), columns: ["ID", "name"] };
    expect(await renderList(VIEW, page, o)).toBe("a1 kef-gpu-1\nb2 kef-gpu-10\n");
    expect(await renderList(VIEW, page, { ...plain("table"), columns: ["status"] })).toBe(
      "STATUS\nAVAILABLE\nFAILED\n",
    );
  });
  it("-c naming a column the view lacks is a usage error listing the columns, even for an empty list", async () => {
    await expect(renderList(VIEW, { items: [], count: 0 }, { ...plain("value"), columns: ["rack"] })).rejects.toThrow(
      'no column "rack": device columns are name, status, id',
    );
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
    expect(colorWanted({ isTTY: true }, { TERM: "dumb", FORCE_COLOR: "1" })).toBe(true);
    expect(colorWanted({ isTTY: true }, { NO_COLOR: "1", FORCE_COLOR: "1" })).toBe(false);
    expect(colorWanted({ isTTY: false }, { NO_COLOR: "1", FORCE_COLOR: "1" })).toBe(false);
  });
});

describe("kubectl's habits", () => {
  it("--no-headers drops the header line only", async () => {
    expect(await renderList(VIEW, page, { ...plain("table"), noHeaders: true })).toBe(
      "kef-gpu-1   AVAILABLE\nkef-gpu-10  FAILED\n",
    );
  });
  it("custom-columns: the template's headers as written and its paths, <none> when missing", async () => {
    const o = { ...plain("custom-columns"), template: "NAME:.name,Id:.id,X:.nothing" };
    expect(await renderList(VIEW, page, o)).toBe("NAME        Id  X\nkef-gpu-1   a1  <none>\nkef-gpu-10  b2  <none>\n");
  });
  it("jsonpath over {items, count}, and over one item", async () => {
    const o = { ...plain("jsonpath"), template: '{range .items[*]}{.name}{"\\n"}{end}' };
    expect(await renderList(VIEW, page, o)).toBe("kef-gpu-1\nkef-gpu-10\n");
    expect(await renderOne(VIEW, page.items[0]!, { ...plain("jsonpath"), template: "{.id}" })).toBe("a1");
  });
  it("parses -o jsonpath=… and refuses a bad template or a format the command lacks with a usage error, when parsing the options", () => {
    expect(parseOutput({ output: "jsonpath={.items[*].name}" })).toEqual({
      format: "jsonpath",
      template: "{.items[*].name}",
    });
    for (const [output, allowed, message] of [
      ["jsonpath={.items[", undefined, /jsonpath/],
      ["custom-columns=NAME", undefined, /HEADER:\.path/],
      ["jsonpath={.a}", ["table", "json"] as const, /not one of table, json/],
    ] as const) {
      expect(() => parseOutput({ output }, allowed)).toThrow(message);
      expect(() => parseOutput({ output }, allowed)).toThrow(UsageError);
    }
  });
  it("source text is escaped in tables and names, exact in json", async () => {
    const evil = { name: "kef\u001b[2J\u001b]52;c;aGk=\u0007", status: "OK", id: "x" };
    const one = { items: [evil], count: 1 };
    // eslint-disable-next-line no-control-regex -- matching control characters is the point
    expect(await renderList(VIEW, one, plain("table"))).not.toMatch(/[\u0000-\u0008\u000b-\u001f]/);
    expect(await renderList(VIEW, one, plain("name"))).toBe("device/kef\\e[2J\\e]52;c;aGk=\\u{07}\n");
    expect(JSON.parse(await renderList(VIEW, one, plain("json"))).items[0].name).toBe(evil.name);
  });
  it.each([
    [30, "30s"],
    [150, "2m30s"],
    [3600, "60m"],
    [5 * 3600 + 600, "5h10m"],
    [30 * 3600, "30h"],
    [3 * 86400 + 4 * 3600, "3d4h"],
    [120 * 86400, "120d"],
    [800 * 86400, "2y"],
  ])("age of %i s is %s", (s, shown) => {
    const now = Date.parse("2026-12-05T12:00:00Z");
    expect(age(new Date(now - s * 1000).toISOString(), now)).toBe(shown);
  });
});

describe("jsonText", () => {
  it("escapes C1 controls and bidi overrides, and parses back to the exact data", () => {
    const v = { name: "a\u009b2Jb\u202ec\u001b" };
    const text = jsonText(v);
    // eslint-disable-next-line no-control-regex -- matching control characters is the point
    expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e]/);
    expect(JSON.parse(text)).toEqual(v);
  });
});
