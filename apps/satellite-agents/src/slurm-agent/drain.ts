/**
 * How the agent drains and undrains a node: through slurmrestd's node update where the API
 * version has one (v0.0.40+), else through `scontrol update` (22.05's v0.0.38 has none). Both
 * authenticate with the same JWT, read from its file at each call: scontrol takes it in
 * `SLURM_JWT` (slurm.conf's `AuthAltTypes=auth/jwt`), and reaches slurmctld as `SLURM_CONF` or
 * configless mode says. The token's user needs SLURM operator rights to update nodes.
 */
import { execFile } from "node:child_process";
import type { SlurmClient } from "@fm/clients";

export interface NodeDrainer {
  readonly via: "rest" | "scontrol";
  drain(node: string, reason: string): Promise<void>;
  undrain(node: string): Promise<void>;
  /** Returns a node to service: clears a drain and a DOWN state (SLURM adoption of a new node). */
  resume(node: string): Promise<void>;
}

export function restDrainer(client: SlurmClient): NodeDrainer {
  return {
    via: "rest",
    drain: (node, reason) => client.updateNode(node, { state: "DRAIN", reason }),
    undrain: (node) => client.updateNode(node, { state: "UNDRAIN" }),
    resume: (node) => client.updateNode(node, { state: "RESUME" }),
  };
}

export interface ScontrolOptions {
  /** The scontrol executable (default `scontrol` on PATH). */
  command: string;
  /** The JWT, read at each call. */
  token: () => string;
  timeoutMs: number;
}

/** Fails with scontrol's own message (never the token). */
export class ScontrolError extends Error {
  override name = "ScontrolError";
}

export function scontrolDrainer(o: ScontrolOptions): NodeDrainer {
  const run = (args: string[]) =>
    new Promise<void>((resolve, reject) => {
      // No shell: each argument reaches scontrol as it is, a reason with spaces included.
      execFile(
        o.command,
        args,
        { env: { ...process.env, SLURM_JWT: o.token() }, timeout: o.timeoutMs },
        (err, _stdout, stderr) => {
          if (!err) return resolve();
          const why = stderr.trim() || err.message;
          reject(new ScontrolError(`scontrol ${args.slice(0, 3).join(" ")} failed: ${why}`, { cause: err }));
        },
      );
    });
  return {
    via: "scontrol",
    drain: (node, reason) => run(["update", `nodename=${node}`, "state=drain", `reason=${reason}`]),
    undrain: (node) => run(["update", `nodename=${node}`, "state=undrain"]),
    resume: (node) => run(["update", `nodename=${node}`, "state=resume"]),
  };
}
