/**
 * Reads the figures out of what a hardware test printed. The formats are the tools' own (each
 * cited where it is read), so a burn-in keeps the numbers whichever image printed them:
 *  - gpu-fryer's end-of-run summary, per GPU (huggingface/gpu-fryer src/main.rs, report_progress:
 *    "GPU #{}: {:6.0} Gflops/s (min: {:.2}, max: {:.2}, dev: {:.2})", then its temperature and
 *    throttling lines, then "All GPUs seem healthy" or "Some GPUs are not healthy. Reasons:");
 *  - nccl-tests' closing "# Avg bus bandwidth    : %g" line (NVIDIA/nccl-tests src/common.cu),
 *    under mpirun's "[1,0]<stdout>:" prefix or not;
 *  - the kernel's NVIDIA Xid lines, "NVRM: Xid (PCI:0000:01:00): 79, pid=1122, GPU has fallen off
 *    the bus." (https://docs.nvidia.com/deploy/xid-errors/), which the test images copy from the
 *    kernel log into their output.
 * Lines of other shapes are ignored: a log is free text around these.
 */
import type { BurnInFigures, BurnInGpuFigures, BurnInXid } from "./burn-in.ts";

const NUM = String.raw`(\d+(?:\.\d+)?)`;
const FRYER_GPU = new RegExp(
  String.raw`^\s*GPU #(\d+):\s+${NUM} Gflops/s \(min: ${NUM}, max: ${NUM}(?:, dev: ${NUM})?\)`,
);
const FRYER_TEMPERATURE = new RegExp(String.raw`^\s*Temperature: ${NUM}°C \(min: ${NUM}, max: ${NUM}\)`);
const FRYER_THROTTLING = /^\s*Throttling HW: (true|false), Thermal SW: (true|false), Thermal HW: (true|false)/;
const FRYER_REASONS = /^\s*Some GPUs are not healthy\. Reasons:/;
const FRYER_REASON = /^\s+- (.+)$/;
const NCCL_BUS_BANDWIDTH = new RegExp(String.raw`^(?:\[[\d,]+\]<stdout>:)?#\s*Avg bus bandwidth\s*:\s*${NUM}`);
const XID = /NVRM: Xid \(PCI:([0-9a-fA-F:.]+)\): (\d+),\s*(.*)$/;

const round = (n: number, digits = 3) => Math.round(n * 10 ** digits) / 10 ** digits;

export function parseBurnInOutput(text: string): BurnInFigures {
  const gpus = new Map<number, BurnInGpuFigures>();
  const xids: BurnInXid[] = [];
  const reasons: string[] = [];
  let busBandwidthGBps: number | undefined;
  let current: BurnInGpuFigures | undefined;
  let inReasons = false;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.replace(/\s+$/, "");
    let m: RegExpExecArray | null;
    if ((m = FRYER_GPU.exec(line))) {
      current = {
        index: Number(m[1]),
        tflops: round(Number(m[2]) / 1000),
        tflopsMin: round(Number(m[3]) / 1000),
        tflopsMax: round(Number(m[4]) / 1000),
      };
      gpus.set(current.index, current);
      inReasons = false;
    } else if (current && (m = FRYER_TEMPERATURE.exec(line))) {
      current.temperatureC = Number(m[1]);
      current.temperatureMaxC = Number(m[3]);
    } else if (current && (m = FRYER_THROTTLING.exec(line))) {
      current.throttled = m.slice(1, 4).includes("true");
      current = undefined;
    } else if (FRYER_REASONS.test(line)) {
      inReasons = true;
    } else if (inReasons && (m = FRYER_REASON.exec(line))) {
      if (reasons.length < 100) reasons.push(m[1]!.slice(0, 500));
    } else if ((m = NCCL_BUS_BANDWIDTH.exec(line))) {
      busBandwidthGBps = Number(m[1]);
      inReasons = false;
    } else if ((m = XID.exec(line))) {
      if (xids.length < 1000) xids.push({ pciAddress: m[1]!, code: Number(m[2]), message: m[3]!.slice(0, 500) });
      inReasons = false;
    } else {
      inReasons = false;
    }
  }
  return {
    gpus: [...gpus.values()].sort((a, b) => a.index - b.index),
    ...(busBandwidthGBps !== undefined ? { busBandwidthGBps } : {}),
    xids,
    reasons,
  };
}
