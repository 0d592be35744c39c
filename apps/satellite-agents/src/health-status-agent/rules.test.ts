import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadRules } from "./rules.ts";

async function file(name: string, text: string): Promise<string> {
  const path = join(await mkdtemp(join(tmpdir(), "fm-rules-")), name);
  await writeFile(path, text);
  return path;
}

const rule = {
  condition: "DiskFull",
  expr: 'node_filesystem_avail_bytes{mountpoint="/"} < 1e9',
  deviceLabel: "instance",
  severity: "warning",
  message: "{{ $labels.mountpoint }} has {{ $value }} bytes left",
};

describe("loadRules", () => {
  it("reads YAML", async () => {
    const path = await file(
      "rules.yaml",
      `rules:\n  - condition: DiskFull\n    expr: 'node_filesystem_avail_bytes{mountpoint="/"} < 1e9'\n    deviceLabel: instance\n    severity: warning\n    message: "{{ $labels.mountpoint }} has {{ $value }} bytes left"\n`,
    );
    expect(await loadRules(path)).toEqual([rule]);
  });

  it("reads JSON", async () => {
    expect(await loadRules(await file("rules.json", JSON.stringify({ rules: [rule] })))).toEqual([rule]);
  });

  it("names every problem of a bad file", async () => {
    const path = await file(
      "bad.json",
      JSON.stringify({
        rules: [
          { ...rule, severity: "fatal" },
          { ...rule, deviceLabel: "a-b" },
        ],
      }),
    );
    await expect(loadRules(path)).rejects.toThrow(
      /rules\.0\.severity: .*rules\.1\.deviceLabel: a Prometheus label name/,
    );
  });

  it("refuses two rules setting one condition", async () => {
    await expect(loadRules(await file("dup.json", JSON.stringify({ rules: [rule, rule] })))).rejects.toThrow(
      /each rule needs its own condition name/,
    );
  });

  it("says when the file is not YAML", async () => {
    await expect(loadRules(await file("x.yaml", "rules: [\n"))).rejects.toThrow(/not YAML or JSON/);
  });
});
