/**
 * People's logins end to end: the fleetctl binary, a real hub process that trusts a local OIDC
 * issuer (the test issuer, over real HTTP), and a "browser" that is a small script following
 * the login page's redirects back to fleetctl's loopback port, as a person's browser would.
 */
import { chmod, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DeviceList } from "@fm/domain";
import { TEST_CLIENT_ID, startTestIssuer, type TestIssuer } from "@fm/test-support/oidc-issuer";
import { eventually } from "@fm/test-support/wait";
import { DEVICES_PER_SITE, startFleetctlEnv, type FleetctlEnv } from "./fleetctl-env.ts";

let issuer: TestIssuer;
let e: FleetctlEnv;
let browser: string;
beforeAll(async () => {
  // Access tokens shorter than fleetctl's renewal margin (30 s): every command renews its token.
  issuer = await startTestIssuer({ accessTokenTtlS: 20 });
  issuer.setUser({ email: "ada@example.com", groups: ["fleet-operators"] });
  e = await startFleetctlEnv({
    FM_OIDC_ISSUER: issuer.issuer,
    FM_OIDC_SCOPE_MAPPING: JSON.stringify({
      emailDomains: { "example.com": ["fleet.read"] },
      groups: { "fleet-operators": ["fleet.operate"] },
    }),
  });
  browser = join(e.home, "browser.mjs");
  await writeFile(browser, "#!/usr/bin/env node\nawait fetch(process.argv[2]);\n");
  await chmod(browser, 0o755);
  const set = await e.fleetctl([
    "config",
    "set-profile",
    "people",
    "--hub",
    e.hub.url,
    "--issuer",
    issuer.issuer,
    "--client-id",
    TEST_CLIENT_ID,
  ]);
  expect(set.code, set.stderr).toBe(0);
}, 120_000);
afterAll(async () => {
  await e?.stop();
  await issuer?.close();
}, 60_000);

const withBrowser = () => ({ env: { BROWSER: browser } });
const grants = () => issuer.tokenRequests.map((r) => r.form.grant_type);

describe("a person logs in through the OIDC issuer", { timeout: 120_000 }, () => {
  it("in a browser (PKCE, loopback), asking for read-only: reads work, a cordon is refused", async () => {
    const login = await e.fleetctl(["api", "login", "--scope", "read-only"], withBrowser());
    expect(login.code, login.stderr).toBe(0);
    expect(login.stderr).toContain(`${issuer.issuer}/authorize?`);
    expect(login.stderr).toContain("Logged in to");
    expect(login.stderr).toContain("ada@example.com");
    const asked = issuer.tokenRequests.find((r) => r.form.grant_type === "authorization_code")!;
    expect(asked.form.code_verifier).toMatch(/^[A-Za-z0-9._~-]{43,128}$/);

    const who = JSON.parse((await e.fleetctl(["api", "whoami", "-o", "json"])).stdout);
    expect(who).toMatchObject({ kind: "person", subject: "ada@example.com", scopes: ["fleet.read"], renewable: true });

    // Each command renews the 20-second token with the refresh token.
    const before = grants().filter((g) => g === "refresh_token").length;
    const count = await e.fleetctl(["api", "device", "list", "--format", "count"]);
    expect(count).toMatchObject({ code: 0, stdout: `${2 * DEVICES_PER_SITE}\n` });
    expect(grants().filter((g) => g === "refresh_token").length).toBe(before + 1);

    const name = (await e.api<DeviceList>("/api/v1/devices/?site=keflavik&limit=1")).body.items[0]!.name;
    const cordon = await e.fleetctl(["api", "device", "cordon", name, "--reason", "x"]);
    expect(cordon.code).toBe(4);
    expect(cordon.stderr).toContain("insufficient_scope");
  });

  it("with a device code, approved on the issuer's side; without --scope the person may operate", async () => {
    let prompt = "";
    const login = e.fleetctl(["api", "login", "--device-code"], { onStderr: (t) => (prompt = t) });
    const code = await eventually(async () => {
      const m = /enter the code (\S+)/.exec(prompt);
      expect(m).not.toBeNull();
      return m![1]!;
    }, 30_000);
    issuer.approveDevice(code);
    const done = await login;
    expect(done.code, done.stderr).toBe(0);

    const name = (
      await e.fleetctl(["api", "device", "list", "--site", "keflavik", "--limit", "1", "-o", "name"])
    ).stdout
      .trim()
      .replace("device/", "");
    const cordon = await e.fleetctl(["api", "device", "cordon", name, "--reason", "checked by ada", "-o", "json"]);
    expect(cordon.code, cordon.stderr).toBe(0);
    expect(JSON.parse(cordon.stdout)).toMatchObject({ cordoned: true, cordonedBy: "person:ada@example.com" });
  });

  it("$BROWSER with arguments (`firefox --new-window` style) opens the login page", async () => {
    const flagged = join(e.home, "flagged-browser.mjs");
    // Refuses unless called as `<browser> --new-window <url>`, as the person's $BROWSER is set.
    await writeFile(
      flagged,
      '#!/usr/bin/env node\nif (process.argv[2] !== "--new-window") process.exit(2);\nawait fetch(process.argv[3]);\n',
    );
    await chmod(flagged, 0o755);
    const login = await e.fleetctl(["api", "login", "--scope", "read-only"], {
      env: { BROWSER: `${flagged} --new-window` },
    });
    expect(login.code, login.stderr).toBe(0);
    expect(login.stderr).toContain("Logged in to");
    expect(login.stderr).not.toContain("did not start");
  });

  it("a browser that fails to start falls back to the device code at once", async () => {
    let prompt = "";
    const login = e.fleetctl(["api", "login", "--scope", "read-only"], {
      env: { BROWSER: "/nonexistent/firefox --new-window" },
      onStderr: (t) => (prompt = t),
    });
    // Long before the browser login's own timeout (minutes): the device code is offered.
    const code = await eventually(async () => {
      const m = /enter the code (\S+)/.exec(prompt);
      expect(m).not.toBeNull();
      return m![1]!;
    }, 30_000);
    expect(prompt).toContain(
      "The browser (/nonexistent/firefox --new-window) did not start (ENOENT): logging in with a device code instead.",
    );
    issuer.approveDevice(code);
    const done = await login;
    expect(done.code, done.stderr).toBe(0);
    expect(done.stderr).toContain("Logged in to");
  });

  it("a refused login says so and exits 4, and the previous login is kept", async () => {
    issuer.setUser(undefined);
    const r = await e.fleetctl(["api", "login"], withBrowser());
    expect(r.code).toBe(4);
    expect(r.stderr).toContain("access_denied");
    issuer.setUser({ email: "ada@example.com", groups: ["fleet-operators"] });
    expect((await e.fleetctl(["api", "job", "list"])).code).toBe(0);
  });
});
