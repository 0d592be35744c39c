import { z } from "zod";

/** Slugs as the contract defines them; also NetBox's and Kubernetes' safe subset. */
export const SLUG_PATTERN = /^[a-z0-9][a-z0-9-]{0,62}$/;
export const Slug = z
  .string()
  .regex(SLUG_PATTERN, "must match ^[a-z0-9][a-z0-9-]{0,62}$ (lower-case letters, digits and '-', at most 63)");

export const Uuid = z.uuid();

/**
 * Control characters no text the hub stores may hold: C0 but TAB, LF and CR, DEL, and C1.
 * Printed as they are, ESC and BEL drive a terminal (OSC 52 writes the clipboard, `ESC[2J`
 * clears the screen, OSC 8 hides a link), and U+009B is CSI on terminals that read C1; none
 * belongs in a name, a reason or a report. Refused at the hub's door (with U+0000 and lone
 * surrogates, which PostgreSQL cannot store), so no reader is ever served one.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
export const CONTROL_CHARACTER = /[\x01-\x08\x0B\x0C\x0E-\x1F\x7F-\x9F]/;

/**
 * A name the hub matches by and shows: printable, no line breaks or tabs (a control character
 * of any kind) and no space at either end. `gpu-005 ` is refused, not trimmed: NetBox's API
 * trims names (Django REST framework's CharField), so only a forged push carries one, and a
 * stored name must be the one the other sources (SLURM, Ironic) match by.
 */
export const ObjectName = (max: number) =>
  z
    .string()
    .min(1)
    .max(max)
    // eslint-disable-next-line no-control-regex -- matching control characters is the point
    .refine((v) => !/[\x00-\x1F\x7F-\x9F]/.test(v), {
      message: "must not contain a control character (tab, line break, ESC, …)",
    })
    .refine((v) => v.trim() === v, { message: "must not begin or end with white space" });

/**
 * The key under which two names are the same name at a site: NetBox 4.5 refuses a second
 * device whose name differs only in case at one site and tenant
 * (netbox/dcim/models/devices.py, `Device.Meta.constraints`:
 * `UniqueConstraint(Lower('name'), 'site', 'tenant', name='…_unique_name_site_tenant')`),
 * and so does the hub per push: `gpu-005` and `GPU-005` are one name, never two devices an
 * operator can confuse.
 */
export const nameKey = (name: string): string => name.toLowerCase();

/**
 * The instants both PostgreSQL's timestamptz and JavaScript's Date represent and print as
 * RFC 3339 (a four-digit year once in UTC): `9999-12-31T23:59:59-14:00` is year 10000 in UTC.
 */
export const TIMESTAMP_MIN = "1900-01-01T00:00:00.000Z";
export const TIMESTAMP_MAX = "9999-12-31T23:59:59.999Z";
const TIMESTAMP_MIN_MS = Date.parse(TIMESTAMP_MIN);
const TIMESTAMP_MAX_MS = Date.parse(TIMESTAMP_MAX);

/** An RFC 3339 timestamp with an offset, within TIMESTAMP_MIN..TIMESTAMP_MAX once in UTC. */
export const Timestamp = z.iso
  .datetime({ offset: true })
  .refine(
    (v) => {
      const ms = Date.parse(v);
      return ms >= TIMESTAMP_MIN_MS && ms <= TIMESTAMP_MAX_MS;
    },
    { message: `must lie between ${TIMESTAMP_MIN} and ${TIMESTAMP_MAX}` },
  )
  .describe("RFC 3339 timestamp");

/** How far ahead of the hub's clock an observation may claim to be (agents' clocks drift a little). */
export const MAX_CLOCK_SKEW_MS = 5 * 60_000;

/** PostgreSQL's `integer` (int4): every integer the API stores in such a column stays within it. */
export const INT4_MAX = 2_147_483_647;
/** A NetBox object id (stored as int4). */
export const NetboxId = z.number().int().positive().max(INT4_MAX);

export const IdParams = z.strictObject({ id: Uuid });

export const LIST_DEFAULT_LIMIT = 100;
export const LIST_MAX_LIMIT = 1000;

/** `?limit=&cursor=` shared by every list route. */
export const PageQuery = z.object({
  limit: z.coerce.number().int().min(1).max(LIST_MAX_LIMIT).default(LIST_DEFAULT_LIMIT),
  cursor: z.string().max(512).optional().describe("Opaque cursor from a previous page's nextCursor"),
});

/**
 * `?limit=&cursor=&order=` for the lists people read newest first (audit, jobs, device history):
 * ids grow with time (uuid v7, sequences), so `desc` puts the newest first and its cursor pages
 * on to older entries. `asc` stays the default so existing callers see the order they had.
 */
export const OrderedPageQuery = PageQuery.extend({
  order: z.enum(["asc", "desc"]).default("asc").describe("Id order: asc oldest first (default), desc newest first"),
});

/** A list response as the contract defines it: exact total count and an opaque cursor. */
export const listOf = <T extends z.ZodType>(item: T) =>
  z.object({
    items: z.array(item),
    count: z.number().int().describe("Total number of items matching the filters"),
    nextCursor: z.string().nullable().describe("Pass as ?cursor= for the next page; null on the last page"),
  });

/**
 * A query parameter holding several values, comma-separated (`?kind=a,b`): each value checked
 * by `item`, duplicates dropped, at most `max` values. Parses to the list.
 */
export const commaList = <T extends z.ZodType<string>>(item: T, max = 50) =>
  z
    .string()
    .max(4000)
    .transform((v, ctx): z.output<T>[] => {
      const values = [...new Set(v.split(",").map((s) => s.trim()))].filter((s) => s !== "");
      if (!values.length || values.length > max) {
        ctx.addIssue({ code: "custom", message: `one to ${max} comma-separated values` });
        return z.NEVER;
      }
      const out: z.output<T>[] = [];
      for (const value of values) {
        const r = item.safeParse(value);
        if (!r.success) {
          ctx.addIssue({
            code: "custom",
            message: `'${value.slice(0, 100)}': ${r.error.issues[0]?.message ?? "invalid"}`,
          });
          return z.NEVER;
        }
        out.push(r.data);
      }
      return out;
    });
