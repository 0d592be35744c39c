/**
 * `fleetctl completion bash|zsh`: completion generated from the command tree itself, so it
 * never lags behind a new command or option. zsh loads the bash function through
 * bashcompinit, its documented bridge for bash completions. An option's values are offered
 * from its choices or the domain's enums; a device argument from the hub itself (`fleetctl
 * __complete devices <prefix>`, at most 2 s (FLEETCTL_COMPLETION_TIMEOUT_S), silent on any error: completion never blocks or
 * prints an error into the person's command line).
 */
import type { Command } from "commander";
import {
  DeviceBriefListSchema,
  DEVICE_CLASSES,
  JOB_KINDS,
  JOB_STATUSES,
  DEVICE_BURN_IN_FILTERS,
  NETBOX_DEVICE_STATUSES,
  OPERATIONAL_STATUSES,
} from "@fm/domain";
import type { Ctx } from "../command-kit.ts";
import { buildProgram } from "../cli.ts";
import { session } from "./common.ts";

/** Values of options whose help names them rather than declaring choices, by command and option. */
const ENUM_VALUES: { command: RegExp; option: string; values: readonly string[] }[] = [
  { command: /devices? list$/, option: "--operational-status", values: OPERATIONAL_STATUSES },
  { command: /devices? list$/, option: "--device-class", values: DEVICE_CLASSES },
  { command: /devices? list$/, option: "--status", values: NETBOX_DEVICE_STATUSES },
  { command: /devices? list$/, option: "--burn-in", values: DEVICE_BURN_IN_FILTERS },
  { command: /jobs? (list|create)$/, option: "--kind", values: JOB_KINDS },
  { command: /jobs? list$/, option: "--status", values: JOB_STATUSES },
];
/** The commands whose first argument is a device, completed with the hub's names. */
const DEVICE_ARGUMENT = /devices? (get|describe|history|cordon|uncordon)$/;

interface Node {
  path: string;
  words: string[];
}

interface Valued {
  path: string;
  option: string;
  values: readonly string[];
}

function walk(cmd: Command, path: string[], out: Node[], valued: Valued[] = []): void {
  const subs = cmd.commands.filter((c) => c.name() !== "help" && !c.name().startsWith("__"));
  const here = path.join(" ");
  for (const o of cmd.options) {
    const fromEnum = ENUM_VALUES.find((v) => v.command.test(here) && v.option === o.long)?.values;
    const values = o.argChoices?.map((c) => c.replace(/=\.\.\.$/, "=")) ?? fromEnum;
    if (values) for (const f of [o.long, o.short]) if (f) valued.push({ path: here, option: f, values });
  }
  const flags = cmd.options.flatMap((o) => [o.long, o.short]).filter((f): f is string => Boolean(f));
  out.push({ path: path.join(" "), words: [...subs.flatMap((c) => [c.name(), ...c.aliases()]), ...flags, "--help"] });
  for (const s of subs) for (const name of [s.name(), ...s.aliases()]) walk(s, [...path, name], out, valued);
}

export function bashCompletion(program: Command = buildProgram()): string {
  const nodes: Node[] = [];
  const valued: Valued[] = [];
  walk(program, [], nodes, valued);
  const values = valued.map((v) => `    "${v.path}|${v.option}") cands="${v.values.join(" ")}" ;;`).join("\n");
  const live = nodes
    .filter((n) => DEVICE_ARGUMENT.test(n.path))
    .map((n) => `"${n.path}"`)
    .join("|");
  const globals = ["--profile", "-p", "--hub"];
  const cases = nodes
    .map((n) => `    "${n.path}") cands="${[...n.words, ...(n.path ? globals : [])].join(" ")}" ;;`)
    .join("\n");
  // No local named path or words: in zsh (bashcompinit) they are special (path is tied to PATH,
  // words is the completion system's own).
  return `# fleetctl completion for bash (source it, or put it in bash-completion's directory)
_fleetctl() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" cmd="" w i cands
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="\${COMP_WORDS[i]}"
    [[ "$w" == -* ]] && continue
    case "\${COMP_WORDS[i-1]}" in -*) [[ " \${_fleetctl_valued} " == *" \${COMP_WORDS[i-1]} "* ]] && continue ;; esac
    cmd="\${cmd:+$cmd }$w"
  done
  case "$cmd|\${COMP_WORDS[COMP_CWORD-1]}" in
${values}
    *) cands="-" ;;
  esac
  if [[ "$cands" != "-" ]]; then
    COMPREPLY=($(compgen -W "$cands" -- "$cur"))
    return
  fi
  if [[ "$cur" != -* ]]; then
    case "$cmd" in
      ${live})
        COMPREPLY=($(compgen -W "$(timeout "\${FLEETCTL_COMPLETION_TIMEOUT_S:-2}" fleetctl __complete devices "$cur" 2>/dev/null)" -- "$cur"))
        return ;;
    esac
  fi
  case "$cmd" in
${cases}
    *) cands="" ;;
  esac
  COMPREPLY=($(compgen -W "$cands" -- "$cur"))
}
_fleetctl_valued="${valuedOptions(program).join(" ")}"
complete -o default -F _fleetctl fleetctl
`;
}

/** Options that take a value: the word after them is not a command. */
function valuedOptions(program: Command): string[] {
  const found = new Set<string>();
  const visit = (c: Command) => {
    for (const o of c.options) if (o.required || o.optional) [o.long, o.short].forEach((f) => f && found.add(f));
    c.commands.forEach(visit);
  };
  visit(program);
  return [...found].sort();
}

export async function completion(ctx: Ctx): Promise<void> {
  const bash = bashCompletion();
  ctx.out(ctx.args[0] === "zsh" ? `#compdef fleetctl\nautoload -U +X bashcompinit && bashcompinit\n${bash}` : bash);
}

/** `fleetctl __complete devices <prefix>`: the hub's device names starting with the prefix, or nothing. */
export async function live(ctx: Ctx): Promise<void> {
  const prefix = String(ctx.args[1] ?? "");
  try {
    const { hub } = await session(ctx);
    const page = await hub.request("GET", "/api/v1/devices/", DeviceBriefListSchema, {
      query: { ...(prefix ? { name: prefix } : {}), limit: 100, brief: true, sort: "name" },
    });
    const names = page.body.items.map((d) => d.name).filter((n) => n.startsWith(prefix) && /^[\w.:-]+$/.test(n));
    ctx.out(names.map((n) => `${n}\n`).join(""));
  } catch {
    // Completion says nothing rather than an error in the middle of a command line.
  }
}
