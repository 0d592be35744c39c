/**
 * Determinism: every committed history (../histories, recorded by `npm run histories:record` on
 * a real Temporal server) must replay against the current workflow code. A change that reorders
 * or replaces activities of a workflow that may be running in production fails here; guard such
 * a change with `patched()` instead. No server is needed: replay runs in the worker alone.
 */
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { historyFromJSON } from "@temporalio/common/lib/proto-utils";
import { Worker } from "@temporalio/worker";

const dir = fileURLToPath(new URL("../histories/", import.meta.url));
const files = readdirSync(dir)
  .filter((f) => f.endsWith(".json"))
  .sort();
const history = (f: string) => historyFromJSON(JSON.parse(readFileSync(`${dir}${f}`, "utf8")));
const workflowsPath = fileURLToPath(new URL("./index.ts", import.meta.url));

describe("workflow replay of committed histories", () => {
  it("has a history for every workflow, its failures and its cancellation", () => {
    expect(files).toEqual(
      expect.arrayContaining([
        "enrol-succeeded.json",
        "enrol-not-staged.json",
        "burn-in-cancelled.json",
        "burn-in-exit-code.json",
        "burn-in-submit-failed.json",
        "burn-in-results-passed.json",
        "burn-in-results-failed.json",
        "burn-in-nvloom.json",
        "burn-in-nvloom-no-region.json",
        "unenrol-succeeded.json",
        "unenrol-topology-sync.json",
        "node-swap-succeeded.json",
        "node-swap-mac-forbidden.json",
        "node-swap-cabled.json",
        "repair-repaired.json",
        "repair-operator-failed.json",
        "repair-retest-failed.json",
        "repair-retest-results-passed.json",
        "repair-retest-results-xid.json",
        "repair-retest-cancelled.json",
        "release-no-slurm.json",
        "teardown-succeeded.json",
        "reimage-succeeded.json",
        "enrol-with-ports.json",
        "enrol-port-mac-taken.json",
        "image-node-succeeded.json",
        "image-node-deploy-failed.json",
        "enrol-bmc-verified.json",
        "enrol-bmc-wrong-password.json",
      ]),
    );
  });

  it("replays every history against the current workflow code", async () => {
    const results: { workflowId: string; error?: Error }[] = [];
    const histories = files.map((f) => ({ workflowId: f.replace(/\.json$/, ""), history: history(f) }));
    for await (const r of Worker.runReplayHistories({ workflowsPath, replayName: "committed-histories" }, histories))
      results.push(r);
    expect(results.filter((r) => r.error).map((r) => `${r.workflowId}: ${r.error!.message}`)).toEqual([]);
    expect(results).toHaveLength(files.length);
  }, 120_000);

  it("catches a non-deterministic change: the enrol history against a version that provides before it inspects", async () => {
    const reordered = fileURLToPath(new URL("../test-fixtures/workflows-reordered.ts", import.meta.url));
    await expect(
      Worker.runReplayHistory({ workflowsPath: reordered, replayName: "reordered" }, history("enrol-succeeded.json")),
    ).rejects.toMatchObject({
      name: "DeterminismViolationError",
      message: expect.stringMatching(/ironicInspect.*ironicProvide/),
    });
  }, 120_000);
});
