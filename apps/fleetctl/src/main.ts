/**
 * fleetctl's entry point: parse, run, and turn whatever went wrong into a message on stderr and
 * an exit code (exit-codes.ts). Usage errors exit 2, as getopt's tools do.
 */
import { CommanderError } from "commander";
import { buildProgram } from "./cli.ts";
import { EXIT } from "./exit-codes.ts";
import { renderError } from "./errors.ts";

export async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv, { from: "user" });
    return typeof process.exitCode === "number" ? process.exitCode : EXIT.OK;
  } catch (err) {
    if (err instanceof CommanderError) {
      // Commander has already printed its message (or the help / version).
      const done = ["commander.helpDisplayed", "commander.version", "commander.help"].includes(err.code);
      return done ? EXIT.OK : EXIT.USAGE;
    }
    const { text, exitCode } = renderError(err);
    process.stderr.write(text);
    return exitCode;
  }
}

// A reader that closed the pipe (`fleetctl … | head -1`) has what it wanted: the command ends
// there, quietly and with 0, as kubectl does, whatever the format and however long the output.
process.stdout.on("error", (err: NodeJS.ErrnoException) => {
  if (err.code !== "EPIPE") throw err;
  process.exit(EXIT.OK);
});
// A closed stderr has no one to tell: what would have gone there is dropped.
process.stderr.on("error", (err: NodeJS.ErrnoException) => {
  if (err.code !== "EPIPE") throw err;
});

// Waits for stdout to drain before exiting: a large -o json piped to a slow reader is never cut.
const code = await main(process.argv.slice(2));
process.exitCode = code;
