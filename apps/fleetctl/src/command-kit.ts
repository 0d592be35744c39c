/**
 * What the command tree is built from: actions that load their module only when they run (so
 * `fleetctl --help` and `--version` load no client, no schema), and the options many commands
 * share. Cheap to import: commander and nothing else.
 */
import { InvalidArgumentError, Option, type Command } from "commander";
import { OUTPUT_FORMATS, TEMPLATE_FORMATS } from "./output.ts";

export interface Ctx {
  /** The command's options, the global ones (--profile, --hub) included. */
  opts: Record<string, unknown>;
  /** Its positional arguments, in order. */
  args: unknown[];
  env: NodeJS.ProcessEnv;
  out: (text: string) => void;
  err: (text: string) => void;
}
export type Handler = (ctx: Ctx) => Promise<void>;

/** An action running `name` from the module `load` imports, when (and only when) it is invoked. */
export function lazy<M extends Record<string, unknown>>(load: () => Promise<M>, name: keyof M & string) {
  return async function (this: Command) {
    const handler = (await load())[name] as Handler;
    await handler({
      opts: this.optsWithGlobals(),
      args: this.processedArgs,
      env: process.env,
      out: (t) => void process.stdout.write(t),
      err: (t) => void process.stderr.write(t),
    });
  };
}

/**
 * -o/--output, and --format, the runbook's spelling of the same option; where a command offers
 * every format, kubectl's `jsonpath=…` and `custom-columns=…` too (their templates are checked
 * when the command runs, output.ts), and --no-headers; the openstack client's `-f value` and
 * `-c COLUMN` where it shows tables.
 */
export function withOutput(cmd: Command, formats: readonly string[] = OUTPUT_FORMATS): Command {
  const templates = formats === OUTPUT_FORMATS ? TEMPLATE_FORMATS.map((t) => `${t}=...`) : [];
  const shown = [...formats, ...templates];
  const parse = (v: string) => {
    if (formats.includes(v) || templates.some((t) => v.startsWith(t.slice(0, -3)))) return v;
    throw new InvalidArgumentError(`Allowed choices are ${shown.join(", ")}.`);
  };
  const option = (flags: string, help: string) => {
    const o = new Option(flags, help).argParser(parse);
    o.argChoices = shown; // for help and shell completion; `parse` checks
    return o;
  };
  // -f is openstack's spelling of --format, where the command has no -f of its own (feed tail's --follow).
  const taken = (short: string) => cmd.options.some((o) => o.short === short);
  cmd
    .addOption(option("-o, --output <format>", "output format"))
    .addOption(option(taken("-f") ? "--format <format>" : "-f, --format <format>", "alias of --output"));
  if (formats.includes("table")) {
    cmd.option("--no-headers", "tables without their header line");
    if (!taken("-c"))
      cmd.option(
        "-c, --column <name>",
        "show only this column of -o table, wide or value (repeatable, in order)",
        (v: string, prev: string[] = []) => [...prev, v],
      );
  }
  return cmd;
}

/** --limit and --all for lists. */
export function withPaging(cmd: Command): Command {
  return cmd
    .option("--limit <n>", "show at most this many items (1 to 1000; default 100)")
    .option("--all", "page through every item");
}

/** Examples at the end of a command's --help. */
export function examples(cmd: Command, lines: string[]): Command {
  return cmd.addHelpText("after", `\nExamples:\n${lines.map((l) => `  ${l}`).join("\n")}\n`);
}
