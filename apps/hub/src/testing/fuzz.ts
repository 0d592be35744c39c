/**
 * A schema-driven fuzzer of the hub's API: for every operation in /openapi.json it builds
 * requests from the operation's own schemas (path parameters, query, body), valid ones and
 * ones broken in the ways careless or hostile callers break them (wrong types, values past
 * their column, NUL bytes, lone surrogates, terminal escapes, huge strings, deep nesting, unknown fields), from a
 * seeded PRNG so that any failure is reproducible from its seed. What it checks is what a caller
 * sees: never a 5xx, and every 4xx a problem+json document.
 */

type Schema = Record<string, unknown>;
type OpenApi = { paths: Record<string, Record<string, Operation>>; components?: { schemas?: Record<string, Schema> } };
interface Operation {
  parameters?: { name: string; in: string; required?: boolean; schema?: Schema }[];
  requestBody?: { content?: Record<string, { schema?: Schema }> };
  responses?: Record<string, { content?: Record<string, unknown> }>;
}

export interface FuzzRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  payload?: string;
  /** The operation it exercises, as `METHOD /path/{param}`. */
  operation: string;
}
export interface FuzzResponse {
  statusCode: number;
  headers: Record<string, unknown>;
  body: string;
}
export interface FuzzFailure {
  request: FuzzRequest;
  status: number;
  reason: string;
  body: string;
}
export interface FuzzResult {
  seed: number;
  requests: number;
  operations: number;
  /** Operations of the document no request of the run reached (empty once requests >= operations). */
  unreached: string[];
  byStatus: Record<number, number>;
  failures: FuzzFailure[];
}

/** Values the fuzzer uses where a real one makes a request get further (ids of existing rows). */
export interface FuzzFixtures {
  /** Path parameter name -> existing values (e.g. `id` -> device, site and job ids). */
  params: Record<string, string[]>;
}

