/** `fleetctl api ...`: login, and a command per resource and verb of the hub's API. */
import { Option, type Command } from "commander";
import { examples, lazy, withOutput, withPaging } from "./command-kit.ts";

const auth = () => import("./commands/login.ts");
const sites = () => import("./commands/sites.ts");
const devices = () => import("./commands/devices.ts");
const jobs = () => import("./commands/jobs.ts");
const satellites = () => import("./commands/satellites.ts");
const slurm = () => import("./commands/slurm-configs.ts");
const machineClients = () => import("./commands/clients.ts");
const misc = () => import("./commands/feed.ts");

/** Lists people read newest first: the hub's `order`, descending unless asked (as the web UI shows them). */
const orderOption = () =>
  new Option("--order <order>", "desc: newest first; asc: oldest first").choices(["desc", "asc"]).default("desc");

const AGENTS = ["openstack", "slurm", "netbox", "health-status", "workflow", "temporal-worker"];

export function addApiCommands(api: Command): void {
  examples(
    api
      .command("login")
      .description("log in to the profile's hub and cache the token (mode 0600)")
      .option("--scope <scope>", "ask for less: read-only, operate, admin, or a list of fleet.* scopes")
      .option("--device-code", "people: log in on another device (device authorization) instead of a browser")
      .option("--issuer <url>", "people: the OIDC issuer (default: the profile's)")
      .option("--client-id <id>", "people: fleetctl's client id at the issuer; machines: the hub client id")
      .option("--client-secret-file <file>", "machines: log in with client credentials, the secret read from this file")
      .addHelpText(
        "after",
        "\nPeople log in through the OIDC issuer: the URL to open is printed on stderr and opened with $BROWSER\n" +
          "(or xdg-open); without a browser, or with --device-code, a code to enter on another device is shown.\n" +
          "Machines log in with client credentials at the hub's token endpoint.",
      )
      .action(lazy(auth, "login")),
    [
      "fleetctl api login --scope read-only",
      "fleetctl api login --device-code",
      "fleetctl api login --client-id ci-bot --client-secret-file /run/secrets/ci-bot --scope operate",
    ],
  );
  api.command("logout").description("forget the profile's cached token").action(lazy(auth, "logout"));
  withOutput(
    api.command("whoami").description("who the hub says you are, and the scopes it grants you (GET /api/v1/whoami)"),
    ["table", "json", "yaml"],
  ).action(lazy(auth, "whoami"));
  api
    .command("token")
    .description("print a valid access token (renewed if needed), for curl: it is a secret")
    .action(lazy(auth, "token"));

  addSiteCommands(api.command("site").alias("sites").description("sites"));
  addDeviceCommands(api.command("device").alias("devices").description("devices"));
  addJobCommands(api.command("job").alias("jobs").description("jobs"));
  addSatelliteCommands(
    api.command("satellite").alias("satellites").description("satellites and their agents' secrets"),
  );
  addClientCommands(
    api
      .command("client")
      .alias("clients")
      .description("machine OAuth2 clients (connectors, automation) and their secrets"),
  );
  addSlurmCommands(
    api
      .command("slurm-config")
      .alias("slurm-configs")
      .description("SLURM bootstrap configs of a site, one per device role"),
  );

  const discrepancy = api.command("discrepancy").alias("discrepancies").description("where the sources disagree");
  withOutput(withPaging(discrepancy.command("list").description("a site's open discrepancies")))
    .requiredOption("--site <slug|id>", "the site")
    .option("--kind <kind>", "one kind of discrepancy")
    .action(lazy(misc, "discrepancyList"));
  withOutput(discrepancy.command("summary").description("open discrepancies fleet-wide"), [
    "table",
    "json",
    "yaml",
  ]).action(lazy(misc, "discrepancySummary"));

  const feed = api.command("feed").description("the inventory change feed");
  examples(
    withOutput(
      feed
        .command("tail")
        .description("the latest events, then (--follow) each new one as it happens")
        .option("--after <position>", "start after this position instead of the latest events")
        .option("-n, --lines <n>", "how many of the latest events to show first", "10")
        .option("--site <slug...>", "only these sites' events (and those of no site: roles, settings)")
        .option("-f, --follow", "keep waiting for new events (long-poll) until interrupted"),
      ["table", "json"],
    ).action(lazy(misc, "feedTail")),
    ["fleetctl api feed tail --follow", "fleetctl api feed tail --after 1042 -o json --follow | jq .type"],
  );
}

