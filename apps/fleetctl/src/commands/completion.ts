/**
 * `fleetctl completion bash|zsh`: completion generated from the command tree itself, so it
 * never lags behind a new command or option. zsh loads the bash function through
 * bashcompinit, its documented bridge for bash completions.
 */
import type { Command } from "commander";
import type { Ctx } from "../command-kit.ts";
import { buildProgram } from "../cli.ts";

interface Node {
  path: string;
  words: string[];
}

function walk(cmd: Command, path: string[], out: Node[]): void {
  const subs = cmd.commands.filter((c) => c.name() !== "help");
  const flags = cmd.options.flatMap((o) => [o.long, o.short]).filter((f): f is string => Boolean(f));
  out.push({ path: path.join(" "), words: [...subs.flatMap((c) => [c.name(), ...c.aliases()]), ...flags, "--help"] });
  for (const s of subs) for (const name of [s.name(), ...s.aliases()]) walk(s, [...path, name], out);
}

export function bashCompletion(program: Command = buildProgram()): string {
  const nodes: Node[] = [];
  walk(program, [], nodes);
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
