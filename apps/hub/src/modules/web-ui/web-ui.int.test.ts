import { mkdtemp, mkdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { brotliCompressSync, brotliDecompressSync, gunzipSync, gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestHub, testIdentity, type TestHub } from "../../testing/test-hub.ts";
import { cspDirectives } from "../../testing/csp.ts";

const ISSUER = "https://login.example.com/tenant";
const INDEX = '<!doctype html><script type="module" src="/ui/assets/index-AbC123.js"></script>';

let dir: string;
let hub: TestHub;
let unbuilt: TestHub;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "web-ui-"));
  await mkdir(join(dir, "assets"));
  await writeFile(join(dir, "index.html"), INDEX);
  await writeFile(join(dir, "assets", "index-AbC123.js"), "console.log(1)");
  await writeFile(join(dir, "assets", "index-AbC123.css"), "body{}");
  // The build's precompressed variants (scripts/build-web.ts): both for the script, gzip only for the style.
  await writeFile(join(dir, "assets", "index-AbC123.js.br"), brotliCompressSync("console.log(1)"));
  await writeFile(join(dir, "assets", "index-AbC123.js.gz"), gzipSync("console.log(1)"));
  await writeFile(join(dir, "assets", "index-AbC123.css.gz"), gzipSync("body{}"));
  // Names of 100 characters (the longest an asset may have) and of 101.
  await writeFile(join(dir, "assets", `${"a".repeat(97)}.js`), "console.log(100)");
  await writeFile(join(dir, "assets", `${"b".repeat(98)}.js`), "console.log(101)");
  const identity = testIdentity();
  hub = await startTestHub({
    identity: {
      ...identity,
      config: { ...identity.config, external: { issuer: ISSUER, audience: "fleet-manager", mapping: {} } },
    },
    webUi: { dir, clientId: "fleet-web" },
  });
  unbuilt = await startTestHub({ webUi: { dir: join(dir, "missing"), clientId: "fleet-web" } });
});
afterAll(async () => {
  await hub?.close();
  await unbuilt?.close();
  await rm(dir, { recursive: true, force: true });
});

