/**
 * The provider's JSON as `nebius … --format json` prints it: the Nebius public API messages in
 * protobuf's JSON mapping with the proto field names (snake_case), enum values by name, 64-bit
 * integers as decimal strings (protobuf.dev/programming-guides/json), and zero values, empty
 * lists and unset enums left out. So an absent `state` is `*_UNSPECIFIED` (never active), and
 * an absent `usage` is left absent here: the checks read it only beside a `usage_state` that says
 * what it means. Fields of a resource the checks do not read are let through, since the provider
 * adds fields over time; a list response, though, must be exactly the proto's
 * `{items, next_page_token}` with `items` present, so an error object or an empty `{}` saved in
 * place of a listing is refused rather than read as "nothing exists".
 *
 * Sources, github.com/nebius/api (the file at the commit named; the full list with links is in
 * test-fixtures/README.md):
 *   nebius/common/v1/metadata.proto @278fae8         ResourceMetadata (id, parent_id, name)
 *   nebius/quotas/v1/quota_allowance.proto @5e634b1  QuotaAllowance, QuotaAllowanceSpec, QuotaAllowanceStatus
 *   nebius/quotas/v1/quota_allowance_service.proto @2880a27  ListQuotaAllowancesResponse {items, next_page_token}
 *   nebius/iam/v1/container.proto @b00f050           Container (a project), ContainerSpec, ContainerStatus
 *   nebius/iam/v1/state.proto @76968c4, suspension_state.proto @d478ba0  State, SuspensionState
 *   nebius/iam/v1/project_service.proto @04c88e2     ListProjectsResponse {items, next_page_token}
 *   nebius/capacity/v1/capacity_block_group.proto @4cf7e25  CapacityBlockGroup, CapacityBlockGroupStatus
 *   nebius/capacity/v1/resource_affinity.proto @c1ead12     ResourceAffinity {compute_v1 {fabric, platform}}
 *   nebius/capacity/v1/capacity_block_group_service.proto @2252b1b  ListCapacityBlockGroupsResponse,
 *                                                    ListCapacityBlockGroupResourcesResponse {resource_ids}
 *   nebius/capacity/v1/capacity_interval.proto @2252b1b     CapacityInterval, CapacityIntervalStatus
 */
import { z } from "zod";

/** uint64/int64: a decimal string in protobuf JSON (a number accepted too); within JavaScript's exact integers. */
export const Uint64 = z
  .union([z.string().regex(/^\d{1,20}$/), z.int().min(0)])
  .transform(Number)
  .refine(Number.isSafeInteger, "larger than this tool can count exactly");

const Metadata = z.looseObject({
  id: z.string().default(""),
  parent_id: z.string().default(""),
  name: z.string().default(""),
});

const list = <T extends z.ZodType>(item: T) =>
  z.strictObject({
    items: z.array(item, "a list response needs its items array"),
    next_page_token: z.string().default(""),
  });

export const QuotaAllowanceSchema = z.looseObject({
  metadata: Metadata.extend({ name: z.string().min(1, "a quota allowance without a name") }),
  spec: z.looseObject({ limit: Uint64.optional(), region: z.string().default("") }),
  status: z
    .looseObject({
      state: z.string().default("STATE_UNSPECIFIED"),
      usage: Uint64.optional(),
      unit: z.string().default(""),
      usage_state: z.string().default("USAGE_STATE_UNSPECIFIED"),
    })
    .default({ state: "STATE_UNSPECIFIED", unit: "", usage_state: "USAGE_STATE_UNSPECIFIED" }),
});
export type QuotaAllowance = z.output<typeof QuotaAllowanceSchema>;
export const QuotaAllowanceListSchema = list(QuotaAllowanceSchema);

export const ProviderProjectSchema = z.looseObject({
  metadata: Metadata,
  spec: z.looseObject({ region: z.string().default("") }).default({ region: "" }),
  status: z
    .looseObject({
      suspension_state: z.string().default("SUSPENSION_STATE_UNSPECIFIED"),
      container_state: z.string().default("STATE_UNSPECIFIED"),
      region: z.string().default(""),
    })
    .default({ suspension_state: "SUSPENSION_STATE_UNSPECIFIED", container_state: "STATE_UNSPECIFIED", region: "" }),
});
export type ProviderProject = z.output<typeof ProviderProjectSchema>;
export const ProviderProjectListSchema = list(ProviderProjectSchema);

const ComputeAffinity = z.looseObject({ fabric: z.string().default(""), platform: z.string().default("") });

export const CapacityBlockGroupSchema = z.looseObject({
  metadata: Metadata,
  status: z
    .looseObject({
      region: z.string().default(""),
      resource_affinity: z.looseObject({ compute_v1: ComputeAffinity.optional() }).default({}),
      service: z.string().default(""),
      state: z.string().default("STATE_UNSPECIFIED"),
      current_limit: Uint64.default(0),
      usage: Uint64.optional(),
      usage_state: z.string().default("USAGE_STATE_UNSPECIFIED"),
      reconciling: z.boolean().default(false),
    })
    .optional(),
});
export type CapacityBlockGroup = z.output<typeof CapacityBlockGroupSchema>;
export const CapacityBlockGroupListSchema = list(CapacityBlockGroupSchema);

export const CapacityIntervalSchema = z.looseObject({
  metadata: Metadata,
  status: z
    .looseObject({
      container_id: z.string().default(""),
      region: z.string().default(""),
      service: z.string().default(""),
      quantity: Uint64.default(0),
      state: z.string().default("STATE_UNSPECIFIED"),
      reconciling: z.boolean().default(false),
    })
    .default({
      container_id: "",
      region: "",
      service: "",
      quantity: 0,
      state: "STATE_UNSPECIFIED",
      reconciling: false,
    }),
});
export type CapacityInterval = z.output<typeof CapacityIntervalSchema>;
export const CapacityIntervalListSchema = list(CapacityIntervalSchema);

/** Its only field is a repeated one, so `{}` is a block with no instances; any other key (an error object) refuses. */
export const CapacityBlockGroupResourcesSchema = z.strictObject({ resource_ids: z.array(z.string()).default([]) });
