/**
 * `-o table|wide|json|yaml|name|count` for every command that shows resources:
 *  - table / wide: aligned columns for people (wide adds columns), colour only on a terminal;
 *  - json / yaml: the API's representation, stable (a list is `{items, count}`, one resource is
 *    itself), what scripts read;
 *  - name: `<kind>/<name>` a line (kubectl's), for xargs;
 *  - count: the number the hub counted for the filters, for `wc -l` without fetching the items.
 */
import picocolors from "picocolors";
import { UsageError } from "./errors.ts";

export const OUTPUT_FORMATS = ["table", "wide", "json", "yaml", "name", "count"] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

export interface Column<T> {
  header: string;
  value: (item: T) => string | number | boolean | null | undefined;
  /** Shown with -o wide only. */
  wide?: boolean;
  /** Colours a cell on a terminal (its text, not its width, changes). */
  tone?: (text: string) => Tone | undefined;
}
export type Tone = "good" | "bad" | "warn" | "dim";

export interface View<T> {
  /** `device`, `job`: the prefix of -o name. */
  kind: string;
  name: (item: T) => string;
  columns: Column<T>[];
}

export interface OutputOptions {
  format: OutputFormat;
  /** Colour the table (a terminal, and NO_COLOR unset). */
  color: boolean;
}

/** -o and its alias --format (the runbook's spelling); -o wins when both are given. */
export function outputFormat(
  o: { output?: string; format?: string },
  allowed: readonly OutputFormat[] = OUTPUT_FORMATS,
) {
  const f = o.output ?? o.format ?? "table";
  if (!(allowed as readonly string[]).includes(f))
    throw new UsageError(`output format ${JSON.stringify(f)} is not one of ${allowed.join(", ")}`);
  return f as OutputFormat;
}

/** Colour on stdout only where a person reads it: a terminal, and NO_COLOR unset (no-color.org). */
export function colorWanted(stream: { isTTY?: boolean } = process.stdout, env = process.env): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== "") return false;
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== "" && env.FORCE_COLOR !== "0") return true;
  return Boolean(stream.isTTY) && env.TERM !== "dumb";
}

const cell = (v: unknown): string => (v === null || v === undefined || v === "" ? "-" : String(v));

export async function renderList<T>(
  view: View<T>,
  page: { items: T[]; count: number },
  o: OutputOptions,
): Promise<string> {
  switch (o.format) {
    case "count":
      return `${page.count}\n`;
    case "json":
      return `${JSON.stringify({ items: page.items, count: page.count }, null, 2)}\n`;
    case "yaml":
      return (await import("yaml")).stringify({ items: page.items, count: page.count });
    case "name":
      return page.items.map((i) => `${view.kind}/${view.name(i)}\n`).join("");
    default:
      return renderTable(view, page.items, o);
  }
}

export async function renderOne<T>(view: View<T>, item: T, o: OutputOptions): Promise<string> {
  switch (o.format) {
    case "json":
      return `${JSON.stringify(item, null, 2)}\n`;
    case "yaml":
      return (await import("yaml")).stringify(item);
    case "name":
      return `${view.kind}/${view.name(item)}\n`;
    case "count":
      return "1\n";
    default:
      return renderTable(view, [item], o);
  }
}

/** kubectl-style columns: upper-case headers, no borders, two spaces between columns. */
export async function renderTable<T>(view: View<T>, items: T[], o: OutputOptions): Promise<string> {
  if (!items.length) return "";
  const columns = view.columns.filter((c) => o.format === "wide" || !c.wide);
  const { default: Table } = await import("cli-table3");
  const table = new Table({
    head: columns.map((c) => c.header.toUpperCase()),
    chars: BORDERLESS,
    style: { head: [], border: [], "padding-left": 0, "padding-right": 2 },
  });
  const colors = picocolors.createColors(o.color);
  const paint: Record<Tone, (s: string) => string> = {
    good: colors.green,
    bad: colors.red,
    warn: colors.yellow,
    dim: colors.dim,
  };
  for (const item of items)
    table.push(
      columns.map((c) => {
        const text = cell(c.value(item));
        const tone = c.tone?.(text);
        return tone ? paint[tone](text) : text;
      }),
    );
  return `${table
    .toString()
    .split("\n")
    .map((l) => l.trimEnd())
    .join("\n")}\n`;
}

const BORDERLESS = {
  top: "",
  "top-mid": "",
  "top-left": "",
  "top-right": "",
  bottom: "",
  "bottom-mid": "",
  "bottom-left": "",
  "bottom-right": "",
  left: "",
  "left-mid": "",
  mid: "",
  "mid-mid": "",
  right: "",
  "right-mid": "",
  middle: "",
};

/** Tones for the states the hub's enumerations share. */
export function statusTone(text: string): Tone | undefined {
  if (/^(AVAILABLE|ALLOCATED|SUCCEEDED|active|ok|True)$/.test(text)) return "good";
  if (/^(FAILED|QUARANTINED|critical|failed|False)$/.test(text)) return "bad";
  if (/^(IMPAIRED|STALE|CANCELLING|CANCELLED|warning|offline)$/.test(text)) return "warn";
  return undefined;
}
