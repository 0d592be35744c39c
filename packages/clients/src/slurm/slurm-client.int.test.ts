import { readFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "@fm/test-support/ports";
import { scontrolJob, startSlurm, waitForScontrolJob, type SlurmPeer } from "@fm/test-support/slurm";
import { eventually } from "@fm/test-support/wait";
import { SlurmApiError, SlurmClient, SlurmUnavailableError, isTerminalSlurmState, type SlurmJob } from "./index.ts";

/** Jobs wait for slurmctld's first scheduling pass (~3 s after it starts), then run for seconds. */
const JOB_TEST_TIMEOUT = 90_000;
const JOB_WAIT = 60_000;

let slurm: SlurmPeer;
let client: SlurmClient;
let seq = 0;
/** A job name no other test (or earlier run) uses. */
const uniqueName = (what: string) => `int-${what}-${process.pid}-${++seq}`;

beforeAll(async () => {
  slurm = await startSlurm();
  client = new SlurmClient({ baseUrl: slurm.url, user: "root", token: () => slurm.token, backoffMs: 20 });
}, 120_000);
afterAll(() => slurm?.stop(), 60_000);

/** Polls the client until the job is in a final state. */
async function waitForEnd(jobId: number): Promise<SlurmJob> {
  return eventually(
    async () => {
      const job = await client.job(jobId);
      if (!job || !isTerminalSlurmState(job.state))
        throw new Error(`job ${jobId} not finished: ${job?.state ?? "unknown"}`);
      return job;
    },
    JOB_WAIT,
    250,
  );
}

describe("SlurmClient against a real slurmrestd (22.05, v0.0.38)", () => {
  it("pings the controller and lists every node idle in its partition", async () => {
    const ping = await client.ping();
    expect(ping.controllers).toEqual([expect.objectContaining({ up: true, mode: "primary" })]);
    expect(ping.slurmVersion).toMatch(/^\d+\.\d+\.\d+$/);

    const nodes = await client.nodes();
    expect(nodes.map((n) => n.name).sort()).toEqual(slurm.nodes);
    for (const node of nodes)
      expect(node).toEqual({ name: node.name, state: "idle", stateFlags: [], reason: null, partitions: ["gpu"] });
  });

  it(
    "runs a job pinned to a node there and reports it COMPLETED with exit code 0",
    async () => {
      const name = uniqueName("pinned");
      const marker = join(slurm.dir, `${name}.ran-on`);
      const { jobId } = await client.submitJob({
        name,
        script: `#!/bin/bash\necho "$SLURMD_NODENAME" > ${marker}\n`,
        nodes: ["gpu002"],
        workingDirectory: slurm.dir,
        standardOutput: "/dev/null",
        timeLimitMinutes: 5,
        comment: "fleet-manager integration test",
        environment: { FM_TEST: "1" },
      });
      expect(jobId).toBeGreaterThan(0);

      const job = await waitForEnd(jobId);
      expect(job).toMatchObject({
        jobId,
        name,
        state: "COMPLETED",
        exitCode: 0,
        signal: null,
        nodes: ["gpu002"],
        partition: "gpu",
        comment: "fleet-manager integration test",
      });
      expect(job.startTime).toBeInstanceOf(Date);
      expect(job.endTime!.getTime()).toBeGreaterThanOrEqual(job.startTime!.getTime());
      // The script really ran, on that node; slurmctld agrees.
      expect((await readFile(marker, "utf8")).trim()).toBe("gpu002");
      expect(await scontrolJob(slurm, jobId)).toMatchObject({
        state: "COMPLETED",
        exitCode: "0:0",
        nodeList: "gpu002",
      });
    },
    JOB_TEST_TIMEOUT,
  );

  it(
    "reports a failing script as FAILED with its exit code",
    async () => {
      const { jobId } = await client.submitJob({
        name: uniqueName("exit3"),
        script: "#!/bin/bash\nsleep 2; exit 3\n",
        nodes: ["gpu003"],
        standardOutput: "/dev/null",
      });
      const job = await waitForEnd(jobId);
      expect(job).toMatchObject({
        state: "FAILED",
        exitCode: 3,
        signal: null,
        stateReason: "NonZeroExitCode",
        nodes: ["gpu003"],
      });
      expect(await scontrolJob(slurm, jobId)).toMatchObject({ state: "FAILED", exitCode: "3:0" });
    },
    JOB_TEST_TIMEOUT,
  );

  it(
    "cancels a running job, which then ends CANCELLED",
    async () => {
      const { jobId } = await client.submitJob({
        name: uniqueName("long"),
        script: "#!/bin/bash\nsleep 300\n",
        nodes: ["gpu001"],
        standardOutput: "/dev/null",
      });
      await eventually(async () => expect((await client.job(jobId))?.state).toBe("RUNNING"), JOB_WAIT, 250);

      expect(await client.cancelJob(jobId)).toEqual({ outcome: "cancelled", state: "RUNNING" });

      const job = await waitForEnd(jobId);
      expect(job).toMatchObject({ state: "CANCELLED", exitCode: null, nodes: ["gpu001"] });
      expect(job.signal).toBeGreaterThan(0);
      expect((await scontrolJob(slurm, jobId))?.state).toBe("CANCELLED");
      // The node is free again.
      await eventually(
        async () => expect((await client.nodes()).find((n) => n.name === "gpu001")?.state).toBe("idle"),
        JOB_WAIT,
        250,
      );
    },
    JOB_TEST_TIMEOUT,
  );

  it(
    "does not throw when cancelling a finished or an unknown job, and says which it was",
    async () => {
      const { jobId } = await client.submitJob({
        name: uniqueName("quick"),
        script: "#!/bin/bash\ntrue\n",
        standardOutput: "/dev/null",
      });
      await waitForEnd(jobId);

      expect(await client.cancelJob(jobId)).toEqual({ outcome: "already-finished", state: "COMPLETED" });
      expect((await client.job(jobId))?.state).toBe("COMPLETED");
      expect(await client.cancelJob(987_654)).toEqual({ outcome: "not-found", state: null });
      expect(await client.job(987_654)).toBeNull();
    },
    JOB_TEST_TIMEOUT,
  );

  it(
    "finds a job by its name, so a caller can submit idempotently",
    async () => {
      const name = uniqueName("by-name");
      expect(await client.jobsByName(name)).toEqual([]);
      const { jobId } = await client.submitJob({ name, script: "#!/bin/bash\nsleep 1\n", standardOutput: "/dev/null" });

      const found = await client.jobsByName(name);
      expect(found.map((j) => [j.jobId, j.name])).toEqual([[jobId, name]]);
      await waitForScontrolJob(slurm, jobId, undefined, JOB_WAIT);
      expect((await client.jobsByName(name))[0]).toMatchObject({ jobId, state: "COMPLETED", exitCode: 0 });
    },
    JOB_TEST_TIMEOUT,
  );

  it("rejects a wrong token with a SlurmApiError that explains, without the token", async () => {
    // A well-formed JWT with a wrong signature: what an expired or foreign token looks like.
    const [header, payload] = slurm.token.split(".");
    const forged = `${header}.${payload}.c2lnbmF0dXJlLW9mLWFub3RoZXIta2V5`;
    const bad = new SlurmClient({ baseUrl: slurm.url, user: "root", token: () => forged, backoffMs: 10 });

    const err = await bad.nodes().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(SlurmApiError);
    const apiErr = err as SlurmApiError;
    expect(apiErr.status).toBe(500); // 22.05 does not say 401 for a token slurmctld rejects
    expect(apiErr.message).toMatch(/token may be invalid, expired or for another user/);
    expect(apiErr.message).not.toContain(forged);
    expect(apiErr.message).not.toContain(payload);
    expect(JSON.stringify(apiErr.errors)).not.toContain(payload);

    // The same for every kind of request, the submit included (which says it differently).
    await expect(bad.job(1)).rejects.toMatchObject({ name: "SlurmApiError", status: 500 });
    const submitErr = await bad
      .submitJob({ name: uniqueName("forged"), script: "#!/bin/bash\ntrue\n" })
      .catch((e: unknown) => e);
    expect(submitErr).toBeInstanceOf(SlurmApiError);
    expect((submitErr as Error).message).toMatch(/token may be invalid/);
    expect((submitErr as Error).message).not.toContain(payload);
  });

  it("gives SlurmUnavailableError when nothing answers", async () => {
    const port = await freePort();
    const down = new SlurmClient({
      baseUrl: `http://127.0.0.1:${port}`,
      user: "root",
      token: () => slurm.token,
      maxAttempts: 2,
      backoffMs: 10,
    });
    await expect(down.nodes()).rejects.toBeInstanceOf(SlurmUnavailableError);
    await expect(down.job(1)).rejects.toMatchObject({
      name: "SlurmUnavailableError",
      attempts: 2,
      message: expect.stringMatching(/ECONNREFUSED/),
    });
    // A refused connection sent nothing, so even a submit may try again.
    await expect(down.submitJob({ name: uniqueName("nowhere"), script: "#!/bin/bash\ntrue\n" })).rejects.toMatchObject({
      name: "SlurmUnavailableError",
      attempts: 2,
    });
  });

  it("sends a submit only once when the connection drops after the request went out", async () => {
    // A stand-in for a network failure: reads the request, then resets the connection.
    let received = 0;
    const server: Server = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        received++;
        res.socket?.destroy();
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    try {
      const { port } = server.address() as { port: number };
      const flaky = new SlurmClient({
        baseUrl: `http://127.0.0.1:${port}`,
        user: "root",
        token: () => slurm.token,
        maxAttempts: 4,
        backoffMs: 10,
      });
      const err = await flaky
        .submitJob({ name: uniqueName("once"), script: "#!/bin/bash\ntrue\n" })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SlurmUnavailableError);
      expect((err as Error).message).toMatch(/may have reached slurmrestd/);
      expect(received).toBe(1);
      // A read is retried.
      await expect(flaky.nodes()).rejects.toBeInstanceOf(SlurmUnavailableError);
      expect(received).toBe(1 + 4);
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});
