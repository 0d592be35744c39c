/**
 * Baseline for the devices-list benchmark: bare Fastify + pg answering
 * GET /api/v1/devices?site=<slug>&limit=N with the equivalent SQL (one page in id order with
 * the site, rack, type, role and interfaces of each device, and the exact count), in
 * parallel, with no validation, no derivation, no Prisma. Run as its own process.
 * BASELINE_COUNT=false: the page alone, without the count (`count` is then absent).
 */
import Fastify from "fastify";
import pg from "pg";

const COUNT = process.env.BASELINE_COUNT !== "false";
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const app = Fastify({ routerOptions: { ignoreTrailingSlash: true } });
const PAGE = `
  SELECT d.*, o.netbox_observed_at, o.ironic_observed_at, o.slurm_observed_at, o.health_observed_at,
         json_build_object('id', s.id, 'slug', s.slug) AS site,
         CASE WHEN r.id IS NULL THEN NULL ELSE json_build_object('id', r.id, 'name', r.name) END AS rack,
         CASE WHEN t.id IS NULL THEN NULL ELSE json_build_object('id', t.id, 'slug', t.slug, 'model', t.model, 'cpuArchitecture', t.cpu_architecture) END AS device_type,
         CASE WHEN ro.id IS NULL THEN NULL ELSE json_build_object('id', ro.id, 'slug', ro.slug, 'deviceClass', ro.device_class) END AS role,
         coalesce((SELECT json_agg(i ORDER BY i.name) FROM device_interfaces i WHERE i.device_id = d.id), '[]') AS interfaces
    FROM devices d JOIN sites s ON s.id = d.site_id LEFT JOIN device_observations o ON o.device_id = d.id
    LEFT JOIN racks r ON r.id = d.rack_id LEFT JOIN device_types t ON t.id = d.device_type_id LEFT JOIN device_roles ro ON ro.id = d.device_role_id
   WHERE s.slug = $1 ORDER BY d.id LIMIT $2`;
app.get("/api/v1/devices", async (request) => {
  const q = request.query as { site: string; limit?: string };
  const limit = Math.min(Number(q.limit ?? 100), 1000);
  const [rows, count] = await Promise.all([
    pool.query(PAGE, [q.site, limit + 1]),
    COUNT
      ? pool.query("SELECT count(*)::int AS n FROM devices d JOIN sites s ON s.id = d.site_id WHERE s.slug = $1", [
          q.site,
        ])
      : undefined,
  ]);
  const more = rows.rows.length > limit;
  const items = (more ? rows.rows.slice(0, limit) : rows.rows) as { id: string }[];
  return {
    items,
    ...(count ? { count: (count.rows[0] as { n: number }).n } : {}),
    nextCursor: more ? Buffer.from(JSON.stringify({ after: items.at(-1)!.id })).toString("base64url") : null,
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