describe("the web UI as the hub serves it", () => {
  it("answers index.html for the UI's own paths, revalidated every time, under a strict policy", async () => {
    for (const url of ["/ui", "/ui/", "/ui/devices", "/ui/devices/0b6a?site=keflavik&cordoned=true"]) {
      const res = await hub.app.inject({ url });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers["content-type"]).toBe("text/html; charset=utf-8");
      expect(res.headers["cache-control"]).toBe("no-cache");
      expect(res.body).toBe(INDEX);
    }
    const res = await hub.app.inject({ url: "/ui/" });
    const csp = cspDirectives(res.headers["content-security-policy"]);
    expect(csp["default-src"]).toEqual(["'none'"]);
    // No 'unsafe-inline' or 'unsafe-eval' anywhere: scripts and styles come from the hub only.
    expect(csp["script-src"]).toEqual(["'self'"]);
    expect(csp["style-src"]).toEqual(["'self'"]);
    // fetch() reaches the hub only, even with a people's issuer configured: the hub logs people in.
    expect(csp["connect-src"]).toEqual(["'self'"]);
    expect(csp["frame-ancestors"]).toEqual(["'none'"]);
    expect(csp["base-uri"]).toEqual(["'none'"]);
    expect(res.headers["x-content-type-options"]).toBe("nosniff");
    expect(res.headers["referrer-policy"]).toBe("no-referrer");
  });

  it("caches hashed assets for a year as immutable, with their types", async () => {
    const js = await hub.app.inject({ url: "/ui/assets/index-AbC123.js" });
    expect(js.statusCode).toBe(200);
    expect(js.headers["cache-control"]).toBe("public, max-age=31536000, immutable");
    expect(js.headers["content-type"]).toBe("text/javascript; charset=utf-8");
    expect(js.body).toBe("console.log(1)");
    const longest = await hub.app.inject({ url: `/ui/assets/${"a".repeat(97)}.js` });
    expect(longest.statusCode).toBe(200);
    expect(longest.body).toBe("console.log(100)");
    const css = await hub.app.inject({ url: "/ui/assets/index-AbC123.css" });
    expect(css.headers["content-type"]).toBe("text/css; charset=utf-8");
  });

  it("sends the build's precompressed variant the browser accepts, brotli first, varying by Accept-Encoding", async () => {
    const get = (url: string, acceptEncoding?: string) =>
      hub.app.inject({ url, headers: acceptEncoding === undefined ? {} : { "accept-encoding": acceptEncoding } });
    const br = await get("/ui/assets/index-AbC123.js", "gzip, deflate, br, zstd");
    expect(br.headers["content-encoding"]).toBe("br");
    expect(br.headers.vary).toBe("accept-encoding");
    expect(br.headers["content-type"]).toBe("text/javascript; charset=utf-8");
    expect(br.headers["cache-control"]).toBe("public, max-age=31536000, immutable");
    expect(brotliDecompressSync(br.rawPayload).toString()).toBe("console.log(1)");
    for (const header of ["gzip", "br;q=0, gzip;q=0.5", "x-gzip", "*;q=0.3, br;q=0"]) {
      const gz = await get("/ui/assets/index-AbC123.js", header);
      expect(gz.headers["content-encoding"], header).toBe("gzip");
      expect(gunzipSync(gz.rawPayload).toString(), header).toBe("console.log(1)");
    }
    for (const header of [undefined, "identity", "gzip;q=0, br;q=0", "deflate"]) {
      const plain = await get("/ui/assets/index-AbC123.js", header);
      expect(plain.headers["content-encoding"], header).toBeUndefined();
      expect(plain.headers.vary, header).toBe("accept-encoding");
      expect(plain.body, header).toBe("console.log(1)");
    }
    // Only the variants the build wrote: the style has no brotli one.
    const css = await get("/ui/assets/index-AbC123.css", "br, gzip");
    expect(css.headers["content-encoding"]).toBe("gzip");
    expect(gunzipSync(css.rawPayload).toString()).toBe("body{}");
    // A variant is not an asset of its own.
    expect((await get("/ui/assets/index-AbC123.js.br")).statusCode).toBe(404);
  });

  it("refuses unknown assets and paths that climb out of the folder with a 404 problem, never the index", async () => {
    for (const url of [
      "/ui/assets/nope.js",
      "/ui/assets/..%2Findex.html",
      "/ui/assets/%2e%2e%2f%2e%2e%2fpackage.json",
      // Asset-like paths the SPA's catch-all would otherwise answer with index.html.
      "/ui/assets/a/b.js",
      "/ui/assets/",
      "/ui/x.js",
      "/ui/favicon.ico",
      "/ui/devices/logo.png",
      `/ui/assets/${"b".repeat(98)}.js`,
      `/ui/assets/${"a".repeat(197)}.js`,
    ]) {
      const res = await hub.app.inject({ url });
      expect(res.statusCode, url).toBe(404);
      expect(res.headers["content-type"], url).toContain("application/problem+json");
      expect(res.headers["cache-control"], url).toBe("no-store");
    }
  });

  it("tells the SPA where and as whom to log people in, never cached", async () => {
    const res = await hub.app.inject({ url: "/ui/config.json" });
    expect(res.statusCode).toBe(200);
    expect(res.headers["cache-control"]).toBe("no-store");
    expect(res.json()).toEqual({ issuer: ISSUER, clientId: "fleet-web" });
    expect((await unbuilt.app.inject({ url: "/ui/config.json" })).json()).toEqual({
      issuer: null,
      clientId: "fleet-web",
    });
  });

  it("a hub without a built UI says how to build it (404 problem+json), and keeps serving the API", async () => {
    const res = await unbuilt.app.inject({ url: "/ui/devices" });
    expect(res.statusCode).toBe(404);
    expect(res.headers["content-type"]).toContain("application/problem+json");
    expect(res.json()).toMatchObject({ code: "web_ui_not_built", detail: expect.stringContaining("npm run build") });
    expect(res.headers["content-security-policy"]).toContain("default-src 'none'");
    const sites = await unbuilt.app.inject({ url: "/api/v1/sites/" });
    expect(sites.statusCode).toBe(200);
  });

  it("whoami answers the hub's granted scopes", async () => {
    const res = await hub.app.inject({ url: "/api/v1/whoami" });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      principal: "local",
      kind: "local",
      scopes: ["fleet.admin", "fleet.operate", "fleet.read"],
    });
  });
});
