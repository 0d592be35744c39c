/**
 * A second, independent OIDC issuer for tests of people's tokens, over real HTTP: discovery
 * document and JWKS, RS256 keys, a way to mint tokens with given claims (`token()`), and the
 * flows a CLI signs people in with, as the RFCs word them:
 *  - authorization code with PKCE S256 only, for public clients on a loopback redirect
 *    (RFC 6749 4.1, RFC 7636, RFC 8252 7.3);
 *  - device authorization (RFC 8628), approved or denied by the test;
 *  - refresh tokens, rotated on every use, a reused one revoking its whole family
 *    (RFC 6749 6, RFC 9700 4.14.2);
 *  - token endpoint errors as RFC 6749 5.2 words them.
 * Who signs in is the test's choice: `setUser()` (or a `login_hint` email when none is set).
 * Access tokens carry the audience the hub expects, the user's email and groups (which the
 * hub's scope mapping reads) and a `scope` claim with what the client asked for.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { SignJWT, exportJWK, generateKeyPair, type JWK } from "jose";
import { createFlows, json, type FlowOptions, type TestUser, type TokenRequestSeen } from "./oidc-issuer-flows.ts";

export type { TestUser, TokenRequestSeen } from "./oidc-issuer-flows.ts";

export type TestIssuerOptions = Partial<FlowOptions>;

export interface TestIssuer {
  issuer: string;
  /** An access token for the hub with these claims, as if some flow had issued it. */
  token(claims: Record<string, unknown>, opts?: { audience?: string; expiresIn?: string }): Promise<string>;
  /** Who signs in at the authorization endpoint and on the device page; undefined: nobody (access_denied). */
  setUser(user: TestUser | undefined): void;
  /** Approves a pending device authorization (RFC 8628 3.3) as `user` (default: the configured user). */
  approveDevice(userCode: string, user?: TestUser): void;
  /** The person at the device page says no: the polling client gets access_denied. */
  denyDevice(userCode: string): void;
  /** The next `polls` device token requests answer slow_down (RFC 8628 3.5). */
  slowDownNext(polls: number): void;
  /** The next `polls` device token requests answer HTTP 429 (a rate limiter in front of the issuer). */
  throttleNext(polls: number): void;
  /**
   * The next `requests` token requests answer HTTP 503 with no OAuth body, as a load balancer in
   * front of an issuer that is restarting does: a failure that is nobody's refusal.
   */
  unavailableNext(requests: number): void;
  /** Token requests the issuer received and its answers, for tests to check what a client sent. */
  readonly tokenRequests: ReadonlyArray<TokenRequestSeen>;
  close(): Promise<void>;
}

export const TEST_CLIENT_ID = "fleetctl";

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

export async function startTestIssuer(options: TestIssuerOptions = {}): Promise<TestIssuer> {
  const { publicKey, privateKey } = await generateKeyPair("RS256", { extractable: true });
  const jwk: JWK = { ...(await exportJWK(publicKey)), kid: "people-1", alg: "RS256", use: "sig" };
  let issuer = "";
  const audience = options.audience ?? "fleet-manager";

  const sign = (claims: Record<string, unknown>, o: { audience: string; expiresIn: string | number }) =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: "RS256", kid: "people-1" })
      .setIssuer(issuer)
      .setAudience(o.audience)
      .setSubject(String(claims.sub ?? claims.email ?? "someone"))
      .setIssuedAt()
      .setExpirationTime(o.expiresIn)
      .sign(privateKey);

  const flows = createFlows(
    {
      clientIds: options.clientIds ?? [TEST_CLIENT_ID],
      audience,
      accessTokenTtlS: options.accessTokenTtlS ?? 600,
      deviceIntervalS: options.deviceIntervalS ?? 1,
      deviceExpiresInS: options.deviceExpiresInS ?? 600,
    },
    { issuer: () => issuer, sign },
  );

  const metadata = () => ({
    issuer,
    jwks_uri: `${issuer}/jwks`,
    authorization_endpoint: `${issuer}/authorize`,
    token_endpoint: `${issuer}/token`,
    device_authorization_endpoint: `${issuer}/device_authorization`,
    response_types_supported: ["code"],
    grant_types_supported: ["authorization_code", "refresh_token", "urn:ietf:params:oauth:grant-type:device_code"],
    code_challenge_methods_supported: ["S256"],
    token_endpoint_auth_methods_supported: ["none"],
    scopes_supported: ["openid", "email", "profile", "offline_access", "fleet.read", "fleet.operate", "fleet.admin"],
    subject_types_supported: ["public"],
    id_token_signing_alg_values_supported: ["RS256"],
  });

  let unavailable = 0;
  async function handle(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url ?? "/", issuer);
    const route = `${req.method} ${url.pathname}`;
    if (route === "GET /.well-known/openid-configuration") return json(res, 200, metadata());
    if (route === "GET /jwks") return json(res, 200, { keys: [jwk] });
    if (route === "GET /authorize") return flows.authorize(url.searchParams, res);
    if (route === "GET /device") return flows.devicePage(url.searchParams, res);
    if (route === "POST /token" && unavailable > 0) {
      unavailable--;
      res.writeHead(503, { "content-type": "text/html" }).end("<h1>503 Service Unavailable</h1>");
      return;
    }
    if (route === "POST /token" || route === "POST /device_authorization") {
      if (!/^application\/x-www-form-urlencoded\b/.test(req.headers["content-type"] ?? ""))
        return json(res, 400, { error: "invalid_request", error_description: "expected a form body" });
      const form = Object.fromEntries(new URLSearchParams(await readBody(req)));
      return route === "POST /token" ? flows.token(form, res) : flows.deviceAuthorization(form, res);
    }
    json(res, 404, {});
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) json(res, 500, { error: "server_error", error_description: String(err) });
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  issuer = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return {
    issuer,
    token: (claims, opts = {}) =>
      sign(claims, { audience: opts.audience ?? audience, expiresIn: opts.expiresIn ?? "10m" }),
    setUser: flows.setUser,
    approveDevice: flows.approveDevice,
    denyDevice: flows.denyDevice,
    slowDownNext: flows.slowDownNext,
    throttleNext: flows.throttleNext,
    unavailableNext: (n) => {
      unavailable = n;
    },
    tokenRequests: flows.tokenRequests,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}
