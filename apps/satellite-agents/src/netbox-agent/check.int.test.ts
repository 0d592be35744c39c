import { spawn } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NetboxClient, checkNetboxSite } from "@fm/clients";
import { realisticFleet, startNetboxServer, type NetboxServer } from "@fm/test-support/netbox-server";
import { REPO_ROOT } from "@fm/test-support/process";

const TOKEN = "0123456789abcdef0123456789abcdef01234567";
const MAPPING = {
  "gpu-node": "GPU_COMPUTE",
  "cpu-node": "CPU_BAREMETAL",
  hypervisor: "CPU_HYPERVISOR",
  "leaf-switch": "NETWORK",
} as const;
let nb: NetboxServer;
beforeAll(async () => {
  nb = await startNetboxServer({ token: TOKEN, data: realisticFleet({ sites: 2, devicesPerSite: 24 }) });
});
afterAll(() => nb.stop());

function cli(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const p = spawn(
    process.execPath,
    ["--import", "tsx", "apps/satellite-agents/src/netbox-agent/check-cli.ts", ...args],
    {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH, ...env },
    },
  );
  let stdout = "";
  let stderr = "";
  p.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  p.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => p.on("close", (code) => resolve({ code, stdout, stderr })));
}

describe("NetBox pre-rollout check", () => {
  it("passes a site whose devices are staged, roles mapped and config context complete", async () => {
    // The generated fleet has a device still 'planned' at iad1, as real sites do: stage it.
    for (const d of nb.data.devices) if (d.status === "planned") d.status = "staged";
    const findings = await checkNetboxSite(new NetboxClient({ url: nb.url, token: TOKEN }), {
      site: "iad1",
      cluster: "iad1-compute",
      mapping: MAPPING,
    });
    expect(findings.filter((f) => f.severity === "fail")).toEqual([]);
    expect(findings.map((f) => f.check)).toEqual(
      expect.arrayContaining([
        "site",
        "cluster",
        "devices",
        "status",
        "roles",
        "custom-fields",
        "config-context",
        "permissions",
      ]),
    );
    const r = await cli(["--site", "iad1", "--cluster", "iad1-compute"], {
      NETBOX_URL: nb.url,
      NETBOX_TOKEN: TOKEN,
      NETBOX_AGENT_DEVICE_ROLE_CLASS_MAPPING: JSON.stringify(MAPPING),
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("NetBox is ready for this site.");
  });

  it("reports an unmapped role, a device not staged, a missing config context and a missing cluster, and exits 1", async () => {
    const device = nb.data.devices.find((d) => d.site === 1 && d.cluster === 1)!;
    device.status = "planned";
    for (const c of nb.data.configContexts) delete c.data.bios_config;
    const { hypervisor: _h, ...partial } = MAPPING;
    const env = {
      NETBOX_URL: nb.url,
      NETBOX_TOKEN: TOKEN,
      NETBOX_AGENT_DEVICE_ROLE_CLASS_MAPPING: JSON.stringify(partial),
    };
    const r = await cli(["--site", "iad1", "--cluster", "iad1-compute", "--json"], env);
    expect(r.code).toBe(1);
    const report = JSON.parse(r.stdout) as {
      ok: boolean;
      findings: { severity: string; check: string; message: string }[];
    };
    expect(report.ok).toBe(false);
    const fails = report.findings.filter((f) => f.severity === "fail");
    expect(fails.some((f) => f.check === "roles" && f.message.includes("'hypervisor'"))).toBe(true);
    expect(fails.some((f) => f.check === "status" && f.message.includes(device.name!))).toBe(true);
    expect(fails.some((f) => f.check === "config-context" && f.message.includes("bios_config"))).toBe(true);
    const noCluster = await cli(["--site", "iad1", "--cluster", "nope"], env);
    expect(noCluster.code).toBe(1);
    expect(noCluster.stdout).toMatch(/FAIL cluster\s+no NetBox cluster 'nope'/);
    const usage = await cli(["--site", "iad1"], env);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("usage:");
  });

  it("names each read permission the token lacks, and an undefined platform_class custom field, with one request per permission", async () => {
    const before = nb.requests.length;
    nb.setDenied(["core.objectchange", "virtualization.cluster", "extras.configcontext", "dcim.macaddress"]);
    try {
      const findings = await checkNetboxSite(new NetboxClient({ url: nb.url, token: TOKEN }), {
        site: "iad1",
        cluster: "iad1-compute",
        mapping: MAPPING,
      });
      const perms = findings.filter((f) => f.check === "permissions" && f.severity !== "ok").map((f) => f.message);
      expect(perms).toEqual([
        expect.stringMatching(/^the token lacks virtualization\.view_cluster: /),
        expect.stringMatching(/^the token lacks extras\.view_configcontext: /),
        expect.stringMatching(/^the token lacks core\.view_objectchange: .*full resync/),
        expect.stringMatching(/^the token lacks dcim\.view_macaddress: /),
      ]);
      expect(findings.find((f) => f.message.includes("dcim.view_macaddress"))!.severity).toBe("warn");
      // Without the cluster read the scope cannot be checked: nothing is reported about it.
      expect(findings.some((f) => f.check === "cluster")).toBe(false);
    } finally {
      nb.setDenied([]);
    }
    // One request per probed list, whatever the number of objects (a MAC probe used to walk every page).
    const probes = nb.requests.slice(before).filter((r) => r.path === "/api/dcim/mac-addresses/");
    expect(probes).toHaveLength(1);

    nb.data.customFields["dcim.device"] = [];
    for (const d of nb.data.devices) delete d.custom_fields.platform_class;
    const findings = await checkNetboxSite(new NetboxClient({ url: nb.url, token: TOKEN }), {
      site: "iad1",
      cluster: "iad1-compute",
      mapping: MAPPING,
    });
    expect(findings).toContainEqual({
      severity: "fail",
      check: "custom-fields",
      message: expect.stringContaining("custom field 'platform_class' is not defined on dcim.device"),
    });
  });
});
