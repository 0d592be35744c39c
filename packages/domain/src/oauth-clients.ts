import { z } from "zod";
import { PageQuery, SLUG_PATTERN, Timestamp, listOf } from "./common.ts";
import { FLEET_SCOPES } from "./identity.ts";

/**
 * Machine clients: OAuth2 clients (client credentials grant) for connectors and automation,
 * each with fleet scopes of its own. Satellites' agent clients are managed with their satellite
 * and the bootstrap admin client by the hub's configuration; neither is changed through this API.
 */
export const OAUTH_CLIENT_KINDS = ["machine", "admin", "agent"] as const;
export type OAuthClientKind = (typeof OAUTH_CLIENT_KINDS)[number];

export const ClientIdSchema = z
  .string()
  .regex(SLUG_PATTERN, "must match ^[a-z0-9][a-z0-9-]{0,62}$ (lower-case letters, digits and '-', at most 63)")
  .describe("Client id, e.g. matrix-prod");

export const MachineClientCreateSchema = z
  .strictObject({
    clientId: ClientIdSchema,
    scopes: z
      .array(z.enum(FLEET_SCOPES))
      .min(1)
      .max(FLEET_SCOPES.length)
      .refine((s) => new Set(s).size === s.length, { message: "scopes must not repeat" })
      .describe("Fleet scopes the client's tokens may carry (agent scopes are not granted here)"),
    description: z.string().trim().min(1).max(500).optional(),
  })
  .meta({ id: "MachineClientCreate" });
export type MachineClientCreate = z.infer<typeof MachineClientCreateSchema>;

export const MachineClientSchema = z
  .object({
    clientId: z.string(),
    kind: z.enum(OAUTH_CLIENT_KINDS),
    scopes: z.array(z.string()),
    description: z.string().nullable(),
    createdAt: Timestamp,
    revokedAt: Timestamp.nullable(),
    rotationOverlapUntil: Timestamp.nullable().describe("The previous secret keeps working until then"),
    lastTokenAt: Timestamp.nullable().describe("When the hub last issued this client a token"),
  })
  .meta({ id: "MachineClient" });
export type MachineClient = z.infer<typeof MachineClientSchema>;

export const MachineClientCreatedSchema = MachineClientSchema.extend({
  clientSecret: z.string().describe("Shown once; the hub keeps only a hash of it"),
}).meta({ id: "MachineClientCreated" });

/** A rotated machine client secret, shown once; the previous one works until `previousSecretValidUntil`. */
export const MachineClientRotatedSchema = z
  .object({
    clientId: z.string(),
    clientSecret: z.string(),
    previousSecretValidUntil: Timestamp,
  })
  .meta({ id: "MachineClientRotated" });

export const MachineClientListSchema = listOf(MachineClientSchema).meta({ id: "MachineClientList" });
export type MachineClientList = z.infer<typeof MachineClientListSchema>;
export const MachineClientListQuerySchema = PageQuery;
export const ClientIdParams = z.strictObject({ clientId: ClientIdSchema });
