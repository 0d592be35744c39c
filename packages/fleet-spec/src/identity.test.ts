import { describe, expect, it } from "vitest";
import { resolveIdentity, type NebiusConfig } from "./identity.ts";

const config: NebiusConfig = {
  default: "main",
  profiles: {
    main: { "tenant-id": "tenant-e00main0001" },
    second: { "tenant-id": "tenant-e00second01" },
    broken: { endpoint: "api.nebius.cloud" },
  },
};

describe("resolveIdentity", () => {
  it.each<[string, Parameters<typeof resolveIdentity>[0], unknown]>([
    [
      "the spec's tenant, the active profile (of that tenant) for calls",
      { specTenantId: "tenant-e00main0001", specProfile: "", config },
      { tenantId: "tenant-e00main0001", profile: "", tenantFrom: "spec" },
    ],
    [
      "the spec's tenant, an active profile that names no tenant",
      { specTenantId: "tenant-e00spec0001", specProfile: "", config: { ...config, default: "broken" } },
      { tenantId: "tenant-e00spec0001", profile: "", tenantFrom: "spec" },
    ],
    [
      "no tenant in the spec: the active profile's",
      { specTenantId: "", specProfile: "", config },
      { tenantId: "tenant-e00main0001", profile: "main", tenantFrom: "profile" },
    ],
    [
      "the spec's profile, never the active one",
      { specTenantId: "", specProfile: "second", config },
      { tenantId: "tenant-e00second01", profile: "second", tenantFrom: "profile" },
    ],
    [
      "--nebius-profile wins over the spec's",
      { specTenantId: "", specProfile: "main", cliProfile: "second", config },
      { tenantId: "tenant-e00second01", profile: "second", tenantFrom: "profile" },
    ],
    [
      "a spec tenant that agrees with the profile",
      { specTenantId: "tenant-e00second01", specProfile: "second", config },
      { tenantId: "tenant-e00second01", profile: "second", tenantFrom: "profile" },
    ],
    [
      "the spec's tenant with no Nebius config at all",
      { specTenantId: "tenant-e00spec0001", specProfile: "", config: undefined },
      { tenantId: "tenant-e00spec0001", profile: "", tenantFrom: "spec" },
    ],
  ])("%s", (_, input, identity) => {
    expect(resolveIdentity(input)).toEqual({ ok: true, identity });
  });

  it.each<[string, Parameters<typeof resolveIdentity>[0], string]>([
    [
      "a profile without a tenant-id is a hard error",
      { specTenantId: "", specProfile: "broken", config },
      "the Nebius profile broken has no tenant-id: refusing to guess the tenant",
    ],
    [
      "even when the spec names a tenant",
      { specTenantId: "tenant-e00spec0001", specProfile: "broken", config },
      "the Nebius profile broken has no tenant-id: refusing to guess the tenant",
    ],
    [
      "an unknown profile",
      { specTenantId: "", specProfile: "", cliProfile: "nope", config },
      "the Nebius profile nope is not in ~/.nebius/config.yaml",
    ],
    [
      "a name every object has is no profile",
      { specTenantId: "", specProfile: "", cliProfile: "constructor", config },
      "the Nebius profile constructor is not in ~/.nebius/config.yaml",
    ],
    [
      "a spec tenant the profile disagrees with",
      { specTenantId: "tenant-e00spec0001", specProfile: "main", config },
      "the spec's tenant_id tenant-e00spec0001 is not the tenant of profile main (tenant-e00main0001)",
    ],
    [
      "a spec tenant the active profile disagrees with",
      { specTenantId: "tenant-e00spec0001", specProfile: "", config },
      "the spec's tenant_id tenant-e00spec0001 is not the tenant of the active Nebius profile main (tenant-e00main0001): name the profile to act as",
    ],
    [
      "no tenant anywhere",
      { specTenantId: "", specProfile: "", config: undefined },
      "no tenant: the spec's tenant_id is empty and there is no active Nebius profile",
    ],
    [
      "an active profile without a tenant-id",
      { specTenantId: "", specProfile: "", config: { ...config, default: "broken" } },
      "the active Nebius profile broken has no tenant-id: refusing to guess the tenant",
    ],
  ])("%s", (_, input, message) => {
    expect(resolveIdentity(input)).toEqual({ ok: false, message });
  });
});