function addSiteCommands(site: Command): void {
  withOutput(withPaging(site.command("list").description("list sites")))
    .option("--slug <slug>", "exact slug")
    .option("--region <region>", "topology region")
    .option("--q <text>", "substring of slug or name")
    .action(lazy(sites, "list"));
  withOutput(site.command("get").description("a site").argument("<site>", "slug or id")).action(lazy(sites, "get"));
  const fields = (c: Command) =>
    c
      .option("--name <name>", "display name")
      .option("--region <region>", "topology region ('' for none)")
      .option("--netbox-site-id <n>", "NetBox site id")
      .option("--netbox-cluster-id <n>", "NetBox cluster id")
      .addOption(new Option("--slurm-enabled <bool>", "the site has SLURM").choices(["true", "false"]))
      .addOption(
        new Option("--openstack-slurm-enabled <bool>", "SLURM reached through OpenStack (Nova)").choices([
          "true",
          "false",
        ]),
      )
      .addOption(new Option("--configure-dhcp <bool>").choices(["true", "false"]))
      .addOption(new Option("--platform-class-activity-ready <bool>").choices(["true", "false"]));
  examples(
    withOutput(
      fields(site.command("create").description("create a site (admin)").requiredOption("--slug <slug>", "slug")),
    ),
    ["fleetctl api site create --slug iad1 --name 'Ashburn 1' --region us-east"],
  ).action(lazy(sites, "create"));
  examples(
    withOutput(
      fields(
        site
          .command("update")
          .description("change a site (admin); sends If-Match with the ETag read first")
          .argument("<site>", "slug or id")
          .option("--if-match <etag>", "send this ETag instead of reading the site first"),
      ),
    ),
    ["fleetctl api site update iad1 --region us-east-2"],
  ).action(lazy(sites, "update"));
  site
    .command("delete")
    .description("delete a site (admin; refused while it has devices, jobs or a satellite)")
    .argument("<site>", "slug or id")
    .option("--if-match <etag>", "send this ETag instead of reading the site first")
    .action(lazy(sites, "remove"));
}

