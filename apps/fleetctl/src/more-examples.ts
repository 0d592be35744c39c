/**
 * Examples for the commands whose definition does not carry its own, added to their --help by
 * path after the tree is built, so every command's help ends with at least one.
 */
import type { Command } from "commander";
import { examples } from "./command-kit.ts";

const EXAMPLES: Record<string, string[]> = {
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
