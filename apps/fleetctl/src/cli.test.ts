import type { Command } from "commander";
import { describe, expect, it } from "vitest";
import {
  DeviceHistoryQuerySchema,
  DeviceListQuerySchema,
  DiscrepancyListQuerySchema,
  JobListQuerySchema,
  SiteListQuerySchema,
} from "@fm/domain";
import { buildProgram } from "./cli.ts";

/** Every command of the tree people run, groups included, by path (not the hidden `__complete`, the shell's). */
function commands(cmd: Command, path: string[] = []): [string, Command][] {
  const subs = cmd.commands.filter((c) => c.name() !== "help" && !c.name().startsWith("__"));
  return [[path.join(" "), cmd], ...subs.flatMap((s) => commands(s, [...path, s.name()]))];
}

describe("the command tree", () => {
  it("every command's --help ends with examples, groups included", () => {
    const missing = commands(buildProgram())
      .filter(([, cmd]) => {
        let text = "";
        cmd.configureOutput({ writeOut: (s) => (text += s) });
        cmd.outputHelp();
        // Examples is the last section: after its heading, only its indented lines.
        const at = text.lastIndexOf("\nExamples:\n  ");
        return (
          at < 0 ||
          text
            .slice(at + "\nExamples:\n".length)
            .split("\n")
            .some((l) => l && !l.startsWith("  "))
        );
      })
      .map(([path]) => path || "(fleetctl)");
    expect(missing).toEqual([]);
  });

  // A filter the API gains shows up here until the list command offers it. Paging is --limit
  // and --all (the cursor is followed, never typed).
  it.each([
    ["api device list", DeviceListQuerySchema.shape],
    ["api device history", DeviceHistoryQuerySchema.shape],
    ["api job list", JobListQuerySchema.shape],
    ["api site list", SiteListQuerySchema.shape],
    ["api discrepancy list", DiscrepancyListQuerySchema.shape],
  ])("%s offers every parameter of the API's query", (path, shape) => {
    const cmd = new Map(commands(buildProgram())).get(path)!;
    const options = new Set(cmd.options.map((o) => o.attributeName()));
    const missing = Object.keys(shape).filter((k) => k !== "cursor" && !options.has(k));
    expect(missing).toEqual([]);
  });
});
