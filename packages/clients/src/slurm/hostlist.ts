/** Expands a Slurm hostlist: "gpu[001-003,007],login1" -> gpu001, gpu002, gpu003, gpu007, login1. */
export function expandHostlist(expr: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  const items: string[] = [];
  for (let i = 0; i <= expr.length; i++) {
    const c = expr[i];
    if (c === "[") depth++;
    else if (c === "]") depth--;
    else if ((c === "," && depth === 0) || i === expr.length) {
      const item = expr.slice(start, i).trim();
      if (item) items.push(item);
      start = i + 1;
    }
  }
  for (const item of items) out.push(...expandItem(item));
  return out;
}

function expandItem(item: string): string[] {
  const m = /^([^[]*)\[([^\]]*)\](.*)$/.exec(item);
  if (!m) return [item];
  const [, prefix, ranges, rest] = m as unknown as [string, string, string, string];
  const tails = expandItem(rest);
  const out: string[] = [];
  for (const range of ranges.split(",")) {
    const [lo, hi] = range.split("-");
    if (lo === undefined || !/^\d+$/.test(lo) || (hi !== undefined && !/^\d+$/.test(hi))) return [item]; // not a range we understand
    const width = lo.length;
    for (let n = Number(lo); n <= Number(hi ?? lo); n++) {
      for (const tail of tails) out.push(`${prefix}${String(n).padStart(width, "0")}${tail}`);
    }
  }
  return out;
}
