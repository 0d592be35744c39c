/**
 * The command tree: names, arguments, options, help and examples. Every action is lazy (see
 * command-kit.ts), so building the tree is cheap and `--help` answers at once.
 */
import { Argument, Command, Option } from "commander";
import { examples, lazy, withOutput } from "./command-kit.ts";
import { addApiCommands } from "./cli-api.ts";
import { addExamples } from "./more-examples.ts";
import { VERSION } from "./version.ts";

const ENVIRONMENTS = ["dev", "stg", "prod"];

export function buildProgram(): Command {
  const program = new Command("fleetctl")
    .description("Fleet Manager from the command line: the hub's API, logins, and the operators' checks")
    .version(VERSION, "-V, --version")
    .option("-p, --profile <name>", "profile to use (default: FLEETCTL_PROFILE, else the current one)")
    .option("--hub <url>", "hub base URL, overriding the profile's (or FLEETCTL_HUB)")
    .showSuggestionAfterError()
    .exitOverride()
    .configureHelp({ showGlobalOptions: true, sortSubcommands: false });
  examples(program, [
    "fleetctl config set-profile prod --hub https://api.fleet.example.com --env prod \\",
    "    --issuer https://login.example.com --client-id fleetctl",
    "fleetctl api login --scope read-only",
    "fleetctl api device list --format count",
    "fleetctl api device list --name-exact kef-gpu-0042 --format json",
    "fleetctl api job list",
    'eval "$(fleetctl openstack auth --deployment sys1-ice2 --env prod)"',
  ]);

  addApiCommands(program.command("api").description("call the hub's API (login, sites, devices, jobs, ...)"));
  addConfigCommands(program.command("config").description("profiles: which hub, which environment, how to log in"));

  const openstack = program.command("openstack").description("OpenStack credentials of a deployment");
  examples(
    withDeploymentCloud(
      openstack
        .command("auth")
        .description("print `export OS_*=...` lines for the deployment's Ironic (eval them in your shell)"),
    ).action(lazy(() => import("./commands/openstack.ts"), "auth")),
    ['eval "$(fleetctl openstack auth --deployment sys1-ice2 --env prod)"', "openstack baremetal node list --limit 1"],
  );

  const netbox = program.command("netbox").description("NetBox checks");
  withOutput(
    examples(
      netbox
        .command("check")
        .description("pre-rollout check of a site's NetBox data (exit 13 when there is something to fix)")
        .requiredOption("--site <slug>", "NetBox site slug")
        .option("--cluster <name|id>", "the deployment's cluster (default: the hub's NetBox settings for the site)")
        .option("--netbox-url <url>", "NetBox URL (default: NETBOX_URL)")
        .option(
          "--mapping <json>",
          "role slug -> device class JSON (default: NETBOX_AGENT_DEVICE_ROLE_CLASS_MAPPING, else the hub's settings)",
        )
        .addHelpText("after", "\nThe NetBox token is read from NETBOX_TOKEN, never from the command line.")
        .action(lazy(() => import("./commands/netbox.ts"), "check")),
      [
        "NETBOX_URL=https://netbox.example.com NETBOX_TOKEN=... fleetctl netbox check --site iad1 --cluster iad1-compute",
      ],
    ),
    ["table", "json"],
  );
  withOutput(
    examples(
      withDeploymentCloud(
        netbox
          .command("populate-ib-guids")
          .description(
            "write each node's InfiniBand port GUIDs (Ironic's inspection inventory) into its NetBox interfaces' labels; a dry run unless --apply",
          ),
      )
        .option("--site <slug>", "only devices at this NetBox site")
        .option("--device <name>", "only this device (its Ironic node's name)")
        .option("--netbox-url <url>", "NetBox URL (default: NETBOX_URL)")
        .option("--apply", "write the labels (without it, only print what would be written)")
        .addHelpText(
          "after",
          "\nThe NetBox token is read from NETBOX_TOKEN, never from the command line. Exit 13 when a port cannot get its GUID\n(no matching NetBox interface, or a label holding other text: never overwritten).",
        )
        .action(lazy(() => import("./commands/netbox.ts"), "populateIbGuids")),
      [
        "fleetctl netbox populate-ib-guids --deployment sys1-ice2 --env prod --site iad1",
        "fleetctl netbox populate-ib-guids --deployment sys1-ice2 --env prod --site iad1 --apply",
      ],
    ),
    ["table", "json"],
  );

  addFleetCommands(
    program
      .command("fleet")
      .description("the fleet spec (npa.fleet/v0.0.1): plan and quota preflight, creating nothing"),
  );

  examples(
    program
      .command("completion")
      .description("print a shell completion script")
      .addArgument(new Argument("<shell>", "the shell").choices(["bash", "zsh"]))
      .action(lazy(() => import("./commands/completion.ts"), "completion")),
    ["source <(fleetctl completion bash)", 'fleetctl completion zsh > "${fpath[1]}/_fleetctl"'],
  );
  program
    .command("__complete", { hidden: true })
    .argument("<kind>", "devices")
    .argument("[prefix]", "what is typed so far")
    .action(lazy(() => import("./commands/completion.ts"), "live"));
  addExamples(program);
  return program;
}

