/**
 * The container image (./Dockerfile), built by Docker on this machine and run as the charts run
 * it: read-only root file system, /tmp a tmpfs, the image's own non-root user, the process chosen
 * by the command. The base is scripts/image/node-base.sh's (no container registry answers here;
 * scripts/peers/docker.sh, run by setup.sh, starts the daemon and builds it). Asserted over the
 * public interfaces: the hub's API and an agent bringing its source into it.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { realisticFleet, startNetboxServer } from "@fm/test-support/netbox-server";
import { freePort } from "@fm/test-support/ports";
import { createTestDatabase } from "@fm/test-support/postgres";
import { ADMIN_SECRET, REPO_ROOT, TEST_KEK, bearer, clientToken } from "@fm/test-support/process";
import { eventually } from "@fm/test-support/wait";

const run = promisify(execFile);
const IMAGE = "fleet-manager:e2e";
const TOKEN = "0123456789abcdef0123456789abcdef01234567";
const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => {});
}, 60_000);

const docker = async (...args: string[]) => (await run("docker", args, { maxBuffer: 64 * 2 ** 20 })).stdout.trim();

/** Runs the image detached as the charts do (host network: the peers listen on 127.0.0.1); returns the container id. */
async function runContainer(env: Record<string, string>, command: string[] = []): Promise<string> {
  const name = `fm-e2e-${randomBytes(4).toString("hex")}`;
  const id = await docker(
    "run",
    "--detach",
    "--name",
    name,
    "--network",
    "host",
    "--read-only",
    "--tmpfs",
    "/tmp:rw,mode=1777",
    "--cap-drop",
    "ALL",
    "--security-opt",
    "no-new-privileges",
    ...Object.entries(env).flatMap(([k, v]) => ["--env", `${k}=${v}`]),
    IMAGE,
    ...command,
  );
  cleanups.push(() => docker("rm", "--force", id));
  return id;
}
const logsOf = (id: string) => run("docker", ["logs", id]).then((r) => `${r.stdout}\n${r.stderr}`);

