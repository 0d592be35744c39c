import { describe, expect, it } from "vitest";
import { WorkflowFailedError } from "@temporalio/client";
import { ApplicationFailure, CancelledFailure, RetryState, TerminatedFailure } from "@temporalio/common";
import type { Job } from "@fm/domain";
import { STEP_FAILED, type JobStep } from "@fm/domain/workflows";
import { completedReport, failedReport, logsUrlOf, progressReport, workflowFailure } from "./reports.ts";

const job = (over: Partial<Pick<Job, "status" | "cancelRequestedAt">> = {}): Job => ({
  id: "0190a5b4-0000-7000-8000-000000000001",
  name: "enrol-1",
  kind: "ENROL",
  status: "SUBMITTED",
  siteId: "0190a5b4-0000-7000-8000-000000000002",
  deviceIds: [],
  params: {},
  steps: [],
  progress: 0,
  error: null,
  burnIn: [],
  logsUrl: null,
  workflowId: "0190a5b4-0000-7000-8000-000000000001",
  signal: null,
  createdBy: "fleet-admin",
  createdAt: "2026-01-01T00:00:00.000Z",
  updatedAt: "2026-01-01T00:00:00.000Z",
  cancelRequestedAt: null,
  finishedAt: null,
  version: 1,
  ...over,
});
const steps = (...statuses: JobStep["status"][]): JobStep[] =>
  statuses.map((status, i) => ({ name: `step-${i}`, status }));

describe("what the job dispatcher reports", () => {
  it("a submitted job becomes RUNNING once a step started, and only then", () => {
    expect(progressReport(job(), { steps: steps("PENDING", "PENDING"), progress: 0 })).toEqual({
      steps: steps("PENDING", "PENDING"),
      progress: 0,
    });
    expect(progressReport(job(), { steps: steps("RUNNING", "PENDING"), progress: 0.25 })).toEqual({
      status: "RUNNING",
      steps: steps("RUNNING", "PENDING"),
      progress: 0.25,
    });
    expect(progressReport(job({ status: "RUNNING" }), { steps: steps("SUCCEEDED", "RUNNING"), progress: 0.5 })).toEqual(
      { steps: steps("SUCCEEDED", "RUNNING"), progress: 0.5 },
    );
  });

  it("a completed workflow succeeds the job; one that did nothing cancels it if a cancel was asked, else fails it", () => {
    const done = steps("SUCCEEDED", "SUCCEEDED");
    expect(completedReport(job({ status: "RUNNING" }), { steps: done, progress: 1 })).toEqual({
      status: "SUCCEEDED",
      steps: done,
      progress: 1,
    });
    const skipped = { steps: steps("SUCCEEDED", "SKIPPED"), progress: 1, skipped: "job no longer active" };
    expect(completedReport(job({ status: "CANCELLING" }), skipped)).toEqual({
      status: "CANCELLED",
      steps: skipped.steps,
    });
    expect(completedReport(job({ cancelRequestedAt: "2026-01-01T00:00:01.000Z" }), skipped).status).toBe("CANCELLED");
    expect(completedReport(job(), skipped)).toEqual({
      status: "FAILED",
      steps: skipped.steps,
      error: { message: "The workflow did nothing: job no longer active" },
    });
  });

  it("a failed step shows its message, its innermost cause and the workflow's steps", () => {
    const failedSteps = steps("SUCCEEDED", "FAILED", "PENDING");
    const activity = ApplicationFailure.create({ message: "node gpu001 is clean failed", type: "SourceRejected" });
    const err = new WorkflowFailedError(
      "Workflow execution failed",
      ApplicationFailure.create({
        message: "ironic-provide: node gpu001 is clean failed",
        type: STEP_FAILED,
        details: [{ step: "ironic-provide", steps: failedSteps }],
        cause: new Error("Activity task failed", { cause: activity }),
      }),
      RetryState.NON_RETRYABLE_FAILURE,
    );
    const failure = workflowFailure(err);
    expect(failure).toEqual({
      message: "ironic-provide: node gpu001 is clean failed",
      cause: "SourceRejected: node gpu001 is clean failed",
      step: "ironic-provide",
      steps: failedSteps,
    });
    expect(failedReport(failure, steps("RUNNING"))).toEqual({
      status: "FAILED",
      steps: failedSteps,
      error: {
        message: "ironic-provide: node gpu001 is clean failed",
        cause: "SourceRejected: node gpu001 is clean failed",
        step: "ironic-provide",
      },
    });
  });

  it("a workflow ended outside its steps says how, its unfinished steps end FAILED, and errors are cut to 4,000 characters", () => {
    expect(
      workflowFailure(
        new WorkflowFailedError("x", new TerminatedFailure("by an operator"), RetryState.NON_RETRYABLE_FAILURE),
      ),
    ).toEqual({
      message: "The workflow was terminated in Temporal: by an operator",
    });
    expect(
      workflowFailure(
        new WorkflowFailedError("x", new CancelledFailure("cancelled"), RetryState.NON_RETRYABLE_FAILURE),
      ),
    ).toEqual({
      message: "The workflow was cancelled",
    });
    const report = failedReport({ message: "x".repeat(5000) }, steps("SUCCEEDED", "RUNNING", "PENDING"));
    expect(report.steps).toEqual(steps("SUCCEEDED", "FAILED", "FAILED"));
    expect(report.error!.message).toHaveLength(4000);
  });

  it("a failure links the site's log explorer, queried for the job", () => {
    const template =
      'https://grafana.example/explore?left={"queries":[{"expr":"{namespace=\\"fleet-manager\\"} |= \\"{jobId}\\""}]}';
    const url = logsUrlOf(template, "0190a5b4-0000-7000-8000-000000000001")!;
    expect(url).toContain('|= \\"0190a5b4-0000-7000-8000-000000000001\\"');
    expect(url).not.toContain("{jobId}");
    expect(failedReport({ message: "m" }, [], url).logsUrl).toBe(url);
    expect(logsUrlOf(undefined, "x")).toBeUndefined();
    expect(failedReport({ message: "m" }, [])).not.toHaveProperty("logsUrl");
  });
});
