/**
 * A job's logsUrl, set by the site's workflow agent: every consumer of the job (the UI, fleetctl,
 * the feed's readers, generated clients) may open it, so only http(s) links are taken, and a
 * link stored before that rule is not passed on.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Job } from "@fm/domain";
import { bearer, clientToken } from "@fm/test-support/process";
import { startOAuthTestHub, type TestHub } from "../../testing/test-hub.ts";
import { seedNetboxOnlyDevices } from "../../testing/inventory.ts";

let hub: TestHub & { url: string; adminToken: string };
let workflow: string;
let deviceId: string;
let job: Job;

const call = async <T = Job>(method: string, path: string, body: unknown, token: string) => {
  const res = await fetch(`${hub.url}${path}`, {
    method,
    headers: { ...bearer(token), ...(body !== undefined ? { "content-type": "application/json" } : {}) },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: (await res.json()) as T & { errors?: { path: string; message: string }[] } };
};

beforeAll(async () => {
  hub = await startOAuthTestHub();
  await seedNetboxOnlyDevices(hub.db.prisma, { slug: "oslo" }, [{ name: "osl-gpu-001", role: "gpu-node" }]);
  const row = await hub.db.prisma.device.findFirstOrThrow({ where: { name: "osl-gpu-001" } });
  deviceId = row.id;
  await hub.db.prisma.device.update({ where: { id: deviceId }, data: { netboxStatus: "staged" } });
  const sat = (
    await call<{ secrets: { agent: string; clientId: string; clientSecret: string }[] }>(
      "POST",
      "/api/v1/satellites/",
      { name: "sys1-osl1", siteIds: [row.siteId], environment: "dev" },
      hub.adminToken,
    )
  ).body;
  const c = sat.secrets.find((x) => x.agent === "workflow")!;
  workflow = await clientToken(hub.url, c.clientId, c.clientSecret, "fleet.read agent:workflow");
});
afterAll(() => hub?.close());

describe("a job's logsUrl", () => {
  it("takes http(s) only: javascript:, data:, file: and vbscript: links are a 400 naming logsUrl, changing nothing", async () => {
    job = (await call("POST", "/api/v1/jobs/", { kind: "ENROL", deviceIds: [deviceId] }, hub.adminToken)).body;
    const report = (logsUrl: string) =>
      call("POST", `/api/v1/jobs/${job.id}/report/`, { status: "SUBMITTED", workflowId: job.id, logsUrl }, workflow);
    for (const bad of [
      "javascript:alert(document.cookie)",
      "data:text/html,<script>x</script>",
      "file:///etc/passwd",
      "vbscript:msgbox",
    ]) {
      const r = await report(bad);
      expect(r.status, bad).toBe(400);
      expect(
        r.body.errors?.map((e) => e.path),
        bad,
      ).toEqual(["body.logsUrl"]);
    }
    const unchanged = (await call("GET", `/api/v1/jobs/${job.id}/`, undefined, hub.adminToken)).body;
    expect([unchanged.status, unchanged.logsUrl, unchanged.version]).toEqual(["PENDING", null, job.version]);

    const good = "https://grafana.osl1.example/explore?job=1";
    expect((await report(good)).body).toMatchObject({ status: "SUBMITTED", logsUrl: good });
  });

  it("is not served when a link stored before the rule has another scheme", async () => {
    await hub.db.prisma.job.update({ where: { id: job.id }, data: { logsUrl: "javascript:alert(1)" } });
    expect((await call("GET", `/api/v1/jobs/${job.id}/`, undefined, hub.adminToken)).body.logsUrl).toBeNull();
    const listed = await call<{ items: Job[] }>("GET", "/api/v1/jobs/?limit=100", undefined, hub.adminToken);
    expect(listed.body.items.find((j) => j.id === job.id)?.logsUrl).toBeNull();
  });
});
