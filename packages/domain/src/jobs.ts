/**
 * Jobs: work on devices that the site's workflow agent hands to Temporal. The
 * hub owns their record: kind, validated parameters, state machine, steps with progress, and
 * the rule that a device has at most one active job (enforced by the database).
 */
import { z } from "zod";
import { glanceImageRefProblem, parseImageSource } from "./image-source.ts";
import { OrderedPageQuery, Timestamp, Uuid, listOf } from "./common.ts";
import type { Device } from "./devices.ts";
import { IronicInstance, NetboxDeviceStatus } from "./inventory.ts";
import { BurnInDeviceResultSchema, BurnInOverrideSchema, BurnInTest } from "./burn-in.ts";
import { uniqueBy } from "./reflections.ts";

export const JOB_KINDS = [
  "ENROL",
  "UNENROL",
  "BURN_IN",
  "RELEASE",
  "TEARDOWN",
  "REIMAGE",
  "IMAGE_NODE",
  "REPAIR",
  "NODE_SWAP",
  "SLURM_ADOPT",
] as const;
export const JobKind = z.enum(JOB_KINDS);
export type JobKind = z.infer<typeof JobKind>;

export const JOB_STATUSES = [
  "PENDING",
  "SUBMITTED",
  "RUNNING",
  "CANCELLING",
  "SUCCEEDED",
  "FAILED",
  "CANCELLED",
] as const;
export const JobStatus = z.enum(JOB_STATUSES);
export type JobStatus = z.infer<typeof JobStatus>;
export const ACTIVE_JOB_STATUSES: readonly JobStatus[] = ["PENDING", "SUBMITTED", "RUNNING", "CANCELLING"];
export const TERMINAL_JOB_STATUSES: readonly JobStatus[] = ["SUCCEEDED", "FAILED", "CANCELLED"];

/**
 * PENDING → SUBMITTED → RUNNING → SUCCEEDED | FAILED, with CANCELLING between an active state
 * and CANCELLED. A PENDING job nothing has picked up is cancelled at once. A workflow may
 * finish (either way) while its cancellation is on its way.
 */
const TRANSITIONS: Record<JobStatus, readonly JobStatus[]> = {
  PENDING: ["SUBMITTED", "CANCELLED", "FAILED"],
  SUBMITTED: ["RUNNING", "CANCELLING", "SUCCEEDED", "FAILED"],
  RUNNING: ["CANCELLING", "SUCCEEDED", "FAILED"],
  CANCELLING: ["CANCELLED", "SUCCEEDED", "FAILED"],
  SUCCEEDED: [],
  FAILED: [],
  CANCELLED: [],
};
export const canTransition = (from: JobStatus, to: JobStatus): boolean => from === to || TRANSITIONS[from].includes(to);

const Name = z.string().min(1).max(100);

/** Hex digests Ironic checks a downloaded image against (`image_os_hash_algo` / `image_os_hash_value`). */
const OS_HASH_LENGTH = { md5: 32, sha256: 64, sha512: 128 } as const;
const ImageNodeParams = z
  .strictObject({
    image: z
      .string()
      .min(1)
      .max(2000)
      .describe(
        "Glance image id or name, or an https:// URL of a whole-disk image the conductor downloads (http:// only where the hub allows it); never a file:// or other URL",
      ),
    osHash: z
      .strictObject({
        algo: z.enum(["md5", "sha256", "sha512"]),
        value: z.string().regex(/^[0-9a-f]+$/i, "must be a hex digest"),
      })
      .optional()
      .describe("Digest of the image; required for a URL (Glance supplies its own)"),
    userData: z
      .string()
      .max(64 * 1024)
      .optional()
      .describe("cloud-init user data, written to the node's config drive"),
  })
  .superRefine((p, ctx) => {
    // The hub's own FM_IMAGE_ALLOW_HTTP and FM_IMAGE_HOSTS are applied on top (jobs service).
    const source = parseImageSource(p.image);
    if (!source.ok) ctx.addIssue({ code: "custom", path: ["image"], message: source.message });
    if (source.ok && source.source.kind === "url" && !p.osHash)
      ctx.addIssue({
        code: "custom",
        path: ["osHash"],
        message: "an image URL needs its digest (Glance images carry their own)",
      });
    if (p.osHash && p.osHash.value.length !== OS_HASH_LENGTH[p.osHash.algo])
      ctx.addIssue({
        code: "custom",
        path: ["osHash", "value"],
        message: `a ${p.osHash.algo} digest has ${OS_HASH_LENGTH[p.osHash.algo]} hex digits`,
      });
  });
