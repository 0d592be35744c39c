/**
 * Text the hub will not store, refused at the door: what PostgreSQL cannot store, U+0000 (text
 * and jsonb reject it) and lone UTF-16 surrogates (jsonb rejects them; JSON allows `"\ud800"`),
 * and the control characters (`CONTROL_CHARACTER`: C0 but TAB/LF/CR, DEL, C1) that would drive
 * the terminal of whoever later prints the text (`fleetctl`, `psql`, a log viewer). One check of
 * every string, and every object key, of the body, the query and the path parameters of every
 * route, before any schema or service sees them: a 400 naming the field instead of a 500 from
 * the database or an escape sequence in an operator's terminal, wherever the string would have gone.
 */
import fp from "fastify-plugin";
import type { FastifyInstance } from "fastify";
import { BadRequest, CONTROL_CHARACTER } from "@fm/domain";

/** In a `u` regex a surrogate pair is one code point: only an unpaired surrogate matches. */
const UNSTORABLE = new RegExp(`[\\0\\p{Surrogate}]|${CONTROL_CHARACTER.source}`, "u");
/** Any NUL, control or surrogate code unit, paired or not: a quick test most strings pass at once. */
const SUSPECT = new RegExp(`[\\0\\uD800-\\uDFFF]|${CONTROL_CHARACTER.source}`);
const storable = (s: string): boolean => !SUSPECT.test(s) || !UNSTORABLE.test(s);

/** Whether any string or key in `value` is not storable: the walk every request pays, kept lean. */
function hasUnstorable(v: unknown): boolean {
  if (typeof v === "string") return !storable(v);
  if (v === null || typeof v !== "object") return false;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) if (hasUnstorable(v[i])) return true;
    return false;
  }
  for (const k in v) if (!storable(k) || hasUnstorable((v as Record<string, unknown>)[k])) return true;
  return false;
}

/** The path of the first string (or key) in `value` that is not storable, or undefined. */
export function firstUnstorable(value: unknown): string[] | undefined {
  if (!hasUnstorable(value)) return undefined;
  const path: string[] = [];
  // One path stack for the whole walk: a 50,000-item push is not 50,000 path copies.
  const walk = (v: unknown): boolean => {
    if (typeof v === "string") return !storable(v);
    if (v === null || typeof v !== "object") return false;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        path.push(String(i));
        if (walk(v[i])) return true;
        path.pop();
      }
      return false;
    }
    for (const k in v) {
      if (!storable(k)) {
        path.push(k.replace(new RegExp(UNSTORABLE, "gu"), "?"));
        return true;
      }
      path.push(k);
      if (walk((v as Record<string, unknown>)[k])) return true;
      path.pop();
    }
    return false;
  };
  return walk(value) ? path : undefined;
}

/**
 * Bodies the JSON parser found free of `\u` escapes and of raw DEL and C1 characters. Such a body
 * holds nothing refused: JSON allows no raw C0 character in a string, and text decoded from
 * UTF-8 has no unpaired surrogate (an invalid sequence decodes to U+FFFD). Its walk is skipped:
 * a 10,000-item push is 2.4 MB of strings.
 */
export const storableBodies = new WeakSet<object>();

export const textInputPlugin = fp(
  async (app: FastifyInstance) => {
    app.addHook("preValidation", async (request) => {
      for (const [part, value] of [
        ["params", request.params],
        ["querystring", request.query],
        ["body", request.body],
      ] as const) {
        if (part === "body" && typeof value === "object" && value !== null && storableBodies.has(value)) continue;
        const at = firstUnstorable(value);
        if (at) {
          const path = [part, ...at].join(".");
          const message =
            "must not contain U+0000, an unpaired UTF-16 surrogate or a control character (ESC, BEL, DEL, C1, …)";
          throw new BadRequest("validation_failed", `${path}: ${message}`, { errors: [{ path, message }] });
        }
      }
    });
  },
  { name: "text-input" },
);
