/** `--scope`: the names people use for the hub's scopes, and lists of `fleet.*` scopes. */
import { FLEET_SCOPES } from "@fm/domain";
import { UsageError } from "./errors.ts";

/** Each scope includes the ones below it on the hub, so one scope names a level. */
export const SCOPE_ALIASES: Record<string, string> = {
  "read-only": "fleet.read",
  operate: "fleet.operate",
  admin: "fleet.admin",
};

/** The scopes to ask for, or undefined (all the caller may have) when --scope is not given. */
export function parseScopeOption(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  const words = value.split(/[\s,]+/).filter(Boolean);
  if (!words.length) throw new UsageError("--scope is empty");
  const scopes = words.map((w) => {
    const s = SCOPE_ALIASES[w] ?? w;
    if (!(FLEET_SCOPES as readonly string[]).includes(s))
      throw new UsageError(
        `--scope ${JSON.stringify(w)} is not a scope`,
        `use read-only, operate, admin, or a list of ${FLEET_SCOPES.join(", ")}`,
      );
    return s;
  });
  return [...new Set(scopes)];
}
