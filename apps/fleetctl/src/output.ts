/**
 * `-o table|wide|json|yaml|name|count` for every command that shows resources:
 *  - table / wide: aligned columns for people (wide adds columns), colour only on a terminal;
 *  - json / yaml: the API's representation, stable (a list is `{items, count}`, one resource is
 *    itself), what scripts read;
 *  - name: `<kind>/<name>` a line (kubectl's), for xargs;
 *  - count: the number the hub counted for the filters, for `wc -l` without fetching the items;
 *  - jsonpath=TEMPLATE / custom-columns=HEADER:.path,...: kubectl's (jsonpath.ts), over the
 *    json representation;
 *  - value: the openstack client's `-f value`, the table's cells without header, one space apart.
 * `-c COLUMN` (repeatable, openstack's) keeps those columns of table, wide and value, in that order.
 * Every human format (table, wide, name, custom-columns) shows source text terminal-safe
 * (terminal-text.ts); json, yaml and jsonpath print the exact data.
 */
import picocolors from "picocolors";
import { UsageError } from "./errors.ts";
import { checkTemplate, parseCustomColumns, printed, renderJsonpath, select } from "./jsonpath.ts";
import { terminalSafe } from "./terminal-text.ts";

export const OUTPUT_FORMATS = ["table", "wide", "json", "yaml", "name", "count", "value"] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number] | "jsonpath" | "custom-columns";
/** The formats that take a template after `=`, where a command offers every format. */
export const TEMPLATE_FORMATS = ["jsonpath", "custom-columns"] as const;

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
  /** --no-headers: tables without their header line. */
  noHeaders?: boolean;
  /** jsonpath / custom-columns: what follows the `=`. */
  template?: string;
  /** -c: the columns to show (table, wide, value), by header in any case, in this order. */
  columns?: string[];
}

/** The formats whose columns -c chooses. */
export const COLUMN_FORMATS: readonly OutputFormat[] = ["table", "wide", "value"];

/** -o and its alias --format (the runbook's spelling); -o wins when both are given. */
export function outputFormat(
  o: { output?: string; format?: string },
  allowed: readonly OutputFormat[] = OUTPUT_FORMATS,
): OutputFormat {
  return parseOutput(o, allowed).format;
}

/** The format and, for jsonpath / custom-columns, its template (checked here, before anything is sent). */
export function parseOutput(
  o: { output?: string; format?: string },
  allowed: readonly OutputFormat[] = OUTPUT_FORMATS,
): { format: OutputFormat; template?: string } {
  const f = o.output ?? o.format ?? "table";
  const eq = f.indexOf("=");
  const base = eq < 0 ? f : f.slice(0, eq);
  const templated = allowed === OUTPUT_FORMATS && (TEMPLATE_FORMATS as readonly string[]).includes(base);
  if (templated) {
    const template = f.slice(eq + 1);
    if (eq < 0 || !template) throw new UsageError(`-o ${base} needs a template: -o ${base}=...`);
    if (base === "jsonpath") checkTemplate(template);
    else parseCustomColumns(template);
    return { format: base as OutputFormat, template };
  }
  if (!(allowed as readonly string[]).includes(f))
    throw new UsageError(
      `output format ${JSON.stringify(f)} is not one of ${[...allowed, ...(allowed === OUTPUT_FORMATS ? ["jsonpath=...", "custom-columns=..."] : [])].join(", ")}`,
    );
  return { format: f as OutputFormat };
}

/** Colour on stdout only where a person reads it: a terminal, and NO_COLOR unset (no-color.org). */
export function colorWanted(stream: { isTTY?: boolean } = process.stdout, env = process.env): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== "") return false;
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== "" && env.FORCE_COLOR !== "0") return true;
  return Boolean(stream.isTTY) && env.TERM !== "dumb";
}

const cell = (v: unknown): string => (v === null || v === undefined || v === "" ? "-" : terminalSafe(String(v)));

/**
 * -o json: JSON.stringify escapes C0 controls; C1 controls and bidi overrides are escaped too
 * (`\u009b`), so `| jq`-less reading on a terminal is as safe, and the data parses back exact.
 */
export function jsonText(value: unknown): string {
  return `${JSON.stringify(value, null, 2).replace(
    /[\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  )}\n`;
}

