/**
 * Baseline for the sites-list benchmark: bare Fastify + pg running the same SQL the hub's
 * GET /api/v1/sites/ runs (one page in id order and an exact count, in parallel) and answering
 * the same JSON (with each site's sources' silence, from the same reflection_state rows), with no
 * validation, no Prisma, no plugins. Run as its own process:
 * DATABASE_URL, PORT.
 */
import Fastify from "fastify";
import pg from "pg";
import { DEFAULT_SITE_SILENCE_AFTER_MS, siteReporting, siteSources } from "@fm/domain";

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
/** The hub's representation of a site, field for field and in its order, so both answer the same bytes. */
const COLUMNS = [
  "id",
  "slug",
  "name",
  "region",
  'netbox_site_id AS "netboxSiteId"',
  'netbox_cluster_id AS "netboxClusterId"',
  'slurm_enabled AS "slurmEnabled"',
  'openstack_slurm_enabled AS "openstackSlurmEnabled"',
  'configure_dhcp AS "configureDhcp"',
  'platform_class_activity_ready AS "platformClassActivityReady"',
  'impairment_held_since AS "impairmentHeldSince"',
  'impairment_hold_message AS "impairmentHoldMessage"',
  "version",
  'created_at AS "createdAt"',
  'updated_at AS "updatedAt"',
].join(", ");
interface SiteRow extends Record<string, unknown> {
  id: string;
  impairmentHeldSince: Date | null;
  impairmentHoldMessage: string | null;
}

/** `row` with `extra`'s keys inserted before `key`: JSON keeps insertion order, and the bytes must match. */
function placeBefore(row: Record<string, unknown>, key: string, extra: Record<string, unknown>) {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(row)) {
    if (k === key) Object.assign(out, extra);
    out[k] = v;
  }
  return out;
}

const app = Fastify({ routerOptions: { ignoreTrailingSlash: true } });
app.get("/api/v1/sites", async (request) => {
  const limit = Math.min(Number((request.query as { limit?: string }).limit ?? 100), 1000);
  const [rows, count] = await Promise.all([
    pool.query(`SELECT ${COLUMNS} FROM sites ORDER BY id LIMIT $1`, [limit + 1]),
    pool.query("SELECT count(*)::int AS n FROM sites"),
  ]);
  const more = rows.rows.length > limit;
  const page = (more ? rows.rows.slice(0, limit) : rows.rows) as SiteRow[];
  // Each site's last accepted push per source, and the silence the hub derives from it.
  const pushes = await pool.query<{ site_id: string; source: string; applied_at: Date }>(
    "SELECT site_id, source, applied_at FROM reflection_state WHERE site_id = ANY($1::uuid[])",
    [page.map((s) => s.id)],
  );
  const now = new Date();
  const items = page.map((site) => {
    const own = pushes.rows
      .filter((p) => p.site_id === site.id)
      .map((p) => ({ source: p.source, appliedAt: p.applied_at }));
    const sources = siteSources(own, now, DEFAULT_SITE_SILENCE_AFTER_MS);
    // The impairment hold as one object, in the place of its two columns (as the hub's siteFields).
    const { impairmentHeldSince, impairmentHoldMessage, ...before } = site;
    const impairmentHold = impairmentHeldSince
      ? { since: impairmentHeldSince.toISOString(), message: impairmentHoldMessage ?? "" }
      : null;
    return {
      ...placeBefore(before, "version", { impairmentHold }),
      sources,
      conditions: [siteReporting(sources, DEFAULT_SITE_SILENCE_AFTER_MS)],
    };
  });
  return {
    items,
    count: (count.rows[0] as { n: number }).n,
    nextCursor: more ? Buffer.from(JSON.stringify({ after: page.at(-1)!.id })).toString("base64url") : null,
  };
});
const address = await app.listen({ port: Number(process.env.PORT ?? 0), host: "127.0.0.1" });
process.stdout.write(JSON.stringify({ msg: "baseline ready", address }) + "\n");
process.on(
  "SIGTERM",
  () =>
    void app
      .close()
      .then(() => pool.end())
      .then(() => process.exit(0)),
);
