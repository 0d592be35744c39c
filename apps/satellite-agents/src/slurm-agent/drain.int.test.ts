/**
 * The scontrol drainer against a real SLURM 22.05 (whose slurmrestd v0.0.38 has no node update):
 * it drains and undrains with the JWT it is given, and a rejected token fails with scontrol's
 * message, never the token.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { slurmCommand, startSlurm, type SlurmPeer } from "@fm/test-support/slurm";
import { scontrolDrainer } from "./drain.ts";

let slurm: SlurmPeer;
let savedConf: string | undefined;
beforeAll(async () => {
  slurm = await startSlurm({ nodes: 2 });
  // scontrol finds the controller through SLURM_CONF, as the agent's container would.
  savedConf = process.env.SLURM_CONF;
  process.env.SLURM_CONF = slurm.slurmConf;
}, 120_000);
afterAll(async () => {
  if (savedConf === undefined) delete process.env.SLURM_CONF;
  else process.env.SLURM_CONF = savedConf;
  await slurm?.stop();
}, 60_000);

const show = async (node: string) => (await slurmCommand(slurm, "scontrol", ["-o", "show", "node", node])).trim();

describe("scontrolDrainer on SLURM 22.05", () => {
  it("drains a node with a reason that has spaces and colons, and undrains it", async () => {
    const d = scontrolDrainer({ command: "scontrol", token: () => slurm.token, timeoutMs: 30_000 });
    await d.drain("gpu001", "fleet-manager cordon: RMA 7: GPU 3 Xid 79");
    expect(await show("gpu001")).toMatch(/State=\S*DRAIN\S* .*Reason=fleet-manager cordon: RMA 7: GPU 3 Xid 79 \[/);
    await d.undrain("gpu001");
    expect(await show("gpu001")).not.toMatch(/DRAIN|Reason=/);
  });

  it("fails on a rejected token with scontrol's message and without the token", async () => {
    const bad = "eyJhbGciOiJIUzI1NiJ9.not-a-valid-token.sig";
    const d = scontrolDrainer({ command: "scontrol", token: () => bad, timeoutMs: 30_000 });
    const err = (await d.drain("gpu002", "fleet-manager cordon: x").catch((e: unknown) => e)) as Error;
    expect(err).toBeInstanceOf(Error);
    expect(err.message).toMatch(/^scontrol update nodename=gpu002 state=drain failed: /);
    expect(err.message).not.toContain(bad);
    expect(await show("gpu002")).not.toMatch(/DRAIN/);
  });
});
