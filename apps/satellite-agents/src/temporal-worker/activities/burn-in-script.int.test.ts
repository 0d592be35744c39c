/**
 * The burn-in batch scripts run by bash, outside SLURM: what only a cluster this machine cannot
 * build would show (an allocation spanning two CPU architectures; here a stand-in `srun` on the
 * PATH answers `uname -m` for two nodes), and image paths that need quoting. The scripts' normal
 * course runs on the real SLURM in burn-in.int.test.ts.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { multiNodeScript, singleNodeScript } from "./burn-in-script.ts";

const ARCH = execFileSync("uname", ["-m"], { encoding: "utf8" }).trim();
let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function runScript(script: string, path = process.env.PATH ?? "") {
  dir = mkdtempSync(join(tmpdir(), "fm-burn-in-script-"));
  const file = join(dir, "job.sh");
  writeFileSync(file, script);
  const r = spawnSync("bash", [file], {
    env: { PATH: path, FM_BURNIN_OUT: join(dir, "out"), FM_BURNIN_DURATION_S: "60", FM_DEVICE: "gpu001" },
    encoding: "utf8",
  });
  const read = (f: string) => readFileSync(join(dir, "out", f), "utf8").trim();
  return { status: r.status, read };
}

describe("burn-in batch scripts", () => {
  it("a multi-node test on an allocation that spans two architectures fails before running anything", () => {
    const bin = mkdtempSync(join(tmpdir(), "fm-fake-srun-"));
    try {
      // Stands in for srun over two nodes of different CPUs: each task's `uname -m`.
      writeFileSync(
        join(bin, "srun"),
        `#!/bin/bash\nshift\n[ "$1" = uname ] && { echo x86_64; echo aarch64; exit 0; }\ntouch ran\n`,
      );
      chmodSync(join(bin, "srun"), 0o755);
      const r = runScript(
        multiNodeScript({
          title: "t",
          test: "nvloom",
          images: { defaultByArch: {}, nvloom: "/n.sqsh" },
          command: "true",
        }),
        `${bin}:${process.env.PATH}`,
      );
      expect(r.status).toBe(2);
      expect(r.read("nvloom.exit")).toBe("2");
      expect(r.read("nvloom.log")).toBe(
        "the allocation spans CPU architectures (aarch64 x86_64): a multi-node test needs one",
      );
    } finally {
      rmSync(bin, { recursive: true, force: true });
    }
  });

  it("image paths are passed as data, quotes and all; the legacy scalar serves an architecture without a key", () => {
    const odd = `/images/it's $(reboot).sqsh`;
    const r = runScript(
      singleNodeScript({
        title: "t",
        tests: ["hardware-tests", "gpu-fryer"],
        images: { defaultByArch: {}, defaultScalar: "/images/legacy.sqsh", gpuFryer: odd },
        command: 'printf "%s" "$FM_TEST_IMAGE"',
      }),
    );
    expect(r.status).toBe(0);
    expect(r.read("architecture")).toBe(ARCH);
    expect(r.read("hardware-tests.log")).toBe("/images/legacy.sqsh");
    expect(r.read("gpu-fryer.log")).toBe(odd);
    expect(r.read("gpu-fryer.exit")).toBe("0");
  });
});
