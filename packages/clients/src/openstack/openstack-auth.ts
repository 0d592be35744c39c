/**
 * A cloud from a clouds.yaml (clouds-yaml.ts) turned into an IronicClient: for `none` at its
 * endpoint; for `v3applicationcredential` with a Keystone token (keystone.ts), Ironic's endpoint
 * taken from the token's service catalog (`baremetal`, for `interface` (default public) and
 * `region_name`) unless `baremetal_endpoint_override` is set.
 */
import { IronicClient, type IronicClientOptions } from "../ironic/ironic-client.ts";
import { NovaClient, type NovaClientOptions } from "../nova/nova-client.ts";
import { CloudConfigError, type Cloud } from "./clouds-yaml.ts";
import { KeystoneSession, catalogEndpoint, type KeystoneSessionOptions } from "./keystone.ts";

export type IronicClientForOptions = Omit<IronicClientOptions, "endpoint" | "token" | "invalidateToken"> & {
  /** Keystone's per-request timeout and token refresh margin; `now` is the clock (tests). */
  keystone?: Pick<KeystoneSessionOptions, "refreshMarginMs" | "timeoutMs" | "now">;
};

/**
 * An IronicClient for a cloud. For an application credential this authenticates once, now,
 * so that a wrong credential or a catalog without Ironic fails at startup rather than on the
 * first sync; the endpoint is taken from that first token's catalog, and the token is
 * refreshed behind the client's back from then on.
 */
export async function ironicClientFor(cloud: Cloud, options: IronicClientForOptions = {}): Promise<IronicClient> {
  return (await openstackFor(cloud, options)).ironic;
}

/**
 * As ironicClientFor, with the cloud's Keystone session beside the client (undefined for
 * `auth_type: none`), for what else a caller asks Keystone (a project's id by name).
 */
export async function openstackFor(
  cloud: Cloud,
  options: IronicClientForOptions = {},
): Promise<{ ironic: IronicClient; keystone: KeystoneSession | undefined }> {
  const { keystone, ...clientOptions } = options;
  if (cloud.authType === "none")
    return { ironic: new IronicClient({ ...clientOptions, endpoint: cloud.endpoint }), keystone: undefined };
  const session = new KeystoneSession({
    authUrl: cloud.authUrl,
    credential: cloud.credential,
    fetch: clientOptions.fetch,
    ...keystone,
  });
  const catalog = await session.catalog();
  let endpoint = cloud.endpointOverride;
  try {
    endpoint ??= catalogEndpoint(catalog, "baremetal", cloud.interface, cloud.regionName);
  } catch (err) {
    if (err instanceof CloudConfigError)
      throw new CloudConfigError(`cloud ${JSON.stringify(cloud.name)} in ${cloud.file}: ${err.message}`);
    throw err;
  }
  const ironic = new IronicClient({
    ...clientOptions,
    endpoint,
    token: () => session.token(),
    invalidateToken: () => session.invalidate(),
  });
  return { ironic, keystone: session };
}

/**
 * A NovaClient for a cloud: the `compute` endpoint of its token's catalog (for `interface` and
 * `region_name`) with the cloud's application credential, whose project is the one servers are
 * made in. Authenticates now, so a wrong credential or a catalog without Nova fails at start.
 * `auth_type: none` has no Nova: Nova always sits behind Keystone. The token's project comes back
 * beside the client, for the caller to check it is the one it means to create servers in.
 */
export async function novaClientFor(
  cloud: Cloud,
  options: Omit<NovaClientOptions, "endpoint" | "token" | "invalidateToken"> & IronicClientForOptions = {},
): Promise<{ nova: NovaClient; project: { id: string; name: string } | undefined }> {
  if (cloud.authType === "none")
    throw new CloudConfigError(
      `cloud ${JSON.stringify(cloud.name)} in ${cloud.file}: Nova needs Keystone (auth_type v3applicationcredential), not auth_type none`,
    );
  const { keystone, ...clientOptions } = options;
  const session = new KeystoneSession({
    authUrl: cloud.authUrl,
    credential: cloud.credential,
    fetch: clientOptions.fetch,
    ...keystone,
  });
  let endpoint: string;
  try {
    endpoint = catalogEndpoint(await session.catalog(), "compute", cloud.interface, cloud.regionName);
  } catch (err) {
    if (err instanceof CloudConfigError)
      throw new CloudConfigError(`cloud ${JSON.stringify(cloud.name)} in ${cloud.file}: ${err.message}`);
    throw err;
  }
  const nova = new NovaClient({
    ...clientOptions,
    endpoint,
    token: () => session.token(),
    invalidateToken: () => session.invalidate(),
  });
  return { nova, project: await session.project() };
}
