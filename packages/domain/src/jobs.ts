/**
 * Jobs: work on devices that the site's workflow agent hands to Temporal. The
 * hub owns their record: kind, validated parameters, state machine, steps with progress, and
 * the rule that a device has at most one active job (enforced by the database).
 */
import { z } from "zod";
import { PageQuery, Timestamp, Uuid, listOf } from "./common.ts";
import type { Device } from "./devices.ts";
import { IronicInstance, NetboxDeviceStatus } from "./inventory.ts";

export const JOB_KINDS = [
  "ENROL",
  "UNENROL",
  "BURN_IN",
  "RELEASE",
  "TEARDOWN",
  "REIMAGE",
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
    partition: Name.optional().describe("SLURM partition; default the site's"),
  }),
  RELEASE: z.strictObject({}),
  TEARDOWN: z.strictObject({ reason: z.string().max(1000).optional() }),
  REIMAGE: z.strictObject({ image: Name.describe("Glance image name or id") }),
  REPAIR: z.strictObject({ ticket: Name, description: z.string().max(4000).optional() }),
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

const jobCreateOf = <K extends JobKind>(kind: K) =>
  z.strictObject({
    kind: z.literal(kind),
    deviceIds: z.array(Uuid).min(1).max(100).describe("Devices of one site; each may have only one active job"),
    // Omitted params are the kind's defaults (or a 400 naming the required ones).
    params: (paramsOf(kind) as z.ZodObject).prefault({}) as unknown as z.ZodPrefault<(typeof JOB_PARAMS)[K]>,
  });
const JOB_CREATE = byKind(jobCreateOf) as { [K in JobKind]: ReturnType<typeof jobCreateOf<K>> };

/** What creates a job: a union on `kind`, each kind with its own params schema. */
export const JobCreateSchema = z.discriminatedUnion("kind", union(JOB_CREATE)).meta({ id: "JobCreate" });
/** A job creation as the hub works with it (params parsed, defaults applied). */
export type JobCreate = z.output<typeof JobCreateSchema>;
/** A job creation as a caller sends it (params and defaulted fields may be left out). */
export type JobCreateInput = z.input<typeof JobCreateSchema>;

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
  workflowId: z.string().nullable(),
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
export const JobListQuerySchema = PageQuery.extend({
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
    devices: z.array(JobDeviceObservationSchema).min(1).max(100).optional(),
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
