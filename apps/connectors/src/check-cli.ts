/**
 * `npm run connector:check -- --connector matrix-prod` (CONNECTOR_DATABASE_URL: the instance's
 * database). Prints the instance's SLA state, lag, last error class and dead letters (./check.ts).
 * Exit 0 within the SLA, 1 on a breach, 2 when it cannot tell (bad arguments, database unreachable).
 */
import { parseArgs } from "node:util";
import pg from "pg";
import { assess } from "./check.ts";
import { QueueStore } from "./queue/store.ts";

async function main(): Promise<number> {
  let args;
  try {
    args = parseArgs({
      options: {
        connector: { type: "string" },
        "sla-s": { type: "string", default: "300" },
        "database-url": { type: "string" },
      },
    }).values;
  } catch (err) {
    process.stderr.write(`connector:check: ${(err as Error).message}\n`);
    return 2;
  }
  const url = args["database-url"] ?? process.env.CONNECTOR_DATABASE_URL;
  const slaS = Number(args["sla-s"]);
  if (!args.connector || !url || !(slaS > 0)) {
    process.stderr.write(
      "usage: connector:check --connector <name> [--sla-s 300] (database: --database-url or CONNECTOR_DATABASE_URL)\n",
    );
    return 2;
  }
  const pool = new pg.Pool({ connectionString: url, max: 1, connectionTimeoutMillis: 10_000 });
  try {
    const store = new QueueStore(pool, args.connector);
    const [state, stats, deadLetters, updated] = await Promise.all([
      store.state(),
      store.stats(),
      store.deadLetters(10),
      pool.query<{ s: number }>(
        "SELECT extract(epoch FROM now() - updated_at)::float8 AS s FROM connector_state WHERE connector = $1",
        [args.connector],
      ),
    ]);
    const result = assess({
      connector: args.connector,
      slaS,
      state,
      stats,
      deadLetters,
      sinceUpdateS: updated.rows[0]?.s,
    });
    process.stdout.write(result.lines.join("\n") + "\n");
    return result.ok ? 0 : 1;
  } catch (err) {
    process.stderr.write(`connector:check: cannot read the connector database: ${(err as Error).message}\n`);
    return 2;
  } finally {
    await pool.end();
  }
}

process.exitCode = await main();
