import { z } from "zod";
import { base64DecodedLength } from "./base64url.ts";
import { PageQuery, Timestamp, Uuid, listOf } from "./common.ts";

/** Largest decoded cloud-init user-data accepted (Nova's limit is 64 KiB too). */
export const USER_DATA_MAX_BYTES = 64 * 1024;

/**
 * SLURM GRES, as in gres.conf / `--gres`: comma-separated `name[:type]:count`, e.g. `gpu:8`,
 * `gpu:h100:8`, `gpu:h100:8,nic:2`.
 */
export const GRES_PATTERN =
  /^[a-z][a-z0-9_]*(:[A-Za-z0-9_.-]+)?:[1-9][0-9]{0,5}(,[a-z][a-z0-9_]*(:[A-Za-z0-9_.-]+)?:[1-9][0-9]{0,5})*$/;
export const GRES_MAX_LENGTH = 255;
const Gres = z
  .string()
  .max(GRES_MAX_LENGTH)
  .regex(GRES_PATTERN, "must be a GRES list such as gpu:8, gpu:h100:8 or gpu:h100:8,nic:2");

/** Base64 text of at most USER_DATA_MAX_BYTES, with line breaks: anything longer is refused unread. */
const USER_DATA_MAX_CHARS = Math.ceil(USER_DATA_MAX_BYTES / 3) * 4 * 2;
/** One character class and a length check: linear in the input, nothing for a regex to backtrack over. */
const BASE64_CHARS = /^[A-Za-z0-9+/]*={0,2}$/;
const isBase64 = (v: string): boolean => v.length % 4 === 0 && BASE64_CHARS.test(v);
const UserData = z
  .string()
  .max(USER_DATA_MAX_CHARS)
  .superRefine((v, ctx) => {
    const compact = v.replace(/\s+/g, "");
    if (!isBase64(compact)) ctx.addIssue({ code: "custom", message: "must be valid base64" });
    else if (base64DecodedLength(compact) > USER_DATA_MAX_BYTES)
      ctx.addIssue({ code: "custom", message: `decodes to more than ${USER_DATA_MAX_BYTES} bytes` });
  })
  .transform((v) => v.replace(/\s+/g, ""))
  .describe("base64-encoded cloud-init user-data, at most 64 KiB decoded");

const Image = z.string().trim().min(1).max(255).describe("Nova image name or UUID");
const Flavor = z.string().trim().min(1).max(255).describe("Nova flavor name or UUID");

export const SlurmBootstrapConfigSchema = z
  .object({
    id: Uuid,
    siteId: Uuid,
    deviceRoleId: Uuid,
    image: z.string(),
    flavor: z.string(),
    gres: z.string().nullable(),
    userData: z.string().nullable(),
    version: z.number().int(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  })
  .meta({ id: "SlurmBootstrapConfig" });
export type SlurmBootstrapConfig = z.infer<typeof SlurmBootstrapConfigSchema>;

export const SlurmBootstrapConfigCreateSchema = z
  .strictObject({
    deviceRoleId: Uuid,
    image: Image,
    flavor: Flavor,
    gres: Gres.nullable().optional(),
    userData: UserData.nullable().optional(),
  })
  .meta({ id: "SlurmBootstrapConfigCreate" });
export type SlurmBootstrapConfigCreate = z.infer<typeof SlurmBootstrapConfigCreateSchema>;

/** PUT replaces the row: every field is given again (the role is its identity and stays). */
export const SlurmBootstrapConfigReplaceSchema = z
  .strictObject({
    deviceRoleId: Uuid.optional(),
    image: Image,
    flavor: Flavor,
    gres: Gres.nullable().optional(),
    userData: UserData.nullable().optional(),
  })
  .meta({ id: "SlurmBootstrapConfigReplace" });
export type SlurmBootstrapConfigReplace = z.infer<typeof SlurmBootstrapConfigReplaceSchema>;

export const SlurmBootstrapConfigListSchema = listOf(SlurmBootstrapConfigSchema).meta({
  id: "SlurmBootstrapConfigList",
});
export type SlurmBootstrapConfigList = z.infer<typeof SlurmBootstrapConfigListSchema>;
export const SlurmBootstrapConfigListQuerySchema = PageQuery;
export const SiteIdParams = z.strictObject({ site_id: Uuid });
export const SiteConfigParams = z.strictObject({ site_id: Uuid, id: Uuid });
