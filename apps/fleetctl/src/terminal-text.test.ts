import { describe, expect, it } from "vitest";
import { terminalSafe } from "./terminal-text.ts";

describe("terminalSafe", () => {
  it.each([
    ["kef-gpu-0042", "kef-gpu-0042"],
    ["a\u001b[2Jb", "a\\e[2Jb"],
    ["\u001b]52;c;aGk=\u0007", "\\e]52;c;aGk=\\u{07}"],
    ["\u001b]8;;https://evil\u001b\\ok\u001b]8;;\u001b\\", "\\e]8;;https://evil\\e\\ok\\e]8;;\\e\\"],
    ["line1\nline2\ttab\r", "line1\\nline2\\ttab\\r"],
    ["\u009b2J", "\\u{9b}2J"],
    ["abc\u202edcba", "abc\\u{202e}dcba"],
    ["nvme3n1 — RMA ✓", "nvme3n1 — RMA ✓"],
  ])("%j is shown as %j", (raw, shown) => {
    expect(terminalSafe(raw)).toBe(shown);
  });
});
