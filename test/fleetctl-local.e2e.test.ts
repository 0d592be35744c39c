/**
 * fleetctl commands that need no hub, run as the binary: the OpenStack credentials a shell
 * evals, shell completion, profiles. Asserted through a real bash where a shell is the user.
 */
import { spawnSync } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createNode, startIronic, type IronicPeer } from "@fm/test-support/ironic";
import { REPO_ROOT } from "@fm/test-support/process";
import { buildFleetctl } from "../scripts/build-fleetctl.ts";
import { BIN, run } from "./fleetctl-env.ts";

let home: string;
const env = () => ({ HOME: home, XDG_CONFIG_HOME: join(home, "config") });
const fleetctl = (args: string[], more: Record<string, string> = {}) => run(args, { ...env(), ...more });
/** bash -c, with `fleetctl` on the PATH as the npm bin puts it. */
const bash = (script: string) =>
  spawnSync("bash", ["-c", `fleetctl() { "${process.execPath}" "${BIN}" "$@"; }\n${script}`], {
    env: { PATH: process.env.PATH, ...env() },
    encoding: "utf8",
  });

beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), "fleetctl-local-"));
});
afterAll(() => rm(home, { recursive: true, force: true }));

/** A secret a careless quoting would break or run: quotes, $(...), backticks, a newline-free tail. */
const NASTY = `s3cr'et"$(touch ${"/tmp/fleetctl-pwned"})\`id\`;x`;

describe("openstack auth", { timeout: 120_000 }, () => {
  it("prints export lines that a shell evals into the deployment's credentials, the secret intact", async () => {
    const dir = join(home, "config", "fleetctl", "clouds", "prod", "sys1-ice2");
    await mkdir(dir, { recursive: true });
    await writeFile(
      join(dir, "overcloud-clouds.yaml"),
      `clouds:
  overcloud:
    auth_type: v3applicationcredential
    region_name: ice2
    auth:
      auth_url: https://keystone.example.com/v3
      application_credential_id: 0123abcd
      application_credential_secret: ${JSON.stringify(NASTY)}
`,
    );
    const r = bash(
      `eval "$(fleetctl openstack auth --deployment sys1-ice2 --env prod)" || exit 9
       printf '%s\\n' "$OS_AUTH_TYPE" "$OS_AUTH_URL" "$OS_APPLICATION_CREDENTIAL_ID" "$OS_APPLICATION_CREDENTIAL_SECRET" "$OS_REGION_NAME" "\${OS_CLOUD-unset}"`,
    );
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.split("\n").slice(0, 6)).toEqual([
      "v3applicationcredential",
      "https://keystone.example.com/v3",
      "0123abcd",
      NASTY,
      "ice2",
      "unset",
    ]);
    await expect(stat("/tmp/fleetctl-pwned")).rejects.toThrow();
  });

  it("a standalone Ironic gets OS_AUTH_TYPE=none and its endpoint, from --clouds-file", async () => {
    const file = join(home, "standalone.yaml");
    await writeFile(
      file,
      "clouds:\n  ironic:\n    auth_type: none\n    baremetal_endpoint_override: http://127.0.0.1:6385\n",
    );
    const r = await fleetctl(["openstack", "auth", "-d", "lab", "-e", "dev", "--clouds-file", file]);
    expect(r).toMatchObject({
      code: 0,
      stdout:
        "unset OS_CLOUD\nexport OS_AUTH_TYPE='none'\nexport OS_ENDPOINT='http://127.0.0.1:6385'\nexport OS_INTERFACE='public'\n",
    });
  });

  describe("against a real Ironic", () => {
    let ironic: IronicPeer;
    beforeAll(async () => {
      ironic = await startIronic();
    }, 180_000);
    afterAll(() => ironic?.stop());

    it("the eval'd variables are all `openstack baremetal node list` needs (python-openstackclient)", async () => {
      const node = await createNode(ironic.url, { name: "lab-gpu-0001" });
      const file = join(home, "lab.yaml");
      await writeFile(
        file,
        `clouds:\n  ironic:\n    auth_type: none\n    baremetal_endpoint_override: ${ironic.url}\n`,
      );
      // bash() passes only PATH and HOME: every OS_* variable the client sees comes from the eval.
      const r = bash(
        `eval "$(fleetctl openstack auth -d lab -e dev --clouds-file ${file})" && openstack baremetal node list -f json -c UUID -c Name -c "Provisioning State"`,
      );
      expect(r.stderr).not.toMatch(/error|Traceback/i);
      expect(r.status).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual([{ UUID: node.uuid, Name: "lab-gpu-0001", "Provisioning State": "enroll" }]);
    });
  });

  it("without a clouds file, asks 1Password for the deployment's document and says clearly when it cannot", async () => {
    const r = await fleetctl(["openstack", "auth", "-d", "nowhere", "-e", "stg"], { PATH: "/nonexistent" });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe("error: the 1Password CLI (op) is not installed\n");
  });

  it("without a clouds file, reads the document from the operators' vault, else from the runtime vault", async () => {
    // A stand-in for the 1Password CLI, which cannot run here: `op document get <item> --vault
    // <vault>` prints the document, or an error on stderr and exits 1 (1Password CLI 2.x,
    // https://developer.1password.com/docs/cli/reference/management-commands/document/#document-get).
    const bin = join(home, "fake-op");
    const vaults = join(home, "op-vaults");
    await mkdir(bin, { recursive: true });
    await writeFile(
      join(bin, "op"),
      `#!/bin/sh
[ "$1 $2 $4" = "document get --vault" ] || { echo "[ERROR] unexpected arguments: $*" >&2; exit 2; }
[ -f "$OP_VAULTS/$5/$3" ] && exec cat "$OP_VAULTS/$5/$3"
echo "[ERROR] '$3' isn't an item in the '$5' vault." >&2
exit 1
`,
      { mode: 0o755 },
    );
    const standalone = (port: number) =>
      `clouds:\n  ironic:\n    auth_type: none\n    baremetal_endpoint_override: http://127.0.0.1:${port}\n`;
    const store = async (vault: string, item: string, text: string) => {
      await mkdir(join(vaults, vault), { recursive: true });
      await writeFile(join(vaults, vault, item), text);
    };
    await store("Fleet Manager sys9-lab-operators prod", "openstack-overcloud", standalone(6385));
    await store("Fleet Manager sys9-lab prod", "openstack-undercloud", standalone(6386));
    const withOp = { PATH: `${bin}:${process.env.PATH}`, OP_VAULTS: vaults };

    const operators = await fleetctl(["openstack", "auth", "-d", "sys9-lab", "-e", "prod"], withOp);
    expect(operators.code, operators.stderr).toBe(0);
    expect(operators.stdout).toContain("export OS_ENDPOINT='http://127.0.0.1:6385'\n");

    const runtime = await fleetctl(
      ["openstack", "auth", "-d", "sys9-lab", "-e", "prod", "--instance", "undercloud"],
      withOp,
    );
    expect(runtime.code, runtime.stderr).toBe(0);
    expect(runtime.stdout).toContain("export OS_ENDPOINT='http://127.0.0.1:6386'\n");

    const none = await fleetctl(["openstack", "auth", "-d", "sys8-none", "-e", "stg"], withOp);
    expect(none).toMatchObject({ code: 1, stdout: "" });
    expect(none.stderr).toContain("no clouds document openstack-overcloud in 1Password");
    expect(none.stderr).toContain("'Fleet Manager sys8-none-operators stg'");
    expect(none.stderr).toContain("'Fleet Manager sys8-none stg'");
  });

  it("a broken clouds file is an error naming the field, never printing the secret", async () => {
    const file = join(home, "broken.yaml");
    await writeFile(
      file,
      "clouds:\n  c:\n    auth_type: v3applicationcredential\n    auth:\n      application_credential_secret: hunter2\n",
    );
    const r = await fleetctl(["openstack", "auth", "-d", "x", "-e", "dev", "--clouds-file", file]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("auth.auth_url");
    expect(r.stdout + r.stderr).not.toContain("hunter2");
  });
});