/**
 * A link to the site's log explorer, which every consumer of a job (the UI, fleetctl, the feed's
 * readers) may open: http(s) only, never javascript:, data:, file: or vbscript:.
 */
export const LogsUrlSchema = z.url({ protocol: /^https?$/, error: "must be an http(s) URL" }).max(4000);

/** Parameters per kind: unknown fields are refused, like everywhere in the API. */
export const JOB_PARAMS = {
  ENROL: z.strictObject({
    configureDhcp: z.boolean().optional().describe("Configure DHCP for the BMC (only where the site enables it)"),
    platformClass: Name.optional().describe(
      "Recorded in NetBox custom_fields.platform_class once the site's gate is on",
    ),
    tags: z.array(Name).max(20).optional().describe("Existing NetBox tags to attach"),
  }),
  UNENROL: z.strictObject({ reason: z.string().max(1000).optional() }),
  BURN_IN: z.strictObject({
    durationMinutes: z
      .number()
      .int()
      .min(1)
      .max(7 * 24 * 60)
      .default(60),
    partition: Name.optional().describe("SLURM partition (the GPU partition); default the site's"),
    tests: z
      .array(BurnInTest)
      .min(1)
      .max(3)
      .refine((t) => new Set(t).size === t.length, { message: "each test once" })
      .default(["hardware-tests"])
      .describe(
        "Hardware tests to run, in order. nvloom is multi-node: one allocation over every device, at a site with a topology region",
      ),
  }),
  RELEASE: z.strictObject({
    burnInOverride: BurnInOverrideSchema.optional().describe(
      "Hand over devices whose last burn-in failed; the reason is recorded in the audit",
    ),
  }),
  TEARDOWN: z.strictObject({ reason: z.string().max(1000).optional() }),
  REIMAGE: z.strictObject({
    image: Name.superRefine((v, ctx) => {
      const problem = glanceImageRefProblem(v);
      if (problem) ctx.addIssue({ code: "custom", message: problem });
    }).describe("Glance image name or id (never a URL or a path)"),
  }),
  IMAGE_NODE: ImageNodeParams,
  REPAIR: z.strictObject({
    ticket: Name.describe("The repair ticket; it names the cordon, the SLURM drain and the Ironic maintenance"),
    description: z.string().max(4000).optional(),
    burnInMinutes: z
      .number()
      .int()
      .min(1)
      .max(7 * 24 * 60)
      .default(60)
      .describe("How long the re-test after a repair runs"),
    partition: Name.optional().describe("SLURM partition of the re-test; default the site's"),
  }),
  NODE_SWAP: z.strictObject({ spareDeviceId: Uuid }),
  // Image, flavor, GRES and user data come from the site's SlurmBootstrapConfig for the device's role.
  SLURM_ADOPT: z.strictObject({}),
} as const satisfies Record<JobKind, z.ZodType>;

/** A kind's parameters as the hub stores and serves them (defaults applied). */
export type JobParams<K extends JobKind = JobKind> = z.output<(typeof JOB_PARAMS)[K]>;

/** One schema per kind, keyed by kind, with the kind's own type (zod cannot index a generic). */
const byKind = <S>(of: <K extends JobKind>(kind: K) => S): { [K in JobKind]: S } =>
  Object.fromEntries(JOB_KINDS.map((kind) => [kind, of(kind)])) as { [K in JobKind]: S };
const paramsOf = <K extends JobKind>(kind: K) => JOB_PARAMS[kind] as z.ZodType as (typeof JOB_PARAMS)[K];
const union = <T extends Record<JobKind, z.ZodObject>>(variants: T) =>
  Object.values(variants) as [T[JobKind], ...T[JobKind][]];

