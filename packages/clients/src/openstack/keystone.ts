/**
 * Keystone v3 for application credentials: a cached token and its service catalog.
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
import { z } from "zod";
import { describeFetchError, sendWithRetries, type SendOptions } from "../http/http.ts";
import { CloudConfigError, type ApplicationCredentialCloud, type EndpointInterface } from "./clouds-yaml.ts";

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
    project: z.looseObject({ id: z.string(), name: z.string() }).optional(),
  }),
});

const ProjectListSchema = z.object({
  projects: z.array(z.looseObject({ id: z.string(), name: z.string(), domain_id: z.string().optional() })),
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
 */
export class KeystoneSession {
  private readonly v3Url: string;
  private readonly tokensUrl: string;
  private readonly refreshMarginMs: number;
  private readonly timeoutMs: number;
  private readonly fetch: typeof fetch;
  private readonly now: () => number;
  private current:
    | { token: string; expiresAt: number; catalog: ServiceCatalog; project: { id: string; name: string } | undefined }
    | undefined;
  private pending:
    Promise<{ token: string; catalog: ServiceCatalog; project?: { id: string; name: string } }> | undefined;

  constructor(private readonly opts: KeystoneSessionOptions) {
    // clouds.yaml auth_url is conventionally ".../v3" but often the bare Keystone root; the
    // version discovery keystoneauth would do is not worth a request: v3 is the only API left.
    const root = opts.authUrl.replace(/\/+$/, "");
    this.v3Url = /\/v3$/.test(root) ? root : `${root}/v3`;
    this.tokensUrl = `${this.v3Url}/auth/tokens`;
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

  /**
   * The id of the project of that name (Keystone "List projects", GET /v3/projects?name=, identity
   * API v3: https://docs.openstack.org/api-ref/identity/v3/#list-projects). Several projects of
   * that name in different domains is an error: choosing one would give nodes to a stranger.
   */
  async projectId(name: string): Promise<string> {
    const url = `${this.v3Url}/projects?name=${encodeURIComponent(name)}`;
    let reauthenticated = false;
    const { text } = await this.send(url, "GET", {
      headers: async () => ({ accept: "application/json", "x-auth-token": await this.token() }),
      judge: (res, text) => {
        if (res.ok) return { kind: "ok" };
        // A token revoked early: drop it and ask once more with a new one.
        if (res.status === 401 && !reauthenticated) {
          reauthenticated = true;
          this.invalidate();
          return { kind: "again" };
        }
        return {
          kind: "fail",
          error: new KeystoneAuthError(
            `Keystone answered ${res.status} to listing projects named ${JSON.stringify(name)}: ${keystoneMessage(text) ?? res.statusText}`,
            res.status,
          ),
        };
      },
    });
    const projects = ProjectListSchema.parse(JSON.parse(text)).projects.filter((p) => p.name === name);
    if (projects.length === 1) return projects[0]!.id;
    throw new KeystoneAuthError(
      projects.length === 0
        ? `Keystone has no project named ${JSON.stringify(name)} visible to this credential`
        : `Keystone has ${projects.length} projects named ${JSON.stringify(name)} (domains ${projects.map((p) => p.domain_id).join(", ")})`,
      404,
    );
  }

  /** The project the credential is scoped to (an application credential carries its own), as the token names it. */
  async project(): Promise<{ id: string; name: string } | undefined> {
    return (await this.authenticate()).project;
  }

  /** Drops the cached token (e.g. after a service answered 401 to it). */
  invalidate(): void {
    this.current = undefined;
  }

  /**
   * One request through the loop every client shares, sent once (the 401 of a revoked token
   * aside): a Keystone that is down at start is waited for by the caller's setup retry.
   */
  private send(
    url: string,
    method: string,
    o: Pick<SendOptions<KeystoneAuthError>, "body" | "headers" | "judge">,
  ): Promise<{ res: Response; text: string }> {
    return sendWithRetries<KeystoneAuthError>({
      url,
      method,
      ...o,
      fetch: this.fetch,
      timeoutMs: this.timeoutMs,
      attempts: 1,
      backoffMs: 0,
      unavailable: (cause) =>
        new KeystoneAuthError(`cannot reach Keystone at ${url}: ${describeFetchError(cause)}`, undefined, { cause }),
    });
  }

  private async authenticate(): Promise<{
    token: string;
    catalog: ServiceCatalog;
    project?: { id: string; name: string };
  }> {
    if (this.current && this.now() < this.current.expiresAt - this.refreshMarginMs) return this.current;
    this.pending ??= this.requestToken().finally(() => (this.pending = undefined));
    return this.pending;
  }

  private async requestToken(): Promise<{
    token: string;
    catalog: ServiceCatalog;
    project?: { id: string; name: string };
  }> {
    const c = this.opts.credential;
    const who = "id" in c ? `application credential ${c.id}` : `application credential ${JSON.stringify(c.name)}`;
    const application_credential =
      "id" in c ? { id: c.id, secret: c.secret.reveal() } : { name: c.name, user: c.user, secret: c.secret.reveal() };
    const { res, text } = await this.send(this.tokensUrl, "POST", {
      body: { auth: { identity: { methods: ["application_credential"], application_credential } } },
      headers: () => ({ accept: "application/json" }),
      judge: (res, text) => {
        if (res.ok) return { kind: "ok" };
        return {
          kind: "fail",
          error: new KeystoneAuthError(
            res.status === 401
              ? `Keystone at ${this.tokensUrl} rejected ${who} (401): ${keystoneMessage(text) ?? "unauthorized"}`
              : `Keystone at ${this.tokensUrl} answered ${res.status} for ${who}: ${keystoneMessage(text) ?? res.statusText}`,
            res.status,
          ),
        };
      },
    });
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
    const project = body.token.project ? { id: body.token.project.id, name: body.token.project.name } : undefined;
    this.current = { token, expiresAt, catalog: body.token.catalog ?? [], project };
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