describe("completion", { timeout: 120_000 }, () => {
  it("bash completes commands, resources and options from the command tree", () => {
    const complete = (words: string) =>
      bash(
        `source <(fleetctl completion bash)
         COMP_WORDS=(${words}); COMP_CWORD=$((\${#COMP_WORDS[@]} - 1)); _fleetctl; printf '%s\\n' "\${COMPREPLY[@]}"`,
      )
        .stdout.trim()
        .split("\n");
    expect(complete("fleetctl api dev")).toEqual(["device", "devices"]);
    expect(complete("fleetctl api device list --na")).toEqual(["--name", "--name-exact"]);
    expect(complete("fleetctl --profile prod api job wa")).toEqual(["wait"]);
  });

  it("zsh completes the same through bashcompinit, the function called as zsh's completion calls it", () => {
    const r = spawnSync(
      "zsh",
      [
        "-f",
        "-c",
        // As _bash_complete (zsh's bashcompinit) sets them for `compgen -F`: COMP_WORDS a zsh
        // array, COMP_CWORD the current word's 0-based index, the function run under sh emulation.
        `fleetctl() { "${process.execPath}" "${BIN}" "$@"; }
         autoload -U +X compinit && compinit -u
         source <(fleetctl completion zsh)
         zc() { local -a COMP_WORDS=("$@"); local COMP_CWORD=$(( $# - 1 )); compgen -F _fleetctl -- "\${@[-1]}"; print -- "--end--"; }
         zc fleetctl api dev; zc fleetctl api device list --na; zc fleetctl --profile prod api job wa`,
      ],
      { env: { PATH: process.env.PATH, ...env() }, encoding: "utf8" },
    );
    expect(r.stderr).toBe("");
    const [dev, na, wa] = r.stdout.split("--end--\n").map((out) => out.split("\n").filter(Boolean));
    // zsh's compsys filters by the typed prefix itself (bashcompinit's compgen leaves it to
    // compadd): after that filter, the same words as bash.
    expect(dev!.filter((w) => w.startsWith("dev"))).toEqual(["device", "devices"]);
    expect(dev).toContain("job"); // the candidates of `fleetctl api`, not another level's
    expect(na!.filter((w) => w.startsWith("--na"))).toEqual(["--name", "--name-exact"]);
    expect(wa!.filter((w) => w.startsWith("wa"))).toEqual(["wait"]);
  });
});

