/**
 * The device authorization grant against the test OIDC issuer over real HTTP. The issuer
 * answers slow_down to a client that polls faster than its interval, so a client that does
 * not keep to the interval shows in the issuer's answers.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { decodeJwt } from "jose";
import { TEST_CLIENT_ID, startTestIssuer, type TestIssuer } from "@fm/test-support/oidc-issuer";
import { eventually } from "@fm/test-support/wait";
import { OAuthError, discoverIssuer, loginWithDeviceCode, type IssuerMetadata } from "./index.ts";

type Prompt = Parameters<Parameters<typeof loginWithDeviceCode>[0]["onPrompt"]>[0];

let issuer: TestIssuer;
let metadata: IssuerMetadata;
beforeAll(async () => {
  issuer = await startTestIssuer({ deviceIntervalS: 1 });
  metadata = await discoverIssuer(issuer.issuer);
});
afterAll(() => issuer.close());
beforeEach(() => issuer.setUser({ email: "bo@example.com", groups: ["fleet-operators"] }));

/** The issuer's answers to device-code polls since request number `from` (one login at a time here). */
const pollAnswers = (from: number) =>
  issuer.tokenRequests
    .slice(from)
    .filter((r) => r.form.grant_type?.endsWith("device_code"))
    .map((r) => r.answer);

/** Starts a login; resolves its prompt as soon as the client shows it. */
function startLogin(opts: { signal?: AbortSignal; metadata?: IssuerMetadata } = {}) {
  let shown!: (p: Prompt) => void;
  const prompt = new Promise<Prompt>((r) => (shown = r));
  const result = loginWithDeviceCode({
    metadata: opts.metadata ?? metadata,
    clientId: TEST_CLIENT_ID,
    scopes: ["openid", "fleet.read"],
    onPrompt: shown,
    ...(opts.signal ? { signal: opts.signal } : {}),
  });
  result.catch(() => undefined);
  return { prompt, result };
}

describe("device authorization", () => {
  it("shows the code, polls while the person has not approved, then signs them in", async () => {
    const before = issuer.tokenRequests.length;
    const { prompt, result } = startLogin();
    const p = await prompt;
    expect(p.userCode).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    expect(p.verificationUri).toBe(`${issuer.issuer}/device`);
    expect(p.expiresIn).toBe(600);
    await eventually(async () => expect(pollAnswers(before).length).toBeGreaterThan(0));
    // The person opens the complete URI in a browser elsewhere, already signed in at the issuer.
    const page = await fetch(p.verificationUriComplete!);
    expect(await page.text()).toContain("Device approved");
    const tokens = await result;
    expect(decodeJwt(tokens.accessToken)).toMatchObject({ email: "bo@example.com", scope: "openid fleet.read" });
    const answers = pollAnswers(before);
    expect(answers[0]).toBe("authorization_pending");
    expect(answers.at(-1)).toBe("tokens");
    expect(answers).not.toContain("slow_down");
  });

  it("ends with access_denied when the person says no", async () => {
    const { prompt, result } = startLogin();
    issuer.denyDevice((await prompt).userCode);
    await expect(result).rejects.toMatchObject({ name: "OAuthError", error: "access_denied" });
  });

  it("slows down by 5 s when told to, and polls no faster after", async () => {
    issuer.slowDownNext(1);
    const before = issuer.tokenRequests.length;
    const { prompt, result } = startLogin();
    const { userCode } = await prompt;
    issuer.approveDevice(userCode);
    await result;
    // Had the client not added 5 s, its second poll would have come early and been slowed down too.
    expect(pollAnswers(before)).toEqual(["slow_down", "tokens"]);
  }, 20_000);

  it("backs off by 5 s on an HTTP 429 as on slow_down, and signs in", async () => {
    issuer.throttleNext(1);
    const before = issuer.tokenRequests.length;
    const { prompt, result } = startLogin();
    const { userCode } = await prompt;
    issuer.approveDevice(userCode);
    expect((await result).tokenType).toBe("Bearer");
    // Had the client polled again at its old pace, the issuer would have said slow_down.
    expect(pollAnswers(before)).toEqual(["temporarily_unavailable", "tokens"]);
  }, 20_000);

  it("ends with expired_token when nobody approves in time", async () => {
    const shortLived = await startTestIssuer({ deviceIntervalS: 1, deviceExpiresInS: 2 });
    try {
      const { result } = startLogin({ metadata: await discoverIssuer(shortLived.issuer) });
      const err = await result.catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OAuthError);
      expect(err).toMatchObject({ error: "expired_token" });
    } finally {
      await shortLived.close();
    }
  });

  it("stops polling when aborted", async () => {
    const controller = new AbortController();
    const { prompt, result } = startLogin({ signal: controller.signal });
    await prompt;
    controller.abort(new Error("interrupted"));
    await expect(result).rejects.toThrow("interrupted");
  });

  it("says so when the issuer offers no device authorization", async () => {
    const { deviceAuthorizationEndpoint: _, ...without } = metadata;
    const { result } = startLogin({ metadata: without });
    await expect(result).rejects.toMatchObject({ error: "unsupported_grant_type" });
  });
});
