/**
 * OpenStack credentials from a clouds.yaml file (the format openstacksdk and the `openstack`
 * CLI read: https://docs.openstack.org/openstacksdk/latest/user/config/configuration.html),
 * turned into an IronicClient.
 *
 * Two auth types are supported:
 * - `none`: a standalone Ironic without Keystone. The endpoint is
 *   `baremetal_endpoint_override`, else `auth.endpoint`.
 * - `v3applicationcredential`: a Keystone application credential, by `application_credential_id`,
 *   or by `application_credential_name` plus the owning user (`user_id`, or `username` with
 *   `user_domain_name`/`user_domain_id`). The token comes from Keystone v3, and Ironic's
 *   endpoint from the token's service catalog (`baremetal`, for `interface` (default public)
 *   and `region_name`) unless `baremetal_endpoint_override` is set.
 *
 * Secrets never appear in error messages, and a loaded cloud prints its secret as
 * "[redacted]" (JSON, util.inspect, string conversion), so logging a config is safe.
 */
import { readFileSync } from "node:fs";
import { inspect } from "node:util";
import { parseDocument } from "yaml";
import { z } from "zod";
import { IronicClient, type IronicClientOptions } from "../ironic/ironic-client.ts";

/** The file is unreadable, is not a clouds.yaml, or the cloud asked for is missing or incomplete. */
export class CloudConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CloudConfigError";
  }
}

/** Keystone refused the credential (`status` 401), answered unexpectedly, or could not be reached (`status` undefined). */
export class KeystoneAuthError extends Error {
  constructor(
    message: string,
    readonly status: number | undefined,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "KeystoneAuthError";
  }
}

/** A secret that does not print itself. */
export class Secret {
  readonly #value: string;
  constructor(value: string) {
    this.#value = value;
  }
  reveal(): string {
    return this.#value;
  }
  toString(): string {
    return "[redacted]";
  }
  toJSON(): string {
    return "[redacted]";
  }
  [inspect.custom](): string {
    return "[redacted]";
  }
}

export type EndpointInterface = "public" | "internal" | "admin";

interface CloudBase {
  /** The cloud's key under `clouds:`. */
  name: string;
  /** The clouds.yaml it came from. */
  file: string;
  regionName?: string;
  interface: EndpointInterface;
}

export interface NoAuthCloud extends CloudBase {
  authType: "none";
  endpoint: string;
}

export interface ApplicationCredentialCloud extends CloudBase {
  authType: "v3applicationcredential";
  authUrl: string;
  credential:
    | { id: string; secret: Secret }
    | {
        name: string;
        user: { id: string } | { name: string; domain: { id: string } | { name: string } };
        secret: Secret;
      };
  /** `baremetal_endpoint_override`: use this instead of the catalog's endpoint. */
  endpointOverride?: string;
}

export type Cloud = NoAuthCloud | ApplicationCredentialCloud;

export const SUPPORTED_AUTH_TYPES = ["none", "v3applicationcredential"] as const;

/**
 * Reads one cloud from a clouds.yaml. `cloudName` picks it (callers pass their `--cloud`
 * option or `OS_CLOUD`); without one, the file must hold exactly one cloud. Only the file and
 * the cloud are validated here; Keystone is first contacted by ironicClientFor().
 */
export function loadCloud(file: string, cloudName?: string): Cloud {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new CloudConfigError(
      `cannot read clouds file ${file}: ${code === "ENOENT" ? "no such file" : (code ?? String(err))}`,
    );
  }
  // The parser's own messages quote the offending source line, which may hold a secret: only
  // its error code and position are reported.
  const doc = parseDocument(text, { prettyErrors: false });
  const yamlError = doc.errors[0];
  if (yamlError) {
    const before = text.slice(0, yamlError.pos[0]).split("\n");
    throw new CloudConfigError(
      `cannot parse clouds file ${file}: invalid YAML (${yamlError.code} at line ${before.length}, column ${before.at(-1)!.length + 1})`,
    );
  }
  const root: unknown = doc.toJS();
  const clouds = isRecord(root) ? root.clouds : undefined;
  if (!isRecord(clouds)) throw new CloudConfigError(`clouds file ${file} has no \`clouds:\` map`);
  const names = Object.keys(clouds);
  const available = names.length ? names.map((n) => JSON.stringify(n)).join(", ") : "none";
  let name: string;
  if (cloudName !== undefined && cloudName !== "") {
    if (!Object.hasOwn(clouds, cloudName))
      throw new CloudConfigError(`cloud ${JSON.stringify(cloudName)} is not in ${file}; available: ${available}`);
    name = cloudName;
  } else if (names.length === 1) {
    name = names[0]!;
  } else {
    throw new CloudConfigError(
      `${file} holds ${names.length ? "several clouds" : "no cloud"}: name one (--cloud or OS_CLOUD); available: ${available}`,
    );
  }
  return parseCloud(clouds[name], name, file);
}