/**
 * A kind's params, `{}` when left out. Where `{}` is no valid params (a REIMAGE needs its image),
 * the document says params are required and shows no default (an example `{}` that fails the
 * schema, as a linter found); a request that leaves them out is still a 400 naming the missing
 * fields, not one saying only that params are missing.
 */
const paramsOrDefaults = (params: z.ZodObject) =>
  params.safeParse({}).success ? params.prefault({}) : z.preprocess((v) => v ?? {}, params);

const jobCreateOf = <K extends JobKind>(kind: K) =>
  z.strictObject({
    kind: z.literal(kind),
    deviceIds: z.array(Uuid).min(1).max(100).describe("Devices of one site; each may have only one active job"),
    // Omitted params are the kind's defaults (or a 400 naming the required ones).
    params: paramsOrDefaults(paramsOf(kind) as z.ZodObject) as unknown as z.ZodPrefault<(typeof JOB_PARAMS)[K]>,
  });
const JOB_CREATE = byKind(jobCreateOf) as { [K in JobKind]: ReturnType<typeof jobCreateOf<K>> };

/** What creates a job: a union on `kind`, each kind with its own params schema. */
export const JobCreateSchema = z.discriminatedUnion("kind", union(JOB_CREATE)).meta({ id: "JobCreate" });
/** A job creation as the hub works with it (params parsed, defaults applied). */
export type JobCreate = z.output<typeof JobCreateSchema>;
/** A job creation as a caller sends it (params and defaulted fields may be left out). */
export type JobCreateInput = z.input<typeof JobCreateSchema>;

/**
 * What an operator tells a job waiting for them (a REPAIR hands its devices over and waits):
 * `repaired` re-tests and releases the devices, `failed` ends the job FAILED with the devices
 * left out of service.
 */
export const OPERATOR_OUTCOMES = ["repaired", "failed"] as const;
export const OperatorOutcome = z.enum(OPERATOR_OUTCOMES);
export type OperatorOutcome = z.infer<typeof OperatorOutcome>;
/** The kinds whose workflow waits for an operator's signal. */
export const SIGNALLED_JOB_KINDS: readonly JobKind[] = ["REPAIR"];

export const JobSignalCreateSchema = z
  .strictObject({
    outcome: OperatorOutcome,
    note: z.string().trim().min(1).max(2000).optional().describe("What was done, for the job's record"),
  })
  .meta({ id: "JobSignalCreate" });
export type JobSignalCreate = z.infer<typeof JobSignalCreateSchema>;

/** The operator's signal as the job keeps it: one per job; repeating the same one changes nothing. */
export const JobSignalSchema = z
  .strictObject({
    outcome: OperatorOutcome,
    note: z.string().max(2000).nullable(),
    signalledBy: z.string(),
    signalledAt: Timestamp,
  })
  .meta({ id: "JobSignal" });
export type JobSignal = z.infer<typeof JobSignalSchema>;

export const JobStepSchema = z
  .strictObject({
    name: z.string().min(1).max(100),
    status: z.enum(["PENDING", "RUNNING", "SUCCEEDED", "FAILED", "SKIPPED", "CANCELLED"]),
    progress: z.number().min(0).max(1).optional(),
    message: z.string().max(2000).optional(),
    startedAt: Timestamp.optional(),
    finishedAt: Timestamp.optional(),
  })
  .meta({ id: "JobStep" });

export const JobErrorSchema = z
  .strictObject({
    message: z.string().max(4000),
    cause: z.string().max(4000).optional(),
    step: z.string().max(100).optional(),
  })
  .meta({ id: "JobError" });

