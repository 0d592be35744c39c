/**
 * The batch script of a burn-in SLURM job. Each hardware test runs its Enroot squashfs image on
 * the node (through FM_BURNIN_COMMAND, `enroot start` by default) and leaves, in the job's
 * output folder on the filesystem the compute nodes and the worker share, its log
 * (`<test>.log`), its exit code (`<test>.exit`), the image it ran (`<test>.image`) and the
 * node's `uname -m` (`architecture`). The worker reads them once the SLURM job ended.
 *
 * The default image is chosen on the node itself from its `uname -m` (the architecture-keyed
 * map), falling back to the legacy scalar. A multi-node test runs once over the whole
 * allocation with its own scalar image, after checking that every node of the allocation has
 * one architecture (an allocation spanning two would run an image on a CPU it was not built for).
 */
import { isMultiNodeTest, type BurnInTest } from "@fm/domain";

export interface HardwareTestImages {
  /** hardwareTests.defaultContainerImage keyed by `uname -m`. */
  defaultByArch: Partial<Record<"x86_64" | "aarch64", string>>;
  /** The legacy scalar defaultContainerImage, for sites not yet on the map. */
  defaultScalar?: string | undefined;
  gpuFryer?: string | undefined;
  nvloom?: string | undefined;
}

/** Single quotes for the shell: an image path is operator configuration, never code. */
export const shellQuote = (s: string): string => `'${s.replaceAll("'", `'\\''`)}'`;

/** A test's image as the script computes it: a literal, or the arch-chosen default. */
function imageExpression(test: BurnInTest, images: HardwareTestImages): string {
  switch (test) {
    case "hardware-tests":
      return '"$fm_default_image"';
    case "gpu-fryer":
      return shellQuote(images.gpuFryer ?? "");
    case "nvloom":
      return shellQuote(images.nvloom ?? "");
  }
}

const HEADER = (title: string) => `#!/bin/bash
# ${title.replaceAll("\n", " ")}
set -u
out="$FM_BURNIN_OUT"
mkdir -p "$out"
status=0
`;

/** fm_run <test> <image> <launcher...>: runs FM_BURNIN_COMMAND for one test, recording what it did. */
const RUN_FUNCTION = (command: string) => `fm_run() {
  local test=$1 image=$2; shift 2
  printf '%s\\n' "$image" > "$out/$test.image"
  if [ -z "$image" ]; then
    echo "no $test image is configured for $(cat "$out/architecture")" > "$out/$test.log"
    echo 127 > "$out/$test.exit"
    status=1
    return
  fi
  FM_TEST="$test" FM_TEST_IMAGE="$image" "$@" bash -c ${shellQuote(command)} > "$out/$test.log" 2>&1
  local rc=$?
  echo "$rc" > "$out/$test.exit"
  [ "$rc" -eq 0 ] || status=1
}
`;

/** The script of one device's single-node tests, in the order asked. */
export function singleNodeScript(a: {
  title: string;
  tests: readonly BurnInTest[];
  images: HardwareTestImages;
  command: string;
}): string {
  const arch = a.images.defaultByArch;
  const fallback = shellQuote(a.images.defaultScalar ?? "");
  return (
    HEADER(a.title) +
    `uname -m > "$out/architecture"
case "$(uname -m)" in
  x86_64) fm_default_image=${arch.x86_64 ? shellQuote(arch.x86_64) : fallback} ;;
  aarch64) fm_default_image=${arch.aarch64 ? shellQuote(arch.aarch64) : fallback} ;;
  *) fm_default_image=${fallback} ;;
esac
` +
    RUN_FUNCTION(a.command) +
    a.tests
      .filter((t) => !isMultiNodeTest(t))
      .map((t) => `fm_run ${t} ${imageExpression(t, a.images)} env\n`)
      .join("") +
    "exit $status\n"
  );
}

/**
 * The script of a multi-node test over the whole allocation (one task per node, through srun).
 * Its result is every node's: the files are written once, in the allocation's folder.
 */
export function multiNodeScript(a: {
  title: string;
  test: BurnInTest;
  images: HardwareTestImages;
  command: string;
}): string {
  return (
    HEADER(a.title) +
    `archs=$(srun --ntasks-per-node=1 uname -m | sort -u | tr '\\n' ' ')
archs=\${archs% }
printf '%s\\n' "$archs" > "$out/architecture"
` +
    RUN_FUNCTION(a.command) +
    `if [ "$(printf '%s' "$archs" | wc -w)" -ne 1 ]; then
  echo "the allocation spans CPU architectures ($archs): a multi-node test needs one" > "$out/${a.test}.log"
  echo 2 > "$out/${a.test}.exit"
  exit 2
fi
fm_run ${a.test} ${imageExpression(a.test, a.images)} srun --ntasks-per-node=1
exit $status
`
  );
}