let hubUrl: string;
let hubId: string;
let admin: string;
let netboxSecret: string;
beforeAll(async () => {
  const base = (await run(`${REPO_ROOT}/scripts/peers/docker.sh`, ["image"])).stdout.trim();
  try {
    await docker("image", "inspect", base);
  } catch {
    throw new Error(
      `base image ${base} missing or no Docker daemon: run scripts/setup.sh (scripts/peers/docker.sh install)`,
    );
  }
  await run("docker", ["build", "--build-arg", `NODE_IMAGE=${base}`, "--tag", IMAGE, REPO_ROOT], {
    env: { ...process.env, DOCKER_BUILDKIT: "0" },
    maxBuffer: 64 * 2 ** 20,
    timeout: 20 * 60_000,
  });
  const db = await createTestDatabase(inject("templateDatabase"));
  cleanups.push(() => db.drop());
  const port = await freePort();
  hubUrl = `http://127.0.0.1:${port}`;
  hubId = await runContainer({
    DATABASE_URL: db.url,
    HOST: "127.0.0.1",
    PORT: String(port),
    FM_DATA_DIR: "/tmp/fleet-manager",
    FM_ISSUER_URL: hubUrl,
    FM_BOOTSTRAP_ADMIN_SECRET: ADMIN_SECRET,
    FM_KEY_ENCRYPTION_KEY: TEST_KEK,
  });
  await eventually(
    async () => {
      const res = await fetch(`${hubUrl}/readyz`).catch(() => undefined);
      expect(res?.status, await logsOf(hubId)).toBe(200);
    },
    60_000,
    250,
  );
  admin = await clientToken(hubUrl, "fleet-admin", ADMIN_SECRET);
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${hubUrl}${path}`, {
      method: "POST",
      headers: { ...bearer(admin), "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    expect(res.status, await res.clone().text()).toBe(201);
    return res.json();
  };
  const site = (await post("/api/v1/sites/", { slug: "iad1", name: "Ashburn (IAD1)" })) as { id: string };
  const sat = (await post("/api/v1/satellites/", { name: "sys3-iad1", siteIds: [site.id], environment: "prod" })) as {
    secrets: { agent: string; clientSecret: string }[];
  };
  netboxSecret = sat.secrets.find((s) => s.agent === "netbox")!.clientSecret;
}, 25 * 60_000);

describe("the container image", () => {
  const DEV_ONLY = [
    "tsx",
    "typescript",
    "vitest",
    "eslint",
    "prettier",
    "playwright-core",
    "turbo",
    "autocannon",
    "axe-core",
  ];
  it("holds the built processes and their runtime packages only, and runs as a non-root user by default", async () => {
    const config = JSON.parse(await docker("image", "inspect", "--format", "{{json .Config}}", IMAGE)) as {
      User: string;
      Entrypoint: string[];
      Cmd: string[];
    };
    expect(config.User).toBe("65532:65532");
    expect([...config.Entrypoint, ...config.Cmd]).toEqual(["node", "apps/hub/dist/main.js"]);
    const inside = JSON.parse(
      await docker(
        "run",
        "--rm",
        "--read-only",
        IMAGE,
        "-p",
        `const fs = require("fs"); JSON.stringify({ uid: process.getuid(), ` +
          `sources: fs.existsSync("apps/hub/src"), ` +
          `dev: ${JSON.stringify(DEV_ONLY)}.filter((p) => fs.existsSync("node_modules/" + p)), ` +
          `temporalCore: fs.existsSync("node_modules/@temporalio/core-bridge"), ` +
          `bundle: fs.existsSync("apps/satellite-agents/dist/workflow-bundle.js") })`,
      ),
    ) as Record<string, unknown>;
    // No build or test tool came along (each is a devDependency of the root package).
    expect(inside).toEqual({ uid: 65532, sources: false, dev: [], temporalCore: true, bundle: true });
  });

  it("the hub container serves the API on a read-only root file system, as UID 65532", async () => {
    expect((await fetch(`${hubUrl}/healthz`)).status).toBe(200);
    const res = await fetch(`${hubUrl}/api/v1/sites/`, { headers: bearer(admin) });
    expect(((await res.json()) as { items: { slug: string }[] }).items.map((s) => s.slug)).toEqual(["iad1"]);
    expect(await docker("exec", hubId, "node", "-p", "process.getuid()")).toBe("65532");
    expect(await docker("inspect", "--format", "{{.HostConfig.ReadonlyRootfs}}", hubId)).toBe("true");
  });

  it("an agent container, chosen by its command, brings its source into the hub and serves /healthz", async () => {
    const nb = await startNetboxServer({ token: TOKEN, data: realisticFleet({ sites: 1, devicesPerSite: 4 }) });
    cleanups.push(() => nb.stop());
    const metricsPort = await freePort();
    const agentId = await runContainer(
      {
        FM_HUB_URL: hubUrl,
        FM_CLIENT_ID: "netbox-agent-sys3-iad1",
        FM_CLIENT_SECRET: netboxSecret,
        FM_SITE: "iad1",
        FM_REFLECT_INTERVAL_S: "1",
        METRICS_PORT: String(metricsPort),
        METRICS_HOST: "127.0.0.1",
        NETBOX_URL: nb.url,
        NETBOX_TOKEN: TOKEN,
        NETBOX_CLUSTER: "iad1-compute",
        NETBOX_AGENT_DEVICE_ROLE_CLASS_MAPPING: JSON.stringify({
          "gpu-node": "GPU_COMPUTE",
          "cpu-node": "CPU_BAREMETAL",
        }),
      },
      ["apps/satellite-agents/dist/main.js", "netbox"],
    );
    const expected = nb.data.devices.filter((d) => d.site === 1 && d.cluster === 1).map((d) => d.name);
    expect(expected.length).toBeGreaterThan(0);
    await eventually(
      async () => {
        const res = await fetch(`${hubUrl}/api/v1/devices/?site=iad1&limit=100`, { headers: bearer(admin) });
        const names = ((await res.json()) as { items: { name: string }[] }).items.map((d) => d.name);
        expect(names.sort(), await logsOf(agentId)).toEqual([...expected].sort());
      },
      60_000,
      250,
    );
    expect((await fetch(`http://127.0.0.1:${metricsPort}/healthz`)).status).toBe(200);
    await docker("stop", "--time", "15", agentId);
    expect(await docker("inspect", "--format", "{{.State.ExitCode}}", agentId)).toBe("0");
  }, 120_000);
});