function addDeviceCommands(device: Command): void {
  examples(
    withOutput(withPaging(device.command("list").description("list devices (every filter the API has)")))
      .option("--site <slug|id>", "site")
      .option("--role <slug>", "device role")
      .option(
        "--device-class <class,...>",
        "GPU_COMPUTE, CPU_BAREMETAL, CPU_HYPERVISOR, NETWORK, STORAGE, OTHER (several comma-separated, any case)",
      )
      .option("--status <status,...>", "NetBox status (active, staged, ...; several comma-separated)")
      .option("--provision-state <state>", "Ironic provision state")
      .option(
        "--operational-status <status,...>",
        "AVAILABLE, ALLOCATED, IMPAIRED, FAILED, QUARANTINED, STALE, ... (several comma-separated, any case: impaired,failed)",
      )
      .addOption(new Option("--cordoned <bool>", "cordoned or not").choices(["true", "false"]))
      .addOption(new Option("--stale <bool>", "stale or not").choices(["true", "false"]))
      .option("--name <text>", "case-insensitive substring of the name")
      .option("--name-exact <name>", "exact name")
      .option("--serial <serial>", "exact serial")
      .option("--tag <tag>", "one of its tags")
      .option("--burn-in <outcome,...>", "the last burn-in's outcome: passed, failed or none (several comma-separated)")
      .option("--page <n>", "show page n (from 1) of --limit devices, as the web UI's page jump does; not with --all")
      .option("--updated-since <time>", "changed at or after this RFC 3339 time")
      // Checked against the API's own list of sorts with the other filters (a usage error, exit 2).
      .option(
        "--sort <field>",
        "sort on the hub by name, serial, operationalStatus or updatedAt; '-' first for descending (--sort=-name)",
      )
      .option("--brief", "-o json/yaml: the brief representation (names and states only)")
      .action(lazy(devices, "list")),
    [
      "fleetctl api device list --format count",
      "fleetctl api device list --site keflavik --sort=-updatedAt --limit 20",
      "fleetctl api device list --name-exact kef-gpu-0042 --format json",
      "fleetctl api device list --site keflavik --operational-status IMPAIRED,FAILED -o wide",
    ],
  );
  withOutput(device.command("get").description("a device").argument("<device>", "name or id")).action(
    lazy(devices, "get"),
  );
  examples(
    withOutput(
      device
        .command("describe")
        .description(
          "a device as a person reads it: conditions and reasons, each source and its age, Ironic's last error, the cordon, the active job, recent history",
        )
        .argument("<device>", "name or id"),
      ["table", "json", "yaml"],
    ),
    ["fleetctl api device describe kef-gpu-0042"],
  ).action(lazy(() => import("./commands/device-describe.ts"), "describe"));
  withOutput(withPaging(device.command("history").description("every change of a device's tracked fields")))
    .argument("<device>", "name or id")
    .option("--field <field>", "only this field (provisionState, cordoned, ...)")
    .addOption(orderOption())
    .action(lazy(devices, "history"));
  examples(
    withOutput(
      device
        .command("cordon")
        .description("cordon a device (operate); sends If-Match with the ETag read first")
        .argument("<device>", "name or id")
        .requiredOption("--reason <text>", "why (recorded, and mirrored into Ironic maintenance)")
        .option("--overwrite", "replace the reason of a device already cordoned (refused without it, exit 5)")
        .option("--if-match <etag>", "send this ETag instead of the one of the device as read"),
    ),
    [
      'fleetctl api device cordon kef-gpu-0042 --reason "bad DIMM, ticket OPS-123"',
      'fleetctl api device cordon kef-gpu-0042 --reason "DIMM replaced, burn-in next" --overwrite',
    ],
  ).action(lazy(devices, "cordon"));
  withOutput(
    device
      .command("uncordon")
      .description(
        "uncordon a device (operate): shows the reason it removes and asks on a terminal; sends If-Match with the ETag read first",
      )
      .argument("<device>", "name or id")
      .option("-y, --yes", "do not ask (required when stdin is not a terminal)")
      .option("--if-match <etag>", "send this ETag instead of the one of the device as read"),
  ).action(lazy(devices, "uncordon"));
}

