/**
 * The web UI's login routes (public: they are where a person without a session goes):
 *  - GET  /ui/login?returnTo=/ui/…  → 302 to the issuer, with this login's cookie;
 *  - GET  /ui/callback?code&state   → 303 to the page the login started from, with the session
 *    cookie; a login that fails goes back there with ?login_error=<reason> (the UI words it);
 *  - POST /ui/logout                → ends the session: {"endSessionUrl"} to end the issuer's too.
 * Who is logged in is `GET /api/v1/whoami` with the cookie, as for any caller.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { WEB_CSRF_HEADER } from "@fm/domain";
import {
  LOGIN_COOKIE_MAX_AGE_S,
  SESSION_COOKIE,
  clearCookie,
  hostCookie,
  loginCookieName,
  parseCookies,
} from "./cookies.ts";
import { LoginFailed, type SessionRequest, type WebSessionService } from "./service.ts";

/** A request as the session checks read it. */
export function sessionRequestOf(request: FastifyRequest): SessionRequest {
  const header = (name: string) => {
    const v = request.headers[name];
    return typeof v === "string" ? v : undefined;
  };
  return {
    method: request.method,
    cookies: parseCookies(header("cookie")),
    origin: header("origin"),
    csrf: header(WEB_CSRF_HEADER),
    host: header("host"),
    requestOrigin: `${request.protocol}://${request.host}`,
  };
}

export function registerWebSession(app: FastifyInstance, { service }: { service: WebSessionService }): void {
  const publicRoute = { config: { scope: "public" as const }, schema: { hide: true } };
  const noStore = (reply: FastifyReply) => reply.header("cache-control", "no-store");
  const failed = (reply: FastifyReply, err: LoginFailed, clear?: string) => {
    // Back to the page the login started from, saying why (the UI words the reason).
    const to = new URL(err.returnTo, "http://hub.invalid");
    to.searchParams.set("login_error", err.reason);
    if (err.issuerError) to.searchParams.set("issuer_error", err.issuerError);
    if (clear) reply.header("set-cookie", clearCookie(clear, "Lax"));
    return noStore(reply).redirect(to.pathname + to.search, 303);
  };

  app.get<{ Querystring: { returnTo?: string } }>("/ui/login", publicRoute, async (request, reply) => {
    const returnTo = typeof request.query.returnTo === "string" ? request.query.returnTo : undefined;
    try {
      const login = await service.beginLogin(sessionRequestOf(request).requestOrigin, returnTo);
      reply.header(
        "set-cookie",
        hostCookie(login.cookie.name, login.cookie.value, { maxAgeS: LOGIN_COOKIE_MAX_AGE_S, sameSite: "Lax" }),
      );
      return noStore(reply).redirect(login.location, 302);
    } catch (err) {
      if (err instanceof LoginFailed) return failed(reply, err);
      throw err;
    }
  });

  app.get<{ Querystring: Record<string, string | undefined> }>("/ui/callback", publicRoute, async (request, reply) => {
    const query = Object.fromEntries(
      Object.entries(request.query).map(([k, v]) => [k, typeof v === "string" ? v : undefined]),
    );
    const r = sessionRequestOf(request);
    try {
      const done = await service.completeLogin(query, r.cookies);
      request.log.info({ principal: done.principal }, "web login");
      reply.header("set-cookie", [
        clearCookie(done.loginCookie, "Lax"),
        hostCookie(SESSION_COOKIE, done.sessionId, { maxAgeS: service.cookieMaxAgeS, sameSite: "Strict" }),
      ]);
      return noStore(reply).redirect(done.returnTo, 303);
    } catch (err) {
      if (err instanceof LoginFailed) {
        request.log.warn({ reason: err.reason, issuerError: err.issuerError }, "web login failed");
        return failed(reply, err, loginCookieName(query.state));
      }
      throw err;
    }
  });

  app.post("/ui/logout", publicRoute, async (request, reply) => {
    const out = await service.logout(sessionRequestOf(request));
    reply.header("set-cookie", clearCookie(SESSION_COOKIE));
    return noStore(reply).send(out);
  });
}