function parseCloud(entry: unknown, name: string, file: string): Cloud {
  const where = `cloud ${JSON.stringify(name)} in ${file}`;
  if (!isRecord(entry)) throw new CloudConfigError(`${where} is not a map`);
  const auth = entry.auth === undefined ? {} : entry.auth;
  if (!isRecord(auth)) throw new CloudConfigError(`${where}: \`auth\` is not a map`);
  // Values are never echoed: a mistyped key may hold a secret.
  const str = (obj: Record<string, unknown>, key: string, label: string): string | undefined => {
    const v = obj[key];
    if (v === undefined || v === null || v === "") return undefined;
    if (typeof v !== "string") throw new CloudConfigError(`${where}: \`${label}\` must be a string`);
    return v;
  };
  const required = (obj: Record<string, unknown>, key: string, label: string): string => {
    const v = str(obj, key, label);
    if (v === undefined)
      throw new CloudConfigError(`${where}: \`${label}\` is required for auth_type ${String(entry.auth_type)}`);
    return v;
  };
  const url = (v: string | undefined, label: string): string | undefined => {
    if (v === undefined) return undefined;
    if (!URL.canParse(v) || !/^https?:$/.test(new URL(v).protocol))
      throw new CloudConfigError(`${where}: \`${label}\` is not an http(s) URL`);
    return v;
  };

  const iface = (str(entry, "interface", "interface") ?? "public").replace(/URL$/, ""); // "publicURL" is the v2 spelling
  if (iface !== "public" && iface !== "internal" && iface !== "admin")
    throw new CloudConfigError(`${where}: \`interface\` must be public, internal or admin`);
  const base: CloudBase = { name, file, interface: iface, regionName: str(entry, "region_name", "region_name") };
  const endpointOverride = url(
    str(entry, "baremetal_endpoint_override", "baremetal_endpoint_override"),
    "baremetal_endpoint_override",
  );

  const authType = entry.auth_type;
  if (authType === "none") {
    const endpoint = endpointOverride ?? url(str(auth, "endpoint", "auth.endpoint"), "auth.endpoint");
    if (!endpoint)
      throw new CloudConfigError(`${where}: auth_type none needs \`baremetal_endpoint_override\` or \`auth.endpoint\``);
    return { ...base, authType: "none", endpoint };
  }
  if (authType === "v3applicationcredential") {
    const authUrl = url(required(auth, "auth_url", "auth.auth_url"), "auth.auth_url")!;
    const secret = new Secret(required(auth, "application_credential_secret", "auth.application_credential_secret"));
    const id = str(auth, "application_credential_id", "auth.application_credential_id");
    let credential: ApplicationCredentialCloud["credential"];
    if (id) {
      credential = { id, secret };
    } else {
      const credName = str(auth, "application_credential_name", "auth.application_credential_name");
      if (!credName)
        throw new CloudConfigError(
          `${where}: \`auth.application_credential_id\` or \`auth.application_credential_name\` is required`,
        );
      // A credential name is only unique per user, so Keystone needs the user too.
      const userId = str(auth, "user_id", "auth.user_id");
      const username = str(auth, "username", "auth.username");
      const domainId = str(auth, "user_domain_id", "auth.user_domain_id");
      const domainName = str(auth, "user_domain_name", "auth.user_domain_name");
      let user: { id: string } | { name: string; domain: { id: string } | { name: string } };
      if (userId) user = { id: userId };
      else if (username && (domainId || domainName))
        user = { name: username, domain: domainId ? { id: domainId } : { name: domainName! } };
      else
        throw new CloudConfigError(
          `${where}: \`auth.application_credential_name\` needs \`auth.user_id\`, or \`auth.username\` with \`auth.user_domain_name\` or \`auth.user_domain_id\``,
        );
      credential = { name: credName, user, secret };
    }
    return { ...base, authType: "v3applicationcredential", authUrl, credential, endpointOverride };
  }
  const given =
    typeof authType === "string" ? JSON.stringify(authType) : authType === undefined ? "missing" : "not a string";
  throw new CloudConfigError(
    `${where}: auth_type ${given} is not supported (supported: ${SUPPORTED_AUTH_TYPES.join(", ")})`,
  );
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

// ---------------------------------------------------------------------------------------------
// Keystone v3

const CatalogSchema = z.array(
  z.looseObject({
    type: z.string(),
    name: z.string().optional(),
    endpoints: z.array(
      z.looseObject({
        interface: z.string(),
        url: z.string(),
        region_id: z.string().nullable().optional(),
        region: z.string().nullable().optional(), // deprecated spelling of region_id, still sent
      }),
    ),
  }),
);
export type ServiceCatalog = z.infer<typeof CatalogSchema>;

const TokenBodySchema = z.looseObject({
  token: z.looseObject({
    expires_at: z.string(),
    catalog: CatalogSchema.optional(),
  }),
});

export interface KeystoneSessionOptions {
  authUrl: string;
  credential: ApplicationCredentialCloud["credential"];
  /** Fetch a new token this long before the current one expires. */
  refreshMarginMs?: number;
  timeoutMs?: number;
  fetch?: typeof fetch;
  /** The clock, for tests. */
  now?: () => number;
}

/**
 * A Keystone v3 token for an application credential, cached until `refreshMarginMs` (60 s)
 * before its `expires_at`. Concurrent callers share one request to Keystone.
 *
 * Wire format (Identity API v3 reference, "Authenticating with an Application Credential",
 * https://docs.openstack.org/api-ref/identity/v3/#authenticating-with-an-application-credential;
 * keystone api-ref/source/v3/application-credentials.inc and its samples
 * auth-application-credential-{id,name}-request.json / -response.json):
 *   POST {auth_url}/v3/auth/tokens
 *   {"auth": {"identity": {"methods": ["application_credential"],
 *     "application_credential": {"id": ..., "secret": ...}}}}
 *   (or {"name": ..., "user": {"id": ...} | {"name": ..., "domain": {"id"|"name": ...}}, "secret": ...})
 *   -> 201, the token in the X-Subject-Token header, and {"token": {"expires_at", "catalog": [
 *      {"type", "endpoints": [{"interface", "region_id", "url"}]}], ...}}.
 * No scope is sent: an application credential carries its own project scope.
 */
export class KeystoneSession {
  private readonly tokensUrl: string;
  private readonly refreshMarginMs: number;
  private readonly timeoutMs: number;
  private readonly fetch: typeof fetch;
  private readonly now: () => number;
  private current: { token: string; expiresAt: number; catalog: ServiceCatalog } | undefined;
  private pending: Promise<{ token: string; catalog: ServiceCatalog }> | undefined;

  constructor(private readonly opts: KeystoneSessionOptions) {
    // clouds.yaml auth_url is conventionally ".../v3" but often the bare Keystone root; the
    // version discovery keystoneauth would do is not worth a request: v3 is the only API left.
    const root = opts.authUrl.replace(/\/+$/, "");
    this.tokensUrl = `${/\/v3$/.test(root) ? root : `${root}/v3`}/auth/tokens`;
    this.refreshMarginMs = opts.refreshMarginMs ?? 60_000;
    this.timeoutMs = opts.timeoutMs ?? 30_000;
    this.fetch = opts.fetch ?? globalThis.fetch;
    this.now = opts.now ?? Date.now;
  }

  /** A valid token, from the cache or from Keystone. */
  async token(): Promise<string> {
    return (await this.authenticate()).token;
  }

  /** The service catalog of the current token (authenticating if there is none). */
  async catalog(): Promise<ServiceCatalog> {
    return (await this.authenticate()).catalog;
  }

  /** Drops the cached token (e.g. after a service answered 401 to it). */
  invalidate(): void {
    this.current = undefined;
  }

  private async authenticate(): Promise<{ token: string; catalog: ServiceCatalog }> {
    if (this.current && this.now() < this.current.expiresAt - this.refreshMarginMs) return this.current;
    this.pending ??= this.requestToken().finally(() => (this.pending = undefined));
    return this.pending;
  }

  private async requestToken(): Promise<{ token: string; catalog: ServiceCatalog }> {
    const c = this.opts.credential;
    const who = "id" in c ? `application credential ${c.id}` : `application credential ${JSON.stringify(c.name)}`;
    const application_credential =
      "id" in c ? { id: c.id, secret: c.secret.reveal() } : { name: c.name, user: c.user, secret: c.secret.reveal() };
    let res: Response;
    let text: string;
    try {
      res = await this.fetch(this.tokensUrl, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json" },
        body: JSON.stringify({ auth: { identity: { methods: ["application_credential"], application_credential } } }),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      text = await res.text();
    } catch (err) {
      const cause = (err as Error).cause as { code?: string } | undefined;
      throw new KeystoneAuthError(
        `cannot reach Keystone at ${this.tokensUrl}: ${(err as Error).name === "TimeoutError" ? "timed out" : (cause?.code ?? (err as Error).message)}`,
        undefined,
        { cause: err },
      );
    }
    if (res.status === 401) {
      throw new KeystoneAuthError(
        `Keystone at ${this.tokensUrl} rejected ${who} (401): ${keystoneMessage(text) ?? "unauthorized"}`,
        401,
      );
    }
    if (!res.ok) {
      throw new KeystoneAuthError(
        `Keystone at ${this.tokensUrl} answered ${res.status} for ${who}: ${keystoneMessage(text) ?? res.statusText}`,
        res.status,
      );
    }
    const token = res.headers.get("x-subject-token");
    let body: z.infer<typeof TokenBodySchema>;
    try {
      body = TokenBodySchema.parse(JSON.parse(text));
    } catch {
      throw new KeystoneAuthError(
        `Keystone at ${this.tokensUrl} answered ${res.status} without a token document`,
        res.status,
      );
    }
    const expiresAt = Date.parse(body.token.expires_at);
    if (!token || Number.isNaN(expiresAt)) {
      throw new KeystoneAuthError(
        `Keystone at ${this.tokensUrl} answered ${res.status} without ${token ? "a valid token.expires_at" : "an X-Subject-Token header"}`,
        res.status,
      );
    }
    this.current = { token, expiresAt, catalog: body.token.catalog ?? [] };
    return this.current;
  }
}

/** Keystone errors are {"error": {"code": 401, "title": "Unauthorized", "message": "..."}}. */
function keystoneMessage(text: string): string | undefined {
  try {
    const doc = JSON.parse(text) as { error?: { message?: unknown } };
    if (typeof doc.error?.message === "string") return doc.error.message;
  } catch {
    // not JSON: a proxy's page, say
  }
  return text.trim().slice(0, 200) || undefined;
}

/**
 * The URL of a service in a catalog for an interface and, if given, a region. Without a
 * region, the endpoints for the interface must all be in one region: guessing among regions
 * would silently point an agent at another site's Ironic.
 */
export function catalogEndpoint(
  catalog: ServiceCatalog,
  type: string,
  iface: EndpointInterface,
  region?: string,
): string {
  const service = catalog.find((s) => s.type === type);
  if (!service) {
    throw new CloudConfigError(
      `the service catalog has no ${type} service (it has: ${catalog.map((s) => s.type).join(", ") || "nothing"})`,
    );
  }
  const regionOf = (e: ServiceCatalog[number]["endpoints"][number]) => e.region_id ?? e.region ?? undefined;
  const forInterface = service.endpoints.filter((e) => e.interface === iface);
  const candidates = region === undefined ? forInterface : forInterface.filter((e) => regionOf(e) === region);
  const describe = service.endpoints.map((e) => `${e.interface}@${regionOf(e) ?? "(no region)"}`).join(", ");
  if (candidates.length === 0) {
    throw new CloudConfigError(
      `the service catalog has no ${iface} ${type} endpoint${region ? ` in region ${region}` : ""} (it has: ${describe})`,
    );
  }
  const regions = new Set(candidates.map(regionOf));
  if (regions.size > 1) {
    throw new CloudConfigError(
      `the service catalog has ${iface} ${type} endpoints in several regions (${[...regions].join(", ")}): set region_name`,
    );
  }
  return candidates[0]!.url;
}

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
  const { keystone, ...clientOptions } = options;
  if (cloud.authType === "none") return new IronicClient({ ...clientOptions, endpoint: cloud.endpoint });
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
  return new IronicClient({
    ...clientOptions,
    endpoint,
    token: () => session.token(),
    invalidateToken: () => session.invalidate(),
  });
}