function addJobCommands(job: Command): void {
  withOutput(withPaging(job.command("list").description("list jobs")))
    .option("--status <status>", "PENDING, SUBMITTED, RUNNING, CANCELLING, SUCCEEDED, FAILED, CANCELLED")
    .option(
      "--kind <kind>",
      "ENROL, UNENROL, BURN_IN, RELEASE, TEARDOWN, REIMAGE, IMAGE_NODE, REPAIR, NODE_SWAP, SLURM_ADOPT",
    )
    .option("--site <slug|id>", "site")
    .option("--device <device>", "jobs that include this device (name or id)")
    // Bare --active means true (kubectl-style flags); --active=false lists the ended ones.
    .addOption(
      new Option("--active [bool]", "in progress (bare, or true) or ended (false)")
        .choices(["true", "false"])
        .preset("true"),
    )
    .addOption(orderOption())
    .action(lazy(jobs, "list"));
  withOutput(job.command("get").description("a job with its steps").argument("<job>", "id or name")).action(
    lazy(jobs, "get"),
  );
  examples(
    withOutput(
      job
        .command("create")
        .description("create a job (operate); params are checked against the kind's schema before sending")
        .requiredOption(
          "--kind <kind>",
          "ENROL, UNENROL, BURN_IN, RELEASE, TEARDOWN, REIMAGE, IMAGE_NODE, REPAIR, NODE_SWAP, SLURM_ADOPT",
        )
        .requiredOption("--device <device...>", "devices (names or ids) of one site")
        .option("--param <key=value...>", 'a parameter (value read as JSON when it is JSON: 30, true, ["a"])')
        .option("--params <json>", "all parameters as one JSON object")
        .option("--idempotency-key <key>", "makes a retried create safe (default: a new random key)")
        .option("--wait", "then wait for it as `job wait` does"),
    ),
    [
      "fleetctl api job create --kind BURN_IN --device kef-gpu-0042 --param durationMinutes=120",
      "fleetctl api job create --kind REIMAGE --device kef-gpu-0042 kef-gpu-0043 --param image=ubuntu-24.04 --wait",
    ],
  ).action(lazy(jobs, "create"));
  withOutput(job.command("cancel").description("cancel a job (operate)").argument("<job>", "id or name")).action(
    lazy(jobs, "cancel"),
  );
  examples(
    withOutput(
      job
        .command("signal")
        .description("tell a job waiting for an operator (REPAIR) the outcome (operate)")
        .argument("<job>", "id or name")
        .addOption(
          new Option("--outcome <outcome>", "repaired: re-test and release; failed: end the job, devices stay out")
            .choices(["repaired", "failed"])
            .makeOptionMandatory(),
        )
        .option("--note <text>", "what was done, kept on the job"),
    ),
    ['fleetctl api job signal repair-brisk-falcon-3fa2 --outcome repaired --note "replaced GPU 3"'],
  ).action(lazy(jobs, "signal"));
  examples(
    withOutput(
      job
        .command("wait")
        .description("follow a job until it ends: steps as they change, a progress bar on a terminal")
        .argument("<job>", "id or name")
        .option("--timeout <duration>", "give up after this long (90s, 30m, 2h); the job goes on")
        .option("--interval <duration>", "how often to ask the hub", "2s")
        .addHelpText(
          "after",
          "\nExit code: 0 SUCCEEDED, 10 FAILED, 11 CANCELLED, 12 --timeout passed (see docs/fleetctl.md).\n-o json|yaml|name: only the job as it ended (or as it stood at --timeout).",
        ),
      ["table", "json", "yaml", "name"],
    ),
    ["fleetctl api job wait enrol-brisk-falcon-3fa2 --timeout 1h && echo enrolled"],
  ).action(lazy(jobs, "wait"));
}

function addSatelliteCommands(sat: Command): void {
  withOutput(withPaging(sat.command("list").description("expected satellites"))).action(lazy(satellites, "list"));
  withOutput(sat.command("get").description("a satellite and its agents' clients").argument("<name>")).action(
    lazy(satellites, "get"),
  );
  examples(
    withOutput(
      sat
        .command("create")
        .description("expect a satellite (admin): one client per agent, each secret shown once")
        .argument("<name>", "deployment name, e.g. sys1-ice2")
        .requiredOption("--site <slug|id...>", "sites it serves")
        .addOption(new Option("--env <env>", "environment").choices(["dev", "stg", "prod"]).makeOptionMandatory()),
      ["table", "json", "yaml"],
    ),
    ["fleetctl api satellite create sys1-ice2 --site keflavik --env prod -o json > secrets.json"],
  ).action(lazy(satellites, "create"));
  sat
    .command("delete")
    .description("stop expecting a satellite (admin): its clients stop working")
    .argument("<name>")
    .action(lazy(satellites, "remove"));
  const agentOption = () => new Option("--agent <agent>", "agent kind").choices(AGENTS).makeOptionMandatory();
  withOutput(
    sat
      .command("rotate-secret")
      .description("issue a new secret for an agent (admin), shown once; the old one works for the overlap")
      .argument("<name>")
      .addOption(agentOption()),
    ["table", "json", "yaml"],
  ).action(lazy(satellites, "rotateSecret"));
  sat
    .command("revoke")
    .description("revoke an agent's client (admin): its tokens fail from now on; cannot be undone")
    .argument("<name>")
    .addOption(agentOption())
    .action(lazy(satellites, "revoke"));
}

