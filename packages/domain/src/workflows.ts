/**
 * The contract between the workflow agent (which starts and watches workflows), the Temporal
 * worker (which runs them) and the hub (which shows their steps). Plain TypeScript with type-only
 * imports: the worker bundles this file into the workflow sandbox, where only deterministic
 * code may run.
 */
import type { JobKind, JobParams, JobSignal, JobStepSchema } from "./jobs.ts";
import type { IronicInstance } from "./inventory.ts";
import type { z } from "zod";
export * from "./burn-in-tests.ts";

export type JobStep = z.infer<typeof JobStepSchema>;

/**
 * Where one device's burn-in results are written: relative to FM_BURNIN_OUTPUT_DIR on the
 * shared filesystem, and after `burn-in/` in the artifact store. The job's name (the hub makes
 * it: kind, two words, hex digits) and the device's id, never the device's name: that is
 * NetBox's text, and `../../../../tmp/x` or `$(…)` is a valid NetBox name. The same for every
 * attempt. A multi-node test's folder is `burnInAllocationFolder`.
 */
export const burnInDeviceFolder = (jobName: string, deviceId: string): string => `${jobName}/${deviceId}`;
/** The folder of one multi-node test's allocation (see burnInDeviceFolder). */
export const burnInAllocationFolder = (jobName: string, test: string): string => `${jobName}/allocation-${test}`;
/**
 * The workflow marker of folders by device id: a burn-in or repair that started before it
 * (its jobs already writing to the folder named after the device) keeps reading that folder.
 */
export const FOLDER_BY_ID_PATCH = "burn-in-folder-by-device-id";

/** The workflow type that runs each kind. */
export const JOB_WORKFLOWS = {
  ENROL: "enrolWorkflow",
  UNENROL: "unenrolWorkflow",
  BURN_IN: "burnInWorkflow",
  RELEASE: "releaseWorkflow",
  TEARDOWN: "teardownWorkflow",
  REIMAGE: "reimageWorkflow",
  IMAGE_NODE: "imageNodeWorkflow",
  REPAIR: "repairWorkflow",
  SLURM_ADOPT: "slurmAdoptWorkflow",
  NODE_SWAP: "nodeSwapWorkflow",
} as const satisfies Partial<Record<JobKind, string>>;
export type WorkflowKind = keyof typeof JOB_WORKFLOWS;
export const hasWorkflow = (kind: JobKind): kind is WorkflowKind => kind in JOB_WORKFLOWS;

/** Steps of each workflow, in order. Every job shows all of them from the start (PENDING). */
export const WORKFLOW_STEPS = {
  ENROL: [
    "preflight",
    "netbox-check",
    "ironic-enroll",
    "ironic-ports",
    "bmc-configure",
    "ironic-inspect",
    "dhcp-configure",
    "ironic-provide",
    "netbox-activate",
    "hub-record",
  ],
  UNENROL: ["preflight", "netbox-stage", "topology-sync", "hub-record"],
  BURN_IN: ["preflight", "slurm-submit", "slurm-run", "results"],
  RELEASE: ["preflight", "slurm-check", "ironic-check", "hand-back"],
  TEARDOWN: ["preflight", "ironic-teardown", "hub-record"],
  REIMAGE: ["preflight", "ironic-rebuild", "hub-record"],
  IMAGE_NODE: ["preflight", "ironic-deploy", "hub-record"],
  REPAIR: ["preflight", "cordon", "slurm-drain", "ironic-maintenance", "operator", "uncordon", "burn-in", "release"],
  SLURM_ADOPT: ["preflight", "nova-boot", "slurm-register", "slurm-resume", "hub-record"],
  NODE_SWAP: [
    "preflight",
    "validate",
    "bmc-macs",
    "netbox-macs",
    "hub-cordon",
    "ironic-maintenance",
    "netbox-rack",
    "netbox-cables",
    "topology-sync",
    "hub-record",
  ],
} as const satisfies Record<WorkflowKind, readonly string[]>;

/** The query every job workflow answers with its steps and overall progress. */
export const PROGRESS_QUERY = "progress";

/**
 * The Temporal signal the workflow agent forwards an operator's signal of a job with (the hub's
 * `POST /api/v1/jobs/{id}/signal`). Its payload is the job's `signal`.
 */
export const OPERATOR_SIGNAL = "operator";
/** The message of the operator step while the workflow waits for the signal. */
export const WAITING_FOR_OPERATOR = "waiting for operator";

/** One task queue per site: that site's worker is the only one that reaches its Ironic, NetBox and SLURM. */
export const taskQueueFor = (siteSlug: string): string => `fleet-manager-${siteSlug}`;

/** What a job's workflow starts with: its kind's params, as the hub validated them (defaults applied). */
export type JobWorkflowInput<K extends WorkflowKind = WorkflowKind> = {
  [P in K]: { jobId: string; jobName: string; kind: P; params: JobParams<P> };
}[K];

