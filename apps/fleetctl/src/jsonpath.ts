/**
 * The part of kubectl's JSONPath templates (kubectl.docs: "JSONPath Support") fleetctl takes
 * for `-o jsonpath=…` and `-o custom-columns=…`: fields `{.a.b}`, indices `{.items[0]}`,
 * wildcards `{.items[*].name}`, `{range .items[*]}…{end}`, quoted literals `{"\n"}`, and `@`
 * (the current object). Anything else is a usage error naming the expression.
 */
import { UsageError } from "./errors.ts";

type Step = { key: string } | { index: number } | { all: true };

function parsePath(expr: string): Step[] {
  const src = expr.trim();
  if (src === "@" || src === "." || src === "$") return [];
  let rest = src.startsWith("$") ? src.slice(1) : src.startsWith("@") ? src.slice(1) : src;
  if (!rest.startsWith(".") && !rest.startsWith("[")) rest = `.${rest}`;
  const steps: Step[] = [];
  const re = /^(?:\.([A-Za-z_][\w-]*)|\.\*|\[(\d+|\*)\]|\['([^']*)'\])/;
  while (rest) {
    const m = re.exec(rest);
    if (!m) throw new UsageError(`jsonpath: cannot read ${JSON.stringify(expr)} at ${JSON.stringify(rest)}`);
    if (m[1] !== undefined) steps.push({ key: m[1] });
    else if (m[3] !== undefined) steps.push({ key: m[3] });
    else if (m[2] === undefined || m[2] === "*") steps.push({ all: true });
    else steps.push({ index: Number(m[2]) });
    rest = rest.slice(m[0].length);
  }
  return steps;
}

/** Every value the path selects from `data` (a wildcard selects many; a missing field none). */
export function select(data: unknown, expr: string): unknown[] {
  let values: unknown[] = [data];
  for (const step of parsePath(expr)) {
    const next: unknown[] = [];
    for (const v of values) {
      if (v === null || typeof v !== "object") continue;
      if ("all" in step) next.push(...(Array.isArray(v) ? v : Object.values(v)));
      else if ("index" in step) {
        if (Array.isArray(v) && step.index < v.length) next.push(v[step.index]);
      } else if (!Array.isArray(v) && step.key in v) next.push((v as Record<string, unknown>)[step.key]);
    }
    values = next;
  }
  return values;
}

/** A selected value as kubectl prints it: strings bare, the rest as JSON. */
export const printed = (v: unknown): string => (typeof v === "string" ? v : JSON.stringify(v));

type Node = { text: string } | { path: string } | { range: string; body: Node[] };

function parseTemplate(template: string): Node[] {
  const root: Node[] = [];
  const stack: Node[][] = [root];
  const top = () => stack[stack.length - 1]!;
  let i = 0;
  while (i < template.length) {
    const open = template.indexOf("{", i);
    if (open < 0) {
      top().push({ text: template.slice(i) });
      break;
    }
    if (open > i) top().push({ text: template.slice(i, open) });
    const close = closingBrace(template, open);
    if (close < 0) throw new UsageError(`jsonpath: unclosed "{" in ${JSON.stringify(template)}`);
    const inner = template.slice(open + 1, close).trim();
    if (/^".*"$/s.test(inner) || /^'.*'$/s.test(inner)) top().push({ text: unquote(inner.slice(1, -1)) });
    else if (inner.startsWith("range ")) {
      const body: Node[] = [];
      top().push({ range: inner.slice(6).trim(), body });
      stack.push(body);
    } else if (inner === "end") {
      if (stack.length === 1) throw new UsageError(`jsonpath: {end} without {range} in ${JSON.stringify(template)}`);
      stack.pop();
    } else {
      parsePath(inner); // a bad expression is refused before anything is fetched or printed
      top().push({ path: inner });
    }
    i = close + 1;
  }
  if (stack.length > 1) throw new UsageError(`jsonpath: {range} without {end} in ${JSON.stringify(template)}`);
  return root;
}

function closingBrace(s: string, open: number): number {
  let quote: string | undefined;
  for (let i = open + 1; i < s.length; i++) {
    const c = s[i];
    if (quote) {
      if (c === "\\") i++;
      else if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === "}") return i;
  }
  return -1;
}

const unquote = (s: string) =>
  s.replace(/\\(.)/g, (_, c: string) => ({ n: "\n", t: "\t", r: "\r", "\\": "\\", '"': '"', "'": "'" })[c] ?? c);

/** Checks a template's syntax (a usage error before anything is sent). */
export function checkTemplate(template: string): void {
  parseTemplate(template);
}

export function renderJsonpath(template: string, data: unknown): string {
  const run = (nodes: Node[], ctx: unknown): string =>
    nodes
      .map((n) => {
        if ("text" in n) return n.text;
        if ("path" in n) return select(ctx, n.path).map(printed).join(" ");
        return select(ctx, n.range)
          .map((v) => run(n.body, v))
          .join("");
      })
      .join("");
  return run(parseTemplate(template), data);
}

export interface CustomColumn {
  header: string;
  path: string;
}

/** `NAME:.name,SITE:.site.slug` (kubectl's custom-columns; braces around a path are allowed). */
export function parseCustomColumns(spec: string): CustomColumn[] {
  const columns = spec.split(",").map((part) => {
    const at = part.indexOf(":");
    if (at <= 0 || at === part.length - 1)
      throw new UsageError(
        `custom-columns: ${JSON.stringify(part)} is not HEADER:.path (e.g. NAME:.name,SITE:.site.slug)`,
      );
    const path = part
      .slice(at + 1)
      .trim()
      .replace(/^\{(.*)\}$/, "$1");
    parsePath(path);
    return { header: part.slice(0, at).trim(), path };
  });
  if (!columns.length) throw new UsageError("custom-columns: no column given");
  return columns;
}
