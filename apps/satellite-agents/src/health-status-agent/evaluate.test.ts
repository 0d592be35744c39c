import { describe, expect, it } from "vitest";
import { deviceKeys, evaluate, renderMessage } from "./evaluate.ts";
import { DEFAULT_RULES } from "./rules.ts";

const rule = (condition: string) => DEFAULT_RULES.find((r) => r.condition === condition)!;
const gpu = (host: string, n: number, value: number) => ({
  labels: { Hostname: host, gpu: String(n), UUID: `GPU-${host}-${n}` },
  value,
});

describe("deviceKeys", () => {
  it.each([
    ["gpu-node-01", ["gpu-node-01"]],
    ["gpu-node-01:9100", ["gpu-node-01"]],
    ["GPU-Node-01.site.example:9100", ["gpu-node-01.site.example", "gpu-node-01"]],
    ["[fe80::1]:9100", ["fe80::1"]],
  ])("%s names %j", (label, keys) => expect(deviceKeys(label)).toEqual(keys));
});

describe("renderMessage", () => {
  it("fills labels and the value, an absent label as empty", () => {
    expect(renderMessage("GPU {{ $labels.gpu }} at {{$value}} °C on {{ $labels.nope }}.", gpu("a", 3, 91.256))).toBe(
      "GPU 3 at 91.26 °C on .",
    );
  });
});

describe("evaluate", () => {
  const names = ["gpu-node-01", "gpu-node-02", "gpu-node-03"];

  it("reports every device: ok when no rule names it, else the worst severity with one condition per rule", () => {
    const { items, unmatchedSeries } = evaluate(names, [
      { rule: rule("GpuXidErrors"), samples: [gpu("gpu-node-01", 2, 79), gpu("gpu-node-01", 5, 48)] },
      { rule: rule("GpuTemperatureHigh"), samples: [gpu("gpu-node-01", 1, 93), gpu("gpu-node-03", 0, 95)] },
      { rule: rule("NodeExporterDown"), samples: [{ labels: { instance: "elsewhere-01:9100" }, value: 0 }] },
    ]);
    expect(unmatchedSeries).toBe(1);
    expect(items).toEqual([
      {
        name: "gpu-node-01",
        status: "critical",
        conditions: [
          { name: "GpuTemperatureHigh", status: "warning", message: "GPU 1 at 93 °C (over 90 °C)" },
          {
            name: "GpuXidErrors",
            status: "critical",
            message: "GPU 2 reported XID 79 in the last 10 minutes; GPU 5 reported XID 48 in the last 10 minutes",
          },
        ],
      },
      { name: "gpu-node-02", status: "ok", conditions: [] },
      {
        name: "gpu-node-03",
        status: "warning",
        conditions: [{ name: "GpuTemperatureHigh", status: "warning", message: "GPU 0 at 95 °C (over 90 °C)" }],
      },
    ]);
  });

  it("matches the node exporter's host:port instance and a FQDN to the device name, ignoring case", () => {
    const { items } = evaluate(
      ["GPU-NODE-02"],
      [
        {
          rule: rule("NodeExporterDown"),
          samples: [{ labels: { instance: "gpu-node-02.site.example:9100" }, value: 0 }],
        },
      ],
    );
    expect(items[0]).toMatchObject({ name: "GPU-NODE-02", status: "critical" });
  });

  it("counts a series without the device label as unmatched", () => {
    const { items, unmatchedSeries } = evaluate(names, [
      { rule: rule("GpuMissing"), samples: [{ labels: { instance: "gpu-node-01:9400" }, value: 7 }] },
    ]);
    expect(unmatchedSeries).toBe(1);
    expect(items.every((i) => i.status === "ok")).toBe(true);
  });
});