/** The workflow input of a job, typed by its kind. */
export function workflowInputOf(job: {
  id: string;
  name: string;
  kind: JobKind;
  params: unknown;
}): JobWorkflowInput | undefined {
  if (!hasWorkflow(job.kind)) return undefined;
  // The hub validated `params` against this kind's schema when it accepted the job.
  return { jobId: job.id, jobName: job.name, kind: job.kind, params: job.params } as JobWorkflowInput;
}

export type OperatorSignal = JobSignal;

export interface WorkflowProgress {
  steps: JobStep[];
  progress: number;
}

export interface JobWorkflowResult extends WorkflowProgress {
  /** Set when the workflow found the job no longer active and did nothing. */
  skipped?: string;
}

/** What the workflow knows of a device, read from the hub once, at preflight. */
export interface DevicePlan {
  deviceId: string;
  name: string;
  netboxId: number | null;
  bmcAddress: string | null;
  bmcMac: string | null;
  ironicInstance: IronicInstance | null;
  ironicNodeUuid: string | null;
  slurmNodeName: string | null;
  resourceClass: string | null;
  /** The device role's id (SLURM adoption picks the site's bootstrap config by it); absent in plans recorded before. */
  deviceRoleId?: string | null;
}

export interface SitePlan {
  slug: string;
  /** The site has SLURM: burn-in runs there. */
  slurmEnabled: boolean;
  /**
   * SLURM reached through OpenStack (Nova): SLURM adoption, and the release's SLURM step. Absent
   * from plans recorded before the flags were split (those had only `slurmEnabled`).
   */
  openstackSlurmEnabled?: boolean;
  configureDhcp: boolean;
  platformClassActivityReady: boolean;
  /** The site's topology region (topology-sync target), or null; multi-node burn-ins need one. */
  topologyRegion?: string | null;
}

export interface JobPlan {
  site: SitePlan;
  devices: DevicePlan[];
}

/** Failure types activities throw that retrying cannot fix. */
export const NON_RETRYABLE_FAILURES = ["BadInput", "SourceRejected", "NotConfigured"] as const;
/** The failure type a workflow ends with when a step fails; its details carry the steps. */
export const STEP_FAILED = "StepFailed";
export interface StepFailureDetails {
  step: string;
  steps: JobStep[];
}

/**
 * The one-line reason a REPAIR's cordon, SLURM drain and Ironic maintenance carry: the ticket,
 * then the description's first line.
 */
export function repairReason(params: { ticket: string; description?: string | undefined }): string {
  const first = (params.description ?? "")
    .split("\n")[0]!
    .replace(/\p{Cc}+/gu, " ")
    .trim();
  return `repair ${params.ticket}${first ? `: ${first}` : ""}`.slice(0, 200);
}
/**
 * The Ironic maintenance reason of a REPAIR: not the cordon mirror's prefix, so the OpenStack
 * agent leaves it alone when the re-test lifts the cordon, and the release clears only this one.
 */
export const repairMaintenanceReason = (params: { ticket: string; description?: string | undefined }): string =>
  `fleet-manager ${repairReason(params)}`.slice(0, 255);

/** A NetBox rack place: location, rack, lowest unit and face (null when unracked). */
export interface RackPlacePlan {
  location: number | null;
  rack: number | null;
  position: number | null;
  face: string | null;
}

/** What a NODE_SWAP's validation found: both trays, where the spare goes, and whether it is already there. */
export interface NodeSwapPlan {
  failed: DevicePlan;
  spare: DevicePlan;
  /** The failed tray's place in NetBox (or, once moved, the spare's). */
  target: RackPlacePlan;
  /** NetBox already shows the rack move (a rerun after it). */
  moved: boolean;
  /** The failed tray's cables, to move onto the spare (none: a cableless swap); absent in plans recorded before. */
  cables?: CableMovePlan[];
  /**
   * A cabled swap (a GB300 tray replacement): the failed tray has cables to move, or a rerun finds
   * them moved already. Absent in plans recorded before: then `cables` decides.
   */
  cabled?: boolean;
}

/** A cable of the failed tray: its interface (by name), its end, its far end and what it keeps. */
export interface CableMovePlan {
  cableId: number;
  iface: string;
  end: "A" | "B";
  far: { object_type: string; object_id: number }[];
  status: string;
  type: string | null;
  label: string;
  color: string;
  length: number | null;
  lengthUnit: string | null;
  description: string;
}

/** The reason a NODE_SWAP cordons the failed tray and puts its Ironic node into maintenance with. */
export const nodeSwapReason = (failed: string, spare: string, jobName: string): string =>
  `node swap ${jobName}: ${failed} replaced by ${spare}`.slice(0, 200);
