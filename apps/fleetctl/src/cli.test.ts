import type { Command } from "commander";
import { describe, expect, it } from "vitest";
import { buildProgram } from "./cli.ts";

function leaves(cmd: Command, path: string[] = []): [string, Command][] {
  const subs = cmd.commands.filter((c) => c.name() !== "help");
  if (!subs.length) return [[path.join(" "), cmd]];
  return subs.flatMap((s) => leaves(s, [...path, s.name()]));
}

describe("the command tree", () => {
  it("every command's --help ends with examples", () => {
    const missing = leaves(buildProgram())
      .filter(([, cmd]) => {
        let text = "";
        cmd.configureOutput({ writeOut: (s) => (text += s) });
        cmd.outputHelp();
        return !text.includes("\nExamples:\n  ");
      })
      .map(([path]) => path);
    expect(missing).toEqual([]);
  });
});
