/**
 * Examples for the commands whose definition does not carry its own (groups included), added to
 * their --help by path after the tree is built, so every command's help ends with at least one.
 */
import type { Command } from "commander";
import { examples } from "./command-kit.ts";

const EXAMPLES: Record<string, string[]> = {
  api: ["fleetctl api login --scope read-only", "fleetctl api device list --format count", "fleetctl api job list"],
  "api site": ["fleetctl api site list", "fleetctl api site get keflavik -o yaml"],
  "api device": [
    "fleetctl api device list --site keflavik --cordoned true",
    'fleetctl api device cordon kef-gpu-0042 --reason "bad DIMM, ticket OPS-123"',
  ],
  "api job": [
    "fleetctl api job list --active true",
    "fleetctl api job create --kind BURN_IN --device kef-gpu-0042 --wait",
    "fleetctl api job cancel enrol-brisk-falcon-3fa2",
  ],
  "api satellite": [
    "fleetctl api satellite create sys1-ice2 --site keflavik --env prod -o json > secrets.json",
    "fleetctl api satellite rotate-secret sys1-ice2 --agent slurm -o json",
  ],
  "api client": ["fleetctl api client list", "fleetctl api client create matrix-prod --scope read-only -o json"],
  "api slurm-config": [
    "fleetctl api slurm-config list --site keflavik",
    "fleetctl api slurm-config create --site keflavik --role gpu-node --image ubuntu-24.04 --flavor gpu.h100.8 --user-data-file ./cloud-init.yaml",
  ],
  "api discrepancy": ["fleetctl api discrepancy summary", "fleetctl api discrepancy list --site keflavik"],
  "api feed": ["fleetctl api feed tail --follow"],
  config: [
    "fleetctl config set-profile stg --hub https://api.stg.fleet.example.com --env stg --issuer https://login.example.com --client-id fleetctl",
    "fleetctl config use stg",
    "fleetctl config list",
  ],
  openstack: ['eval "$(fleetctl openstack auth --deployment sys1-ice2 --env prod)"'],
  netbox: ["NETBOX_URL=https://netbox.example.com NETBOX_TOKEN=... fleetctl netbox check --site iad1"],
  fleet: ["fleetctl fleet plan --spec fleet.yaml", "fleetctl fleet preflight --spec fleet.yaml"],
  "api logout": ["fleetctl api logout --profile prod"],
  "api whoami": ["fleetctl api whoami", "fleetctl api whoami -o json | jq -r .scopes[]"],
  "api token": ['curl -H "Authorization: Bearer $(fleetctl api token)" "$HUB/api/v1/sites/"'],
  "api site list": ["fleetctl api site list", "fleetctl api site list --region eu-north-ice -o name"],
  "api site get": ["fleetctl api site get keflavik -o yaml"],
  "api site delete": ["fleetctl api site delete fra1"],
  "api device get": ["fleetctl api device get kef-gpu-0042 -o json | jq .conditions"],
  "api device history": ["fleetctl api device history kef-gpu-0042 --field provisionState"],
  "api device uncordon": ["fleetctl api device uncordon kef-gpu-0042"],
  "api job list": ["fleetctl api job list", "fleetctl api job list --active true --site keflavik -o wide"],
  "api job get": ["fleetctl api job get enrol-brisk-falcon-3fa2"],
  "api job cancel": ["fleetctl api job cancel enrol-brisk-falcon-3fa2"],
  "api satellite list": ["fleetctl api satellite list -o wide"],
  "api satellite get": ["fleetctl api satellite get sys1-ice2"],
  "api satellite delete": ["fleetctl api satellite delete sys1-ice2"],
  "api satellite rotate-secret": ["fleetctl api satellite rotate-secret sys1-ice2 --agent slurm -o json"],
  "api satellite revoke": ["fleetctl api satellite revoke sys1-ice2 --agent slurm"],
  "api client list": ["fleetctl api client list -o wide"],
  "api client get": ["fleetctl api client get matrix-prod -o json"],
  "api slurm-config list": ["fleetctl api slurm-config list --site keflavik"],
  "api slurm-config get": ["fleetctl api slurm-config get 0193a2b4-… --site keflavik -o yaml"],
  "api slurm-config replace": [
    "fleetctl api slurm-config replace 0193a2b4-… --site keflavik --image ubuntu-26.04 --flavor gpu.h100.8",
  ],
  "api slurm-config delete": ["fleetctl api slurm-config delete 0193a2b4-… --site keflavik"],
  "api discrepancy list": ["fleetctl api discrepancy list --site keflavik --kind slurm_drained_externally -o wide"],
  "api discrepancy summary": ["fleetctl api discrepancy summary"],
  "config use": ["fleetctl config use prod"],
  "config list": ["fleetctl config list"],
  "config delete": ["fleetctl config delete old-lab"],
  "config path": ['$EDITOR "$(fleetctl config path)"'],
};

export function addExamples(program: Command): void {
  const visit = (cmd: Command, path: string[]) => {
    const here = path.join(" ");
    if (EXAMPLES[here]) examples(cmd, EXAMPLES[here]);
    for (const sub of cmd.commands) visit(sub, [...path, sub.name()]);
  };
  visit(program, []);
}
