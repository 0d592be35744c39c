/**
 * `npm run netbox:check -- --site <slug> --cluster <name|id> [--json]`
 * with NETBOX_URL, NETBOX_TOKEN and NETBOX_AGENT_DEVICE_ROLE_CLASS_MAPPING in the environment.
 * Exit 0: ready; 1: problems found; 2: bad usage or configuration.
 */
import { parseArgs } from "node:util";
import { z } from "zod";
import { NetboxClient, checkNetboxSite, formatFindings } from "@fm/clients";
import { RoleClassMapping } from "./mapping.ts";

const usage = "usage: npm run netbox:check -- --site <slug> --cluster <name|id> [--json]";
let args;
try {
  args = parseArgs({
    options: { site: { type: "string" }, cluster: { type: "string" }, json: { type: "boolean", default: false } },
  }).values;
} catch (err) {
  process.stderr.write(`${(err as Error).message}\n${usage}\n`);
  process.exit(2);
}
const env = z
  .object({
    NETBOX_URL: z.url(),
    NETBOX_TOKEN: z.string().min(1),
    NETBOX_AGENT_DEVICE_ROLE_CLASS_MAPPING: RoleClassMapping,
  })
  .safeParse(process.env);
if (!args.site || !args.cluster || !env.success) {
  if (!env.success) for (const i of env.error.issues) process.stderr.write(`${i.path.join(".")}: ${i.message}\n`);
  process.stderr.write(`${usage}\n`);
  process.exit(2);
}
const netbox = new NetboxClient({ url: env.data.NETBOX_URL, token: env.data.NETBOX_TOKEN, maxAttempts: 2 });
try {
  const findings = await checkNetboxSite(netbox, {
    site: args.site,
    cluster: args.cluster,
    mapping: env.data.NETBOX_AGENT_DEVICE_ROLE_CLASS_MAPPING,
  });
  const failed = findings.filter((f) => f.severity === "fail").length;
  if (args.json) process.stdout.write(`${JSON.stringify({ ok: failed === 0, findings }, null, 2)}\n`);
  else process.stdout.write(formatFindings(findings));
  process.exit(failed ? 1 : 0);
} catch (err) {
  process.stderr.write(`netbox check failed: ${(err as Error).message}\n`);
  process.exit(1);
}
