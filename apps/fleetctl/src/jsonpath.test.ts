import { describe, expect, it } from "vitest";
import { parseCustomColumns, renderJsonpath } from "./jsonpath.ts";

const list = {
  items: [
    { name: "kef-gpu-1", site: { slug: "keflavik" }, tags: ["a", "b"] },
    { name: "kef-gpu-2", site: { slug: "keflavik" }, tags: [] },
  ],
  count: 2,
};

describe("jsonpath templates (kubectl's subset)", () => {
  it.each([
    ["{.count}", "2"],
    ["{.items[0].site.slug}", "keflavik"],
    ["{.items[*].name}", "kef-gpu-1 kef-gpu-2"],
    ['{range .items[*]}{.name}{"\\n"}{end}', "kef-gpu-1\nkef-gpu-2\n"],
    ['{range .items[*]}{.name}{"\\t"}{.site.slug}{"\\n"}{end}', "kef-gpu-1\tkeflavik\nkef-gpu-2\tkeflavik\n"],
    ["{.items[0]}", JSON.stringify(list.items[0])],
    ["names: {.items[1].name}", "names: kef-gpu-2"],
    ["{.items[5].name}{.missing}", ""],
    ["{.items[0].tags}", '["a","b"]'],
  ])("%s", (template, out) => {
    expect(renderJsonpath(template, list)).toBe(out);
  });

  it.each(["{.items[", "{range .items[*]}{.name}", "{end}", "{.a b}"])("refuses %j with a usage error", (t) => {
    expect(() => renderJsonpath(t, list)).toThrow(/jsonpath/);
  });
});

describe("custom-columns", () => {
  it("takes HEADER:.path pairs, braces allowed", () => {
    expect(parseCustomColumns("NAME:.name,SITE:{.site.slug}")).toEqual([
      { header: "NAME", path: ".name" },
      { header: "SITE", path: ".site.slug" },
    ]);
  });
  it("refuses a column without a path", () => {
    expect(() => parseCustomColumns("NAME")).toThrow(/HEADER:\.path/);
  });
});