function addClientCommands(client: Command): void {
  withOutput(withPaging(client.command("list").description("OAuth2 clients other than agents' (admin)"))).action(
    lazy(machineClients, "list"),
  );
  withOutput(
    client.command("get").description("a client: scopes, revocation, last token (admin)").argument("<client-id>"),
  ).action(lazy(machineClients, "get"));
  examples(
    withOutput(
      client
        .command("create")
        .description("create a machine client (admin) with its own fleet scopes; its secret is shown once")
        .argument("<client-id>", "client id, a slug, e.g. matrix-prod")
        .requiredOption("--scope <scope>", "read-only, operate, admin, or a list of fleet.* scopes")
        .option("--description <text>", "what the client is for"),
      ["table", "json", "yaml"],
    ),
    [
      'fleetctl api client create matrix-prod --scope read-only --description "Matrix connector" -o json > matrix-prod.json',
    ],
  ).action(lazy(machineClients, "create"));
  examples(
    withOutput(
      client
        .command("rotate-secret")
        .description("issue a new secret (admin), shown once; the old one works for the overlap")
        .argument("<client-id>"),
      ["table", "json", "yaml"],
    ),
    ["fleetctl api client rotate-secret matrix-prod -o json | jq -r .clientSecret"],
  ).action(lazy(machineClients, "rotateSecret"));
  examples(
    client
      .command("revoke")
      .description("revoke a machine client (admin): its tokens fail from now on; cannot be undone")
      .argument("<client-id>"),
    ["fleetctl api client revoke matrix-prod"],
  ).action(lazy(machineClients, "revoke"));
}

function addSlurmCommands(cfg: Command): void {
  const site = () => new Option("--site <slug|id>", "the site").makeOptionMandatory();
  withOutput(withPaging(cfg.command("list").description("a site's SLURM bootstrap configs")))
    .addOption(site())
    .action(lazy(slurm, "list"));
  withOutput(cfg.command("get").description("a SLURM bootstrap config").argument("<id>").addOption(site())).action(
    lazy(slurm, "get"),
  );
  const fields = (c: Command) =>
    c
      .requiredOption("--image <image>", "Nova image (name or id)")
      .requiredOption("--flavor <flavor>", "Nova flavor (name or id)")
      .option("--gres <gres>", "SLURM GRES, e.g. gpu:h100:8")
      .option("--user-data-file <file>", "cloud-init user-data, read from this file (sent base64)");
  examples(
    withOutput(
      fields(
        cfg
          .command("create")
          .description("create the config of a (site, device role) (admin)")
          .addOption(site())
          .requiredOption("--role <slug|id>", "device role"),
      ),
    ),
    [
      "fleetctl api slurm-config create --site keflavik --role gpu-node --image ubuntu-24.04 --flavor gpu.h100.8 \\",
      "    --gres gpu:h100:8 --user-data-file ./cloud-init.yaml",
    ],
  ).action(lazy(slurm, "create"));
  withOutput(
    fields(
      cfg
        .command("replace")
        .description("replace a config (admin; every field again); sends If-Match with the ETag read first")
        .argument("<id>")
        .addOption(site())
        .option("--if-match <etag>", "send this ETag instead of reading the config first"),
    ),
  ).action(lazy(slurm, "replace"));
  cfg
    .command("delete")
    .description("delete a config (admin)")
    .argument("<id>")
    .addOption(site())
    .option("--if-match <etag>", "send this ETag instead of reading the config first")
    .action(lazy(slurm, "remove"));
}