describe("profiles", { timeout: 120_000 }, () => {
  it("set, list and use profiles; the config file holds no secret", async () => {
    const secretFile = join(home, "ci.secret");
    await writeFile(secretFile, "very-secret\n", { mode: 0o600 });
    for (const args of [
      [
        "config",
        "set-profile",
        "stg",
        "--hub",
        "https://hub.stg.example.com",
        "--env",
        "stg",
        "--issuer",
        "https://login.example.com",
        "--client-id",
        "fleetctl",
      ],
      [
        "config",
        "set-profile",
        "ci",
        "--hub",
        "https://hub.example.com/",
        "--env",
        "prod",
        "--client-id",
        "ci-bot",
        "--client-secret-file",
        secretFile,
      ],
      ["config", "use", "ci"],
    ]) {
      const r = await fleetctl(args);
      expect(r.code, r.stderr).toBe(0);
    }
    const list = await fleetctl(["config", "list"]);
    expect(list.stdout).toBe(
      "   NAME  HUB                          ENV   LOGIN\n" +
        "   stg   https://hub.stg.example.com  stg   person via https://login.example.com\n" +
        "*  ci    https://hub.example.com      prod  machine ci-bot\n",
    );
    const text = await readFile(join(home, "config", "fleetctl", "config.yaml"), "utf8");
    expect(text).toContain("current: ci");
    expect(text).not.toContain("very-secret");
    expect((await stat(join(home, "config", "fleetctl", "config.yaml"))).mode & 0o777).toBe(0o600);
  });

  it("keeps a relative secret file's path absolute, and leaves the mode of a folder FLEETCTL_CONFIG names alone", async () => {
    const shared = join(home, "shared-project");
    await mkdir(shared, { recursive: true, mode: 0o755 });
    const file = join(shared, "fleetctl.yaml");
    // The CLI runs in the repository's root: the relative name is resolved there.
    const r = await fleetctl(
      [
        "config",
        "set-profile",
        "rel",
        "--hub",
        "https://hub.example.com",
        "--client-id",
        "bot",
        "--client-secret-file",
        "bot.secret",
      ],
      { FLEETCTL_CONFIG: file },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(await readFile(file, "utf8")).toContain(`clientSecretFile: ${join(REPO_ROOT, "bot.secret")}`);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(shared)).mode & 0o777).toBe(0o755);
  });

  it("a profile that does not exist is a usage error listing the profiles", async () => {
    const r = await fleetctl(["--profile", "nope", "api", "job", "list"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('no profile named "nope"');
  });

  it("FLEETCTL_CONFIG names another file; an invalid one is a clear error", async () => {
    const file = join(home, "other.yaml");
    await writeFile(file, "profiles:\n  x:\n    hub: not-a-url\n");
    const r = await fleetctl(["api", "job", "list"], { FLEETCTL_CONFIG: file });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${file} is not a fleetctl config: profiles.x.hub`);
  });
});

describe("the built CLI", { timeout: 120_000 }, () => {
  it("runs with plain node, each command loaded from its chunk", async () => {
    // Its own directory beside dist/, so a concurrent `npm run build` is not disturbed.
    const outdir = join(REPO_ROOT, "apps/fleetctl", `dist-e2e-${process.pid}`);
    try {
      const entry = await buildFleetctl(outdir);
      const node = (args: string[]) =>
        spawnSync(process.execPath, [entry, ...args], { env: { PATH: process.env.PATH, ...env() }, encoding: "utf8" });
      expect(node(["--version"]).stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
      const file = join(home, "built.yaml");
      await writeFile(
        file,
        "clouds:\n  ironic:\n    auth_type: none\n    auth:\n      endpoint: http://10.0.0.1:6385\n",
      );
      const auth = node(["openstack", "auth", "-d", "lab", "-e", "dev", "--clouds-file", file]);
      expect(auth.status, auth.stderr).toBe(0);
      expect(auth.stdout).toContain("export OS_ENDPOINT='http://10.0.0.1:6385'\n");
      const usage = node(["api", "device", "list", "-o", "xml"]);
      expect(usage.status).toBe(2);
    } finally {
      await rm(outdir, { recursive: true, force: true });
    }
  });
});
