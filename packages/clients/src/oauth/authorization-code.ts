/**
 * A person's login in their browser: the authorization code grant (RFC 6749 4.1) for a native
 * app, with PKCE S256 (RFC 7636) and a loopback redirect (RFC 8252 7.3): a one-shot HTTP
 * server on 127.0.0.1 at a port the system picks, which takes the browser's redirect, checks
 * its `state` (RFC 6749 10.12), exchanges the code and tells the person to go back to the
 * terminal.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createHash, randomBytes } from "node:crypto";
import { OAuthError, requestToken, type IssuerMetadata, type TokenSet } from "./token-endpoint.ts";

const DEFAULT_TIMEOUT_MS = 5 * 60_000;
const CALLBACK_PATH = "/callback";

const base64url = (b: Buffer) => b.toString("base64url");

/** RFC 7636 4.1 and 4.2: 32 random octets as the verifier, the challenge its SHA-256. */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = base64url(randomBytes(32));
  return { verifier, challenge: base64url(createHash("sha256").update(verifier).digest()) };
}

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function answerBrowser(res: ServerResponse, status: number, title: string, text: string) {
  res.writeHead(status, {
    "content-type": "text/html; charset=utf-8",
    "cache-control": "no-store",
    // The page's URL holds the code: no referrer carries it elsewhere.
    "referrer-policy": "no-referrer",
    connection: "close",
  });
  res.end(
    `<!doctype html><meta charset="utf-8"><title>${escape(title)}</title>` +
      `<h1>${escape(title)}</h1><p>${escape(text)}</p><p>You can close this window and return to the terminal.</p>`,
  );
}

function listenOnLoopback(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<Server> {
  const server = createServer(handler);
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve(server));
  });
}

export async function loginWithAuthorizationCode(o: {
  metadata: IssuerMetadata;
  clientId: string;
  scopes: string[];
  openUrl: (url: string) => void | Promise<void>;
  signal?: AbortSignal;
  timeoutMs?: number;
}): Promise<TokenSet> {
  if (!o.metadata.authorizationEndpoint)
    throw new OAuthError("unsupported_grant_type", `${o.metadata.issuer} has no authorization endpoint`);
  o.signal?.throwIfAborted();
  const { verifier, challenge } = pkcePair();
  const state = base64url(randomBytes(24));
  let handled = false;
  let settle!: { resolve: (t: TokenSet) => void; reject: (e: unknown) => void };
  const done = new Promise<TokenSet>((resolve, reject) => (settle = { resolve, reject }));
  // Awaited only once the browser is opened; a failure before that is not "unhandled".
  done.catch(() => undefined);

  const server = await listenOnLoopback((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    if (req.method !== "GET" || url.pathname !== CALLBACK_PATH) return void res.writeHead(404).end();
    if (handled) return answerBrowser(res, 409, "Already handled", "This login has already been answered.");
    handled = true;
    const q = url.searchParams;
    // The state is checked before anything else: an error or a code sent by someone else's page
    // (login CSRF, RFC 6749 10.12) must not end or complete this login as if it were ours.
    if (q.get("state") !== state) {
      answerBrowser(res, 400, "Login refused", "This answer does not belong to the login under way (state mismatch).");
      return settle.reject(new OAuthError("invalid_state", "the redirect's state does not match this login"));
    }
    const error = q.get("error");
    if (error) {
      // RFC 6749 4.1.2.1: the issuer refused, e.g. access_denied.
      const description = q.get("error_description") ?? undefined;
      answerBrowser(res, 400, "Login failed", `The issuer refused: ${error}${description ? ` (${description})` : ""}.`);
      return settle.reject(new OAuthError(error, description));
    }
    const code = q.get("code");
    if (!code) {
      answerBrowser(res, 400, "Login failed", "The redirect carried no authorization code.");
      return settle.reject(new OAuthError("invalid_request", "the redirect carried no authorization code"));
    }
    requestToken(
      o.metadata.tokenEndpoint,
      {
        grant_type: "authorization_code",
        code,
        redirect_uri: redirectUri,
        client_id: o.clientId,
        code_verifier: verifier,
      },
      // A code is good for one exchange (RFC 6749 4.1.2): never sent twice.
      { signal: o.signal, attempts: 1, requested: o.scopes },
    ).then(
      (tokens) => {
        answerBrowser(res, 200, "Logged in", "The login succeeded.");
        settle.resolve(tokens);
      },
      (err: unknown) => {
        const why = err instanceof OAuthError ? err.error : "the token request failed";
        answerBrowser(res, 502, "Login failed", `Exchanging the code failed: ${why}.`);
        settle.reject(err);
      },
    );
  });
  const redirectUri = `http://127.0.0.1:${(server.address() as { port: number }).port}${CALLBACK_PATH}`;

  const timeoutMs = o.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const timer = setTimeout(
    () =>
      settle.reject(new OAuthError("timeout", `no answer from the browser within ${Math.round(timeoutMs / 1000)} s`)),
    timeoutMs,
  );
  const onAbort = () => settle.reject(o.signal!.reason);
  o.signal?.addEventListener("abort", onAbort, { once: true });
  try {
    const authorize = new URL(o.metadata.authorizationEndpoint);
    for (const [k, v] of Object.entries({
      response_type: "code",
      client_id: o.clientId,
      redirect_uri: redirectUri,
      scope: o.scopes.join(" "),
      state,
      code_challenge: challenge,
      code_challenge_method: "S256",
    }))
      authorize.searchParams.set(k, v);
    await o.openUrl(authorize.toString());
    return await done;
  } finally {
    clearTimeout(timer);
    o.signal?.removeEventListener("abort", onAbort);
    // The last page may still be on its way to the browser: idle sockets go now, the rest soon.
    server.close();
    server.closeIdleConnections();
    setTimeout(() => server.closeAllConnections(), 1000).unref();
  }
}
