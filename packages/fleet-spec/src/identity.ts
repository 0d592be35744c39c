/**
 * Which tenant a fleet deploys into, and as whom. The Nebius CLI keeps profiles in
 * `~/.nebius/config.yaml` (`default: <name>`, `profiles: {<name>: {tenant-id, parent-id,
 * endpoint, ...}}`, as `nebius profile create --tenant-id …` writes it: docs.nebius.com/cli/configure).
 *
 * A named profile (the command line's wins over the spec's) is authoritative: the tenant comes
 * from *that* profile, never the active one, and a profile without a tenant-id is a hard error
 * rather than a silent deploy into the wrong tenant. A spec tenant_id that disagrees with the
 * profile is refused too.
 */
import { z } from "zod";

export const NebiusConfigSchema = z.looseObject({
  default: z.string().optional(),
  profiles: z.record(z.string(), z.looseObject({ "tenant-id": z.string().optional() }).nullable()).default({}),
});
export type NebiusConfig = z.output<typeof NebiusConfigSchema>;

export interface Identity {
  tenantId: string;
  /** The profile every `nebius` call runs with; empty: the CLI's active profile. */
  profile: string;
  tenantFrom: "spec" | "profile";
}

export type IdentityResult = { ok: true; identity: Identity } | { ok: false; message: string };

export function resolveIdentity(input: {
  specTenantId: string;
  specProfile: string;
  /** `--nebius-profile`, which wins over the spec's profile. */
  cliProfile?: string | undefined;
  /** The parsed ~/.nebius/config.yaml; undefined when there is none. */
  config: NebiusConfig | undefined;
}): IdentityResult {
  const named = input.cliProfile || input.specProfile;
  const profiles = input.config?.profiles ?? {};
  if (named) {
    if (!Object.hasOwn(profiles, named))
      return { ok: false, message: `the Nebius profile ${named} is not in ~/.nebius/config.yaml` };
    const tenant = profiles[named]?.["tenant-id"] ?? "";
    if (!tenant)
      return { ok: false, message: `the Nebius profile ${named} has no tenant-id: refusing to guess the tenant` };
    if (input.specTenantId && input.specTenantId !== tenant)
      return {
        ok: false,
        message: `the spec's tenant_id ${input.specTenantId} is not the tenant of profile ${named} (${tenant})`,
      };
    return { ok: true, identity: { tenantId: tenant, profile: named, tenantFrom: "profile" } };
  }
  const active = input.config?.default;
  if (input.specTenantId) {
    // The calls run as the active profile: one of another tenant could only read the wrong tenant, or nothing.
    const activeTenant = active ? (profiles[active]?.["tenant-id"] ?? "") : "";
    if (activeTenant && activeTenant !== input.specTenantId)
      return {
        ok: false,
        message: `the spec's tenant_id ${input.specTenantId} is not the tenant of the active Nebius profile ${active} (${activeTenant}): name the profile to act as`,
      };
    return { ok: true, identity: { tenantId: input.specTenantId, profile: "", tenantFrom: "spec" } };
  }
  if (!active)
    return { ok: false, message: "no tenant: the spec's tenant_id is empty and there is no active Nebius profile" };
  const tenant = profiles[active]?.["tenant-id"] ?? "";
  if (!tenant)
    return { ok: false, message: `the active Nebius profile ${active} has no tenant-id: refusing to guess the tenant` };
  return { ok: true, identity: { tenantId: tenant, profile: active, tenantFrom: "profile" } };
}