/** mulberry32: small, fast, and the same sequence for the same seed everywhere. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const NASTY_STRINGS = [
  "",
  " ",
  "a\u0000b",
  "\u0000",
  "\ud800",
  "x\udfff",
  "😀",
  "%00",
  "%E0%A4%A",
  "../../etc/passwd",
  "gpu\u001b[2J",
  "\u001b]52;c;cm0gLXJmIH4=\u0007",
  "x\u009b2J",
  "\u001ffm-renaming:00000000-0000-0000-0000-000000000000",
  "trailing ",
  "' OR 1=1 --",
  "<script>alert(1)</script>",
  "0000-01-01T00:00:00Z",
  "9999-12-31T23:59:59-14:00",
  "10000-01-01T00:00:00Z",
  "1970-01-01T00:00:00Z",
  "2147483648",
  "-1",
  "NaN",
  "null",
  "true",
  "gpu:8",
  "00000000-0000-0000-0000-000000000000",
  "ffffffff-ffff-ffff-ffff-ffffffffffff",
];
const NASTY_NUMBERS = [0, -1, 1, 2147483647, 2147483648, -2147483649, 9007199254740991, 1e308, -1e308, 0.5, 1e-9];

export function fuzz(
  doc: OpenApi,
  fixtures: FuzzFixtures,
  opts: { seed: number; requests: number },
): { operations: number; all: string[]; next: () => FuzzRequest } {
  const rand = prng(opts.seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const chance = (p: number) => rand() < p;
  const operations = Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops)
      .filter(([m]) => ["get", "post", "put", "patch", "delete"].includes(m))
      .map(([method, op]) => ({ path, method: method.toUpperCase(), op })),
  );

  const resolve = (s: Schema | undefined): Schema => {
    let cur = s ?? {};
    for (let i = 0; i < 10 && typeof cur.$ref === "string"; i++) {
      const name = cur.$ref.split("/").pop()!;
      cur = doc.components?.schemas?.[name] ?? {};
    }
    return cur;
  };

  const hex = (n: number) => Array.from({ length: n }, () => Math.floor(rand() * 16).toString(16)).join("");
  /** A UUIDv4 from the seeded sequence. */
  const uuid = () => `${hex(8)}-${hex(4)}-4${hex(3)}-${pick(["8", "9", "a", "b"])}${hex(3)}-${hex(12)}`;
  const randomString = (max = 40) =>
    Array.from({ length: Math.floor(rand() * max) }, () => String.fromCharCode(32 + Math.floor(rand() * 95))).join("");

  /** A value meant to satisfy `schema` (as far as a generator without a regex engine can). */
  function valid(schema: Schema | undefined, depth = 0): unknown {
    const s = resolve(schema);
    if (s.const !== undefined) return s.const;
    if (Array.isArray(s.enum)) return pick(s.enum);
    for (const k of ["anyOf", "oneOf"] as const)
      if (Array.isArray(s[k])) return valid(pick(s[k] as Schema[]), depth + 1);
    if (Array.isArray(s.allOf)) return valid((s.allOf as Schema[])[0], depth + 1);
    const type = Array.isArray(s.type) ? pick(s.type as string[]) : (s.type as string | undefined);
    switch (type) {
      case "null":
        return null;
      case "boolean":
        return chance(0.5);
      case "integer":
      case "number": {
        const min = typeof s.minimum === "number" ? s.minimum : 0;
        const max = typeof s.maximum === "number" ? s.maximum : min + 1000;
        const n = min + rand() * Math.min(max - min, 1e6);
        return type === "integer" ? Math.floor(n) : n;
      }
      case "string": {
        if (s.format === "uuid") return uuid();
        if (s.format === "date-time") return new Date(Date.now() - Math.floor(rand() * 1e9)).toISOString();
        const str = `fuzz-${Math.floor(rand() * 1e9).toString(36)}`;
        const max = typeof s.maxLength === "number" ? s.maxLength : 60;
        return str.slice(0, Math.max(max, 1));
      }
      case "array": {
        if (depth > 4) return [];
        const n = Math.floor(rand() * 3) + (typeof s.minItems === "number" ? s.minItems : 0);
        return Array.from({ length: n }, () => valid(s.items as Schema, depth + 1));
      }
      case "object":
      default: {
        if (depth > 4) return {};
        const props = (s.properties ?? {}) as Record<string, Schema>;
        const required = new Set((s.required as string[] | undefined) ?? []);
        const out: Record<string, unknown> = {};
        for (const [k, v] of Object.entries(props)) if (required.has(k) || chance(0.6)) out[k] = valid(v, depth + 1);
        return out;
      }
    }
  }

  /** Something a careless or hostile caller sends instead. */
  function nasty(depth = 0): unknown {
    switch (Math.floor(rand() * 9)) {
      case 0:
        return pick(NASTY_STRINGS);
      case 1:
        return pick(NASTY_NUMBERS);
      case 2:
        return randomString(chance(0.1) ? 5000 : 50);
      case 3:
        return null;
      case 4:
        return chance(0.5);
      case 5:
        return depth > 2 ? [] : [nasty(depth + 1), nasty(depth + 1)];
      case 6:
        return depth > 2 ? {} : { [pick(NASTY_STRINGS)]: nasty(depth + 1) };
      case 7:
        return "x".repeat(chance(0.2) ? 300_000 : 300);
      default: {
        // Deep nesting, to see recursion hold.
        let v: unknown = 1;
        for (let i = 0; i < 200; i++) v = [v];
        return v;
      }
    }
  }

  /** A valid value with one field somewhere replaced, removed or added. */
  function mutate(value: unknown, depth = 0): unknown {
    if (depth > 5 || value === null || typeof value !== "object" || chance(0.3)) return nasty();
    if (Array.isArray(value)) {
      if (!value.length) return [nasty()];
      const copy = [...value];
      const i = Math.floor(rand() * copy.length);
      copy[i] = mutate(copy[i], depth + 1);
      if (chance(0.1)) copy.push(copy[0]); // a repeat
      return copy;
    }
    const copy: Record<string, unknown> = { ...(value as Record<string, unknown>) };
    const keys = Object.keys(copy);
    const r = rand();
    if (r < 0.15 && keys.length) delete copy[pick(keys)];
    else if (r < 0.3) copy[pick(["extra", "__proto__", "constructor", "a\u0000b", "\ud800"])] = nasty();
    else if (keys.length) {
      const k = pick(keys);
      copy[k] = mutate(copy[k], depth + 1);
    }
    return copy;
  }

  function paramValue(name: string, schema: Schema | undefined): string {
    const known = fixtures.params[name];
    if (known?.length && chance(0.6)) return pick(known);
    if (chance(0.5)) return String(valid(schema));
    return String(nasty());
  }

  /** A path segment: percent-encoded, a lone surrogate as its WTF-8 bytes, or now and then raw. */
  function pathSegment(v: string): string {
    if (chance(0.1) && /^[\x21-\x7e]*$/.test(v) && !/[/?#]/.test(v)) return v;
    try {
      return encodeURIComponent(v);
    } catch {
      return `${encodeURIComponent(v.replace(/\p{Surrogate}/gu, ""))}%ED%A0%80`;
    }
  }

  // Every operation once first, in the document's order, then at random: a run of at least as
  // many requests as operations reaches each one.
  let sent = 0;
  function next(): FuzzRequest {
    const { path, method, op } = sent < operations.length ? operations[sent]! : pick(operations);
    sent++;
    let url = path.replace(/\{([^}]+)\}/g, (_, name: string) => {
      const p = op.parameters?.find((x) => x.in === "path" && x.name === name);
      return pathSegment(paramValue(name, p?.schema));
    });
    const query = new URLSearchParams();
    for (const p of op.parameters ?? []) {
      if (p.in !== "query" || !(p.required || chance(0.4))) continue;
      const v = chance(0.7) ? valid(p.schema) : nasty();
      query.append(p.name, typeof v === "object" ? JSON.stringify(v) : String(v));
    }
    if (chance(0.05)) query.append(pick(["limit", "cursor", "after", "wait"]), String(nasty()));
    if ([...query].length) url += `?${query.toString()}`;
    const headers: Record<string, string> = {};
    if (chance(0.05)) headers["if-match"] = pick(['"1"', "*", "garbage", '"\u00ff"']);
    if (chance(0.05) && method !== "GET") headers["idempotency-key"] = pick(["k1", "", "x".repeat(300), "ü"]);
    const bodySchema = op.requestBody?.content?.["application/json"]?.schema;
    let payload: string | undefined;
    if (bodySchema || (method !== "GET" && method !== "DELETE" && chance(0.1))) {
      const body = chance(0.25) ? valid(bodySchema) : mutate(valid(bodySchema));
      payload = chance(0.03) ? pick(["{", "[]", '"x"', "null", '{"a":1,}']) : JSON.stringify(body);
      if (payload !== undefined) headers["content-type"] = chance(0.03) ? "text/plain" : "application/json";
    }
    return { method, url, headers, ...(payload !== undefined ? { payload } : {}), operation: `${method} ${path}` };
  }

  return { operations: operations.length, all: operations.map((o) => `${o.method} ${o.path}`), next };
}

