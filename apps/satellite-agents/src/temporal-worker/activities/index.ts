/**
 * The activities of the job workflows, one module per source, built from injected clients (hub,
 * NetBox, Ironic, SLURM, the DHCP hosts folder), so tests run them against real peers under
 * MockActivityEnvironment. `Activities` is the one type the workflows proxy.
 *
 * Every activity is idempotent: it looks before it acts (the Ironic node by name, the NetBox
 * status, the SLURM job by its unique name, the DHCP file's content), so a retry after a worker
 * died mid-activity, or a Temporal retry after a timeout, never applies an effect twice.
 * Waiting activities poll and heartbeat; a cancelled activity stops waiting at its next poll.
 * Errors that retrying cannot fix are thrown as non-retryable ApplicationFailures (types in
 * NON_RETRYABLE_FAILURES); outages of a source are thrown as they are and retried.
 */
import type { ActivityDeps } from "./deps.ts";
import { burnInActivities } from "./burn-in.ts";
import { dhcpActivities } from "./dhcp.ts";
import { hubActivities } from "./hub.ts";
import { ironicActivities } from "./ironic.ts";
import { portActivities } from "./ironic-ports.ts";
import { deployActivities } from "./ironic-deploy.ts";
import { netboxActivities } from "./netbox.ts";
import { nodeSwapActivities } from "./node-swap.ts";
import { novaActivities } from "./nova.ts";
import { slurmActivities } from "./slurm.ts";

export function createActivities(deps: ActivityDeps) {
  return {
    ...hubActivities(deps),
    ...netboxActivities(deps),
    ...ironicActivities(deps),
    ...portActivities(deps),
    ...deployActivities(deps),
    ...dhcpActivities(deps),
    ...slurmActivities(deps),
    ...burnInActivities(deps),
    ...novaActivities(deps),
    ...nodeSwapActivities(deps),
  };
}
export type Activities = ReturnType<typeof createActivities>;

export type { ActivityDeps } from "./deps.ts";
export { planOf } from "./hub.ts";
