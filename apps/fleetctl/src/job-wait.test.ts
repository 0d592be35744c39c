import { describe, expect, it } from "vitest";
import type { Job } from "@fm/domain";
import { exitForJob, stepChanges } from "./job-wait.ts";

const job = (over: Partial<Job>): Job =>
  ({
    id: "0193a2b4-0000-7000-8000-000000000001",
    name: "burn-in-calm-otter-1a2b",
    kind: "BURN_IN",
    status: "PENDING",
    progress: 0,
    steps: [
      { name: "preflight", status: "PENDING" },
      { name: "slurm-run", status: "PENDING" },
    ],
    error: null,
    ...over,
  }) as Job;

describe("stepChanges", () => {
  it("the first time: the status, and the steps that have started", () => {
    expect(stepChanges(undefined, job({}))).toEqual(["job burn-in-calm-otter-1a2b PENDING 0%"]);
  });
  it("then only what changed: a new status, a step's status or message, an error", () => {
    const running = job({
      status: "RUNNING",
      progress: 0.25,
      steps: [
        { name: "preflight", status: "SUCCEEDED" },
        { name: "slurm-run", status: "RUNNING", message: "job 42 on node-1" },
      ],
    });
    expect(stepChanges(job({}), running)).toEqual([
      "job burn-in-calm-otter-1a2b RUNNING 25%",
      "  step preflight SUCCEEDED",
      "  step slurm-run RUNNING: job 42 on node-1",
    ]);
    expect(stepChanges(running, { ...running, progress: 0.5 })).toEqual([]);
    const moved = { ...running, steps: [running.steps[0]!, { ...running.steps[1]!, message: "job 42 on node-2" }] };
    expect(stepChanges(running, moved)).toEqual(["  step slurm-run RUNNING: job 42 on node-2"]);
    const failed = { ...running, status: "FAILED", error: { message: "node down", step: "slurm-run" } } as Job;
    expect(stepChanges(running, failed)).toEqual([
      "job burn-in-calm-otter-1a2b FAILED 25%",
      "  error in slurm-run: node down",
    ]);
  });
});

describe("exitForJob", () => {
  it("says how the job ended", () => {
    expect(["SUCCEEDED", "FAILED", "CANCELLED"].map((s) => exitForJob(s as Job["status"]))).toEqual([0, 10, 11]);
  });
});