/** kubectl's relative age (HumanDuration): 45s, 4m30s, 95m, 5h10m, 30h, 3d4h, 120d, 2y. */
export function age(since: string | Date | null | undefined, now = Date.now()): string | undefined {
  if (!since) return undefined;
  const s = Math.max(0, Math.floor((now - new Date(since).getTime()) / 1000));
  const m = Math.floor(s / 60);
  const h = Math.floor(m / 60);
  const d = Math.floor(h / 24);
  if (s < 120) return `${s}s`;
  if (m < 10) return s % 60 ? `${m}m${s % 60}s` : `${m}m`;
  if (m < 180) return `${m}m`;
  if (h < 8) return m % 60 ? `${h}h${m % 60}m` : `${h}h`;
  if (h < 48) return `${h}h`;
  if (h < 24 * 8) return h % 24 ? `${d}d${h % 24}h` : `${d}d`;
  if (d < 365 * 2) return `${d}d`;
  return `${Math.floor(d / 365)}y`;
}

/** `-o name`'s line: the kind and the name, terminal-safe. */
const nameLine = <T>(view: View<T>, item: T) => `${view.kind}/${terminalSafe(view.name(item))}\n`;

/** -o custom-columns: a table whose columns are the template's paths over the json representation. */
function customColumnsView<T>(view: View<T>, template: string): View<T> {
  return {
    ...view,
    columns: parseCustomColumns(template).map((c) => ({
      header: c.header,
      value: (item: T) => {
        const got = select(item, c.path);
        return got.length ? got.map(printed).join(",") : "<none>";
      },
    })),
  };
}

export async function renderList<T>(
  view: View<T>,
  page: { items: T[]; count: number },
  o: OutputOptions,
): Promise<string> {
  switch (o.format) {
    case "count":
      return `${page.count}\n`;
    case "json":
      return jsonText({ items: page.items, count: page.count });
    case "yaml":
      return (await import("./yaml-text.ts")).yamlText({ items: page.items, count: page.count });
    case "name":
      return page.items.map((i) => nameLine(view, i)).join("");
    case "jsonpath":
      return renderJsonpath(o.template ?? "", { items: page.items, count: page.count });
    case "custom-columns":
      return renderTable(customColumnsView(view, o.template ?? ""), page.items, o);
    default:
      return renderTable(view, page.items, o);
  }
}

export async function renderOne<T>(view: View<T>, item: T, o: OutputOptions): Promise<string> {
  switch (o.format) {
    case "json":
      return jsonText(item);
    case "yaml":
      return (await import("./yaml-text.ts")).yamlText(item);
    case "name":
      return nameLine(view, item);
    case "count":
      return "1\n";
    case "jsonpath":
      return renderJsonpath(o.template ?? "", item);
    case "custom-columns":
      return renderTable(customColumnsView(view, o.template ?? ""), [item], o);
    default:
      return renderTable(view, [item], o);
  }
}

/** The view's columns for this format: -o wide's extra ones, and -c's choice (a name it lacks is a usage error). */
function shownColumns<T>(view: View<T>, o: OutputOptions): Column<T>[] {
  if (!o.columns?.length) return view.columns.filter((c) => o.format === "wide" || !c.wide);
  return o.columns.map((name) => {
    const found = view.columns.find((c) => c.header.toLowerCase() === name.toLowerCase());
    if (!found)
      throw new UsageError(
        `no column ${JSON.stringify(name)}: ${view.kind} columns are ${view.columns.map((c) => c.header).join(", ")}`,
      );
    return found;
  });
}

/** -f value: the cells of each row, one space apart, no header and no colour (openstack's). */
function renderValues<T>(view: View<T>, items: T[], o: OutputOptions): string {
  const columns = shownColumns(view, o);
  return items.map((item) => `${columns.map((c) => cell(c.value(item))).join(" ")}\n`).join("");
}

/** kubectl-style columns: upper-case headers, no borders, two spaces between columns. */
export async function renderTable<T>(view: View<T>, items: T[], o: OutputOptions): Promise<string> {
  if (o.format === "value") return renderValues(view, items, o);
  const columns = shownColumns(view, o);
  if (!items.length) return "";
  const { default: Table } = await import("cli-table3");
  const table = new Table({
    head: o.noHeaders ? [] : columns.map((c) => (o.format === "custom-columns" ? c.header : c.header.toUpperCase())),
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