/**
 * What the fuzz run checks of each answer: no 5xx, and every 4xx problem+json, or of a media type
 * the operation's document declares for that status (the token endpoint's RFC 6749 errors are
 * application/json).
 */
export function checkResponse(res: FuzzResponse, declared: readonly string[] = []): string | undefined {
  // Shedding load is an answer, not a failure: a 503 problem with Retry-After.
  const shed =
    res.statusCode === 503 &&
    res.headers["retry-after"] !== undefined &&
    String(res.headers["content-type"] ?? "").startsWith("application/problem+json");
  if (res.statusCode >= 500 && !shed) return `status ${res.statusCode}`;
  const type = String(res.headers["content-type"] ?? "");
  if (res.statusCode >= 400 && ![...declared, "application/problem+json"].some((t) => type.startsWith(t)))
    return `${res.statusCode} without problem+json`;
  return undefined;
}

/** Sends `count` fuzzed requests through `send`, `concurrency` at a time; collects failures. */
export async function runFuzz(
  doc: OpenApi,
  fixtures: FuzzFixtures,
  opts: { seed: number; requests: number; concurrency?: number },
  send: (req: FuzzRequest) => Promise<FuzzResponse>,
): Promise<FuzzResult> {
  const gen = fuzz(doc, fixtures, opts);
  // Generated up front: the same seed gives the same requests whatever order answers arrive in.
  const requests = Array.from({ length: opts.requests }, gen.next);
  const reached = new Set<string>();
  const result: FuzzResult = {
    seed: opts.seed,
    requests: 0,
    operations: gen.operations,
    unreached: [],
    byStatus: {},
    failures: [],
  };
  const worker = async () => {
    while (result.requests < requests.length) {
      const request = requests[result.requests++]!;
      const res = await send(request);
      reached.add(request.operation);
      result.byStatus[res.statusCode] = (result.byStatus[res.statusCode] ?? 0) + 1;
      const [method, path] = request.operation.split(" ") as [string, string];
      const documented = doc.paths[path]?.[method.toLowerCase()]?.responses?.[String(res.statusCode)]?.content;
      const reason = checkResponse(res, Object.keys(documented ?? {}));
      if (reason) result.failures.push({ request, status: res.statusCode, reason, body: res.body.slice(0, 500) });
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency ?? 4 }, worker));
  result.unreached = gen.all.filter((o) => !reached.has(o));
  return result;
}

/** One line per distinct failure (operation and reason), with one request that shows it. */
export function distinctFailures(result: FuzzResult): string[] {
  const distinct = new Map<string, string>();
  for (const f of result.failures) {
    const key = `${f.request.method} ${f.request.url.split("?")[0]!.replace(/[0-9a-f-]{36}/g, "{id}")}: ${f.reason}`;
    if (!distinct.has(key))
      distinct.set(key, `${key} <- ${JSON.stringify(f.request).slice(0, 300)} -> ${f.body.slice(0, 200)}`);
  }
  return [...distinct.values()];
}