const JobBaseSchema = z.object({
  id: Uuid,
  name: z.string().describe("Generated, unique, human-readable"),
  status: JobStatus,
  siteId: Uuid,
  deviceIds: z.array(Uuid),
  steps: z.array(JobStepSchema),
  progress: z.number().min(0).max(1),
  error: JobErrorSchema.nullable(),
  burnIn: z
    .array(BurnInDeviceResultSchema)
    .describe("A burn-in's results per device and test (empty until its workflow reports them)"),
  logsUrl: z.string().nullable().describe("The site's log explorer, queried for this job (set when it failed)"),
  workflowId: z.string().nullable(),
  signal: JobSignalSchema.nullable().describe("The operator's signal to a job waiting for one (REPAIR)"),
  createdBy: z.string(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  cancelRequestedAt: Timestamp.nullable(),
  finishedAt: Timestamp.nullable(),
  version: z.number().int(),
});
const jobOf = <K extends JobKind>(kind: K) => JobBaseSchema.extend({ kind: z.literal(kind), params: paramsOf(kind) });
const JOB = byKind(jobOf) as { [K in JobKind]: ReturnType<typeof jobOf<K>> };

/** A job: a union on `kind`, so `params` has the kind's own type. */
export const JobSchema = z.discriminatedUnion("kind", union(JOB)).meta({ id: "Job" });
export type Job = z.infer<typeof JobSchema>;
export const JobListSchema = listOf(JobSchema).meta({ id: "JobList" });
export type JobList = z.infer<typeof JobListSchema>;
export const JobListQuerySchema = OrderedPageQuery.extend({
  status: JobStatus.optional(),
  kind: JobKind.optional(),
  site: z.string().max(63).optional().describe("Site slug or id"),
  device: Uuid.optional().describe("Jobs on this device"),
  active: z
    .enum(["true", "false"])
    .transform((v) => v === "true")
    .optional()
    .describe("Only jobs still in progress (PENDING, SUBMITTED, RUNNING, CANCELLING), or only ended ones"),
});
export type JobListQuery = z.infer<typeof JobListQuerySchema>;

/**
 * What a workflow observed of a device when it changed it (read back from NetBox and Ironic
 * after its own write). The hub records it on the device, so the device shows the job's effect
 * at once rather than at the next reflection, and the reflectors confirm it later.
 */
export const JobDeviceObservationSchema = z
  .strictObject({
    deviceId: Uuid,
    netbox: z
      .strictObject({
        status: NetboxDeviceStatus,
        platformClass: z.string().max(100).nullable().optional(),
        tags: z.array(z.string().max(100)).max(100).optional(),
      })
      .optional(),
    ironic: z
      .strictObject({
        instance: IronicInstance,
        nodeUuid: Uuid,
        provisionState: z.string().max(40),
        targetProvisionState: z.string().max(40).nullable(),
        powerState: z.string().max(40).nullable(),
        maintenance: z.boolean(),
        lastError: z.string().max(4000).nullable(),
      })
      .optional(),
  })
  .meta({ id: "JobDeviceObservation" });
export type JobDeviceObservation = z.infer<typeof JobDeviceObservationSchema>;

/**
 * A cordon a workflow sets or lifts on one of its job's devices (a REPAIR takes its devices out
 * of service while they are repaired, and gives them back after the re-test).
 */
export const JobCordonSchema = z
  .strictObject({
    deviceId: Uuid,
    cordoned: z.boolean(),
    reason: z.string().trim().min(1).max(1000).optional(),
  })
  // As an operator's PATCH: a cordon carries its reason (the devices table holds no cordon without one).
  .refine((c) => !c.cordoned || c.reason !== undefined, { message: "cordoning needs a reason", path: ["reason"] })
  .meta({ id: "JobCordon" });
export type JobCordon = z.infer<typeof JobCordonSchema>;

/** Statuses a workflow agent reports; PENDING is the hub's alone. */
export const JobReportStatus = z.enum(["SUBMITTED", "RUNNING", "CANCELLING", "SUCCEEDED", "FAILED", "CANCELLED"]);

/**
 * What the site's workflow agent (status, steps, progress, error) and the Temporal worker
 * (device observations) report about a job. Reports are idempotent: the same report twice
 * changes nothing the second time; a status the state machine does not allow is a 409.
 */
export const JobReportSchema = z
  .strictObject({
    status: JobReportStatus.optional(),
    workflowId: z.string().min(1).max(200).optional(),
    steps: z.array(JobStepSchema).max(100).optional(),
    progress: z.number().min(0).max(1).optional(),
    error: JobErrorSchema.optional(),
    // One entry per device: two for the same device would leave which one counts to their order.
    devices: z
      .array(JobDeviceObservationSchema)
      .min(1)
      .max(100)
      .superRefine(uniqueBy("deviceId", (d) => d.deviceId))
      .optional(),
    cordons: z
      .array(JobCordonSchema)
      .min(1)
      .max(100)
      .superRefine(uniqueBy("deviceId", (c) => c.deviceId))
      .optional()
      .describe("Cordons a workflow sets or lifts"),
    topologySync: z
      .strictObject({ reason: z.string().trim().min(1).max(1000) })
      .optional()
      .describe("Files the site's topology-sync request for this job (once per job): a tray left the topology"),
    burnIn: z
      .array(BurnInDeviceResultSchema)
      .min(1)
      .max(100)
      .superRefine(uniqueBy("deviceId", (r) => r.deviceId))
      .optional()
      .describe("A burn-in's results per device"),
    logsUrl: LogsUrlSchema.optional().describe("The site's log explorer, queried for this job (http or https only)"),
  })
  .refine((r) => Object.keys(r).length > 0, { message: "a report needs at least one field" })
  .meta({ id: "JobReport" });
export type JobReport = z.infer<typeof JobReportSchema>;

/**
 * Why this device cannot take a job of this kind now, or null. The hub checks this at
 * creation; the workflow re-checks what it depends on when it runs.
 */
export function jobRefusal(kind: JobKind, d: Pick<Device, "name" | "netbox" | "ironic" | "cordoned">): string | null {
  if (d.netbox.missing) return `${d.name} is no longer in NetBox`;
  const state = d.ironic.provisionState;
  switch (kind) {
    case "ENROL":
      if (d.netbox.status === "active") return `${d.name} is already enrolled (NetBox status active)`;
      if (d.netbox.status !== "staged") return `${d.name} must be staged in NetBox to enrol (it is ${d.netbox.status})`;
      if (state === "active" || state === "deploying") return `${d.name} is in use in Ironic (${state})`;
      return null;
    case "UNENROL":
      return d.netbox.status === "active" ? null : `${d.name} is not enrolled (NetBox status ${d.netbox.status})`;
    case "BURN_IN":
    case "RELEASE":
      if (d.netbox.status !== "active") return `${d.name} is not enrolled (NetBox status ${d.netbox.status})`;
      return d.cordoned && kind === "RELEASE" ? `${d.name} is cordoned: uncordon it before handing it over` : null;
    case "TEARDOWN":
    case "REIMAGE":
      return state === "active"
        ? null
        : `${d.name} has no instance to ${kind === "TEARDOWN" ? "tear down" : "reimage"} (Ironic ${state ?? "unknown"})`;
    case "IMAGE_NODE":
      if (d.netbox.status !== "active") return `${d.name} is not enrolled (NetBox status ${d.netbox.status})`;
      if (d.cordoned) return `${d.name} is cordoned: uncordon it before deploying an image`;
      return state === "available"
        ? null
        : `${d.name} is not available to deploy an image on (Ironic ${state ?? "unknown"})`;
    case "SLURM_ADOPT":
      if (d.netbox.status !== "active") return `${d.name} is not enrolled (NetBox status ${d.netbox.status})`;
      if (d.cordoned) return `${d.name} is cordoned: uncordon it before adding it to SLURM`;
      // Nova deploys only onto an available node; an active one already runs an instance.
      return state === "available"
        ? null
        : `${d.name} must be available in Ironic for Nova to deploy it (it is ${state ?? "unknown"})`;
    case "REPAIR":
    case "NODE_SWAP":
      return null;
  }
}

/**
 * Why a job of this kind cannot run at this site, or null. SLURM adoption creates Nova servers:
 * only where SLURM is reached through OpenStack.
 */
export function siteJobRefusal(kind: JobKind, site: { slug: string; openstackSlurmEnabled: boolean }): string | null {
  if (kind === "SLURM_ADOPT" && !site.openstackSlurmEnabled)
    return `SLURM is not reached through OpenStack at ${site.slug} (openstackSlurmEnabled is off): nothing would adopt the nodes`;
  return null;
}