/** The options that name a deployment's Ironic (commands/openstack.ts `deploymentCloud`). */
function withDeploymentCloud(cmd: Command): Command {
  return cmd
    .requiredOption("-d, --deployment <name>", "deployment (satellite) name, e.g. sys1-ice2")
    .addOption(new Option("-e, --env <env>", "environment").choices(ENVIRONMENTS).makeOptionMandatory())
    .addOption(
      new Option("--instance <instance>", "Ironic instance").choices(["overcloud", "undercloud"]).default("overcloud"),
    )
    .option("--clouds-file <file>", "read this clouds.yaml instead of the deployment's")
    .option("--cloud <name>", "the cloud in the clouds.yaml (default: its only one)");
}

/** The options plan and preflight share: the spec, the selectors, the Nebius profile. */
function withFleetSpec(cmd: Command): Command {
  return cmd
    .requiredOption("--spec <file>", "the fleet spec (apiVersion: npa.fleet/v0.0.1)")
    .option("--only-projects <keys>", "only these projects: names or project_ids, comma-separated")
    .option("--only-clusters <names>", "only these clusters, comma-separated")
    .option("--project-prefix <prefix>", "prefix of created projects' names, overriding the spec's project_prefix")
    .option("--nebius-profile <name>", "the ~/.nebius profile to act as (wins over the spec's profile)");
}

function addFleetCommands(fleet: Command): void {
  withOutput(
    examples(
      withFleetSpec(
        fleet
          .command("plan")
          .description(
            "show the projects (create or existing) and each cluster as it would be deployed; no cloud access",
          ),
      ).action(lazy(() => import("./commands/fleet.ts"), "plan")),
      [
        "fleetctl fleet plan --spec fleet.yaml",
        "fleetctl fleet plan --spec fleet.yaml --only-projects a,b --only-clusters train -o json",
      ],
    ),
    ["table", "json", "yaml"],
  );
  withOutput(
    examples(
      withFleetSpec(
        fleet
          .command("preflight")
          .description(
            "check tenant quotas, capacity blocks and existing projects, fail-closed (exit 14 on any shortfall)",
          ),
      )
        .option("--evidence <dir>", "read the provider's JSON from this directory instead of running the nebius CLI")
        .action(lazy(() => import("./commands/fleet.ts"), "preflight")),
      [
        "fleetctl fleet preflight --spec fleet.yaml",
        "fleetctl fleet preflight --spec fleet.yaml --evidence ./evidence -o json",
      ],
    ),
    ["table", "json", "yaml"],
  );
}

function addConfigCommands(config: Command): void {
  examples(
    config
      .command("set-profile")
      .description("create or change a profile")
      .argument("<name>", "profile name")
      .option("--hub <url>", "hub base URL")
      .addOption(new Option("--env <env>", "environment").choices(ENVIRONMENTS))
      .option("--issuer <url>", "people: the OIDC issuer")
      .option("--client-id <id>", "people: fleetctl's client id at the issuer; machines: the hub client id")
      .option("--client-secret-file <file>", "machines: file holding the client secret")
      .option("--use", "make it the current profile")
      .action(lazy(() => import("./commands/config.ts"), "setProfile")),
    [
      "fleetctl config set-profile prod --hub https://api.fleet.example.com --env prod --issuer https://login.example.com --client-id fleetctl --use",
      "fleetctl config set-profile ci --hub https://api.fleet.example.com --client-id ci-bot --client-secret-file /run/secrets/ci-bot",
    ],
  );
  config
    .command("use")
    .description("make a profile the current one")
    .argument("<name>", "profile name")
    .action(lazy(() => import("./commands/config.ts"), "use"));
  withOutput(config.command("list").description("list profiles"), ["table", "json", "yaml", "name"]).action(
    lazy(() => import("./commands/config.ts"), "list"),
  );
  config
    .command("delete")
    .description("delete a profile and its cached token")
    .argument("<name>", "profile name")
    .action(lazy(() => import("./commands/config.ts"), "remove"));
  config
    .command("path")
    .description("print the config file's path")
    .action(lazy(() => import("./commands/config.ts"), "path"));
}
