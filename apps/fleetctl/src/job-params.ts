/**
 * A job creation from the command line, checked against the domain's per-kind schema before
 * anything is sent: `--param key=value` (the value read as JSON when it is JSON, so
 * `durationMinutes=30` is a number and `image=ubuntu` a string) and `--params '{...}'`.
 */
import { JOB_KINDS, JOB_PARAMS, type JobKind } from "@fm/domain";
import { UsageError } from "./errors.ts";

export function parseJobKind(value: string): JobKind {
  const kind = value.toUpperCase().replace(/-/g, "_");
  if (!(JOB_KINDS as readonly string[]).includes(kind))
    throw new UsageError(`--kind ${JSON.stringify(value)} is not a job kind`, `kinds: ${JOB_KINDS.join(", ")}`);
  return kind as JobKind;
}

function paramValue(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** The params object from --params and --param (a --param overrides the same key of --params). */
export function parseJobParams(
  kind: JobKind,
  params: string | undefined,
  param: string[] = [],
): Record<string, unknown> {
  let out: Record<string, unknown> = {};
  if (params !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(params);
    } catch {
      throw new UsageError("--params is not JSON");
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
      throw new UsageError("--params must be a JSON object");
    out = { ...(parsed as Record<string, unknown>) };
  }
  for (const p of param) {
    const eq = p.indexOf("=");
    if (eq < 1) throw new UsageError(`--param ${JSON.stringify(p)} is not key=value`);
    out[p.slice(0, eq)] = paramValue(p.slice(eq + 1));
  }
  const checked = JOB_PARAMS[kind].safeParse(out);
  if (!checked.success)
    throw new UsageError(
      `invalid params for ${kind}: ${checked.error.issues
        .map((i) => {
          const key = i.path.map(String).join(".");
          const message = i.code === "unrecognized_keys" ? `unknown param ${i.keys.join(", ")}` : i.message;
          return key ? `${key}: ${message}` : message;
        })
        .join("; ")}`,
      describeParams(kind),
    );
  return out;
}

/** The kind's params, from its schema: what `--param` accepts. */
export function describeParams(kind: JobKind): string {
  const shape = (
    JOB_PARAMS[kind] as unknown as { shape: Record<string, { safeParse(v: unknown): { success: boolean } }> }
  ).shape;
  const keys = Object.keys(shape).map((k) => (shape[k]!.safeParse(undefined).success ? `${k}?` : k));
  return keys.length ? `${kind} takes: ${keys.join(", ")}` : `${kind} takes no params`;
}
