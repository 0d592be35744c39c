/**
 * The Helm charts (infra/helm/), rendered by the real Helm (scripts/peers/helm.sh, cached outside
 * the checkout) with the rollout guide's example values. What a cluster would be given is checked
 * against the code: each Deployment sets every variable its process's configuration schema
 * requires (read from the zod schemas, so a new required variable fails here until a chart sets
 * it), sets no variable the process does not read, and its values parse as the process parses
 * them; names and labels are the runbook's; secrets come from ExternalSecrets; every /metrics is
 * scraped. A missing required value fails the render with a message naming it.
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse, parseAllDocuments } from "yaml";
import type { z } from "zod";
import { EnvSchema, parseEnv } from "../apps/hub/src/env.ts";
import { CommonConfigSchema, loadConfig, satelliteName } from "../apps/satellite-agents/src/runtime/config.ts";
import type { ProcessDefinition } from "../apps/satellite-agents/src/runtime/shell.ts";
import { healthStatusAgent } from "../apps/satellite-agents/src/health-status-agent/agent.ts";
import { netboxAgent } from "../apps/satellite-agents/src/netbox-agent/agent.ts";
import { openstackAgent } from "../apps/satellite-agents/src/openstack-agent/agent.ts";
import { slurmAgent } from "../apps/satellite-agents/src/slurm-agent/agent.ts";
import { workflowAgent } from "../apps/satellite-agents/src/workflow-agent/agent.ts";
import { temporalWorker } from "../apps/satellite-agents/src/temporal-worker/worker.ts";
import { REPO_ROOT } from "@fm/test-support/process";
import { ConnectorEnvSchema, loadConfig as loadConnectorConfig } from "../apps/connectors/src/env.ts";

const run = promisify(execFile);
const HUB = join(REPO_ROOT, "infra/helm/fleet-manager-hub");
const SATELLITE = join(REPO_ROOT, "infra/helm/fleet-manager-satellite");
const HUB_EXAMPLE = join(HUB, "examples/glo1.yaml");
const SATELLITE_EXAMPLE = join(SATELLITE, "examples/sys1-ice2.yaml");

type Manifest = {
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  spec: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
};
/** Example values as parsed from YAML, edited freely by the refusal tests. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Values = any;
type EnvVar = { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } };

/** A satellite process: its config schema, and how it parses and checks its environment. */
const agentProcess = (def: ProcessDefinition<z.ZodRawShape>) => ({
  shape: CommonConfigSchema.extend(def.env).shape as Record<string, z.ZodType>,
  parse: (env: Record<string, string>) => {
    const config = loadConfig(def.env, { ...def.envDefaults, ...env });
    def.checkConfig?.(config);
    return satelliteName(def.kind, config);
  },
});
/** Each Deployment's component label → the process its container runs. */
const PROCESSES: Record<string, { shape: Record<string, z.ZodType>; parse: (env: Record<string, string>) => unknown }> =
  {
    api: { shape: EnvSchema.shape, parse: (env) => parseEnv(env) },
    "netbox-agent": agentProcess(netboxAgent),
    "openstack-agent": agentProcess(openstackAgent),
    "workflow-agent": agentProcess(workflowAgent),
    "slurm-agent": agentProcess(slurmAgent),
    "temporal-worker": agentProcess(temporalWorker),
    "health-status-agent": agentProcess(healthStatusAgent),
    connector: {
      shape: ConnectorEnvSchema.shape,
      parse: (env) => loadConnectorConfig(env),
    },
  };
/** Variables the schema requires: those with neither a default nor optional. */
const required = (shape: Record<string, z.ZodType>) =>
  Object.keys(shape).filter((k) => !shape[k]!.safeParse(undefined).success);
/** Stand-ins for values a Secret supplies, in the form the process expects. */
const secretStandIn = (name: string) =>
  ({
    DATABASE_URL: "postgres://fleet@postgres.fleet-manager.svc:5432/fleet",
    FM_KEY_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString("base64"),
  })[name] ?? "secret-from-vault-0123456789";

let helm: string;
let scratch: string;
beforeAll(async () => {
  try {
    helm = (await run(join(REPO_ROOT, "scripts/peers/helm.sh"), ["path"])).stdout.trim();
  } catch (err) {
    throw new Error(`Helm is not built: run scripts/setup.sh (or scripts/peers/helm.sh install)\n${String(err)}`);
  }
  scratch = await mkdtemp(join(tmpdir(), "fm-helm-"));
});
afterAll(() => rm(scratch, { recursive: true, force: true }));

async function render(chart: string, values: string): Promise<Manifest[]> {
  const { stdout } = await run(helm, ["template", "fm", chart, "--namespace", "fleet-manager", "-f", values]);
  return parseAllDocuments(stdout)
    .map((d) => d.toJS() as Manifest | null)
    .filter((m): m is Manifest => m !== null);
}

/** Renders with the example's values changed by `edit`; resolves with Helm's error output, or "" when it renders. */
async function renderError(chart: string, example: string, edit: (v: Values) => void): Promise<string> {
  const values = parse(readFileSync(example, "utf8"));
  edit(values);
  const file = join(scratch, `values-${Math.random().toString(36).slice(2)}.json`);
  await writeFile(file, JSON.stringify(values));
  try {
    await run(helm, ["template", "fm", chart, "--namespace", "fleet-manager", "-f", file]);
    return "";
  } catch (err) {
    return (err as { stderr: string }).stderr;
  }
}

const deployments = (ms: Manifest[]) => ms.filter((m) => m.kind === "Deployment");
const containerOf = (d: Manifest) =>
  d.spec.template.spec.containers[0] as {
    name: string;
    args: string[];
    env: EnvVar[];
    ports: { name: string; containerPort: number }[];
    livenessProbe: { httpGet: { path: string; port: string } };
    readinessProbe: { httpGet: { path: string; port: string } };
    securityContext: Record<string, unknown>;
    volumeMounts: { name: string }[];
  };
const matches = (selector: Record<string, string>, labels: Record<string, string>) =>
  Object.entries(selector).every(([k, v]) => labels[k] === v);

describe.each([
  ["fleet-manager-hub", HUB, HUB_EXAMPLE, ["api", "netbox-agent", "connector"]],
  [
    "fleet-manager-satellite",
    SATELLITE,
    SATELLITE_EXAMPLE,
    ["openstack-agent", "workflow-agent", "temporal-worker", "slurm-agent", "health-status-agent"],
  ],
])("%s with the guide's example values", (_name, chart, example, components) => {
  let manifests: Manifest[];
  beforeAll(async () => {
    manifests = await render(chart, example);
  });

  it("passes helm lint --strict", async () => {
    const { stdout } = await run(helm, ["lint", "--strict", chart, "-f", example]);
    expect(stdout).toContain("0 chart(s) failed");
  });

  it("runs each process as its own Deployment in namespace fleet-manager, container named as its component", () => {
    const found = deployments(manifests).map((d) => d.metadata.labels!["app.kubernetes.io/component"]);
    expect([...new Set(found)].sort()).toEqual([...components].sort());
    for (const d of manifests) expect(d.metadata.namespace, `${d.kind} ${d.metadata.name}`).toBe("fleet-manager");
    for (const d of deployments(manifests)) {
      const component = d.metadata.labels!["app.kubernetes.io/component"]!;
      expect(containerOf(d).name).toBe(component);
      expect(d.spec.template.metadata.labels["app.kubernetes.io/component"]).toBe(component);
      expect(matches(d.spec.selector.matchLabels, d.spec.template.metadata.labels)).toBe(true);
    }
  });

  it("sets every variable each process requires, only variables it reads, with values it accepts", () => {
    for (const d of deployments(manifests)) {
      const component = d.metadata.labels!["app.kubernetes.io/component"]!;
      const process = PROCESSES[component]!;
      const env = containerOf(d).env;
      const names = env.map((e) => e.name);
      const where = `${d.metadata.name}`;
      expect(
        required(process.shape).filter((k) => !names.includes(k)),
        `${where}: required but not set`,
      ).toEqual([]);
      expect(
        names.filter((k) => !(k in process.shape)),
        `${where}: set but not read`,
      ).toEqual([]);
      expect(new Set(names).size, `${where}: a variable set twice`).toBe(names.length);
      const values = Object.fromEntries(env.map((e) => [e.name, e.value ?? secretStandIn(e.name)]));
      expect(() => process.parse(values), where).not.toThrow();
    }
  });

  it("takes every secret from an ExternalSecret of the guide's Vault paths", () => {
    const external = manifests.filter((m) => m.kind === "ExternalSecret");
    const keysOf = (secret: string) => {
      const es = external.find((e) => e.spec.target.name === secret);
      return es ? (es.spec.data as { secretKey: string }[]).map((d) => d.secretKey) : undefined;
    };
    for (const es of external)
      for (const d of es.spec.data as { remoteRef: { key: string } }[])
        expect(d.remoteRef.key).toMatch(chart === HUB ? /^prod\/glo1\/[a-z-]+$/ : /^prod\/sys1-ice2\/[a-z-]+$/);
    expect(
      manifests.filter((m) => m.kind === "Secret").map((m) => m.metadata.name),
      "a Secret rendered by the chart",
    ).toEqual([]);
    for (const d of deployments(manifests)) {
      expect(d.spec.template.spec.containers, d.metadata.name).toHaveLength(1);
      for (const e of containerOf(d).env) {
        const ref = e.valueFrom?.secretKeyRef;
        if (ref) expect(keysOf(ref.name), `${d.metadata.name} ${e.name}`).toContain(ref.key);
      }
      for (const v of d.spec.template.spec.volumes as {
        name: string;
        secret?: { secretName: string; items?: { key: string }[] };
      }[]) {
        if (!v.secret) continue;
        const where = `${d.metadata.name} volume ${v.name}`;
        expect(keysOf(v.secret.secretName), where).toBeDefined();
        for (const item of v.secret.items ?? []) expect(keysOf(v.secret.secretName), where).toContain(item.key);
      }
    }
  });

  it("runs non-root on a read-only root file system, probed on /healthz and /readyz", () => {
    for (const d of deployments(manifests)) {
      const pod = d.spec.template.spec;
      const c = containerOf(d);
      expect(pod.securityContext).toMatchObject({ runAsNonRoot: true });
      expect(pod.securityContext.runAsUser).toBeGreaterThan(0);
      expect(c.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false });
      expect(c.livenessProbe.httpGet.path).toBe("/healthz");
      expect(c.readinessProbe.httpGet.path).toBe("/readyz");
      const ports = c.ports.map((p) => p.name);
      expect(ports).toContain(c.livenessProbe.httpGet.port);
      expect(c.volumeMounts.map((m) => m.name)).toContain("tmp");
      expect(d.spec.template.spec.containers[0].resources.requests).toBeDefined();
    }
  });

  it("scrapes every process's /metrics with a ServiceMonitor or a PodMonitor", () => {
    for (const d of deployments(manifests)) {
      const labels = d.spec.template.metadata.labels as Record<string, string>;
      const ports = containerOf(d).ports;
      const byPod = manifests.some(
        (m) =>
          m.kind === "PodMonitor" &&
          matches(m.spec.selector.matchLabels ?? {}, labels) &&
          (m.spec.selector.matchExpressions ?? []).every(
            (x: { key: string; values: string[] }) => labels[x.key] && x.values.includes(labels[x.key]!),
          ) &&
          m.spec.podMetricsEndpoints.every(
            (e: { port: string; path: string }) => e.path === "/metrics" && ports.some((p) => p.name === e.port),
          ),
      );
      const byService = manifests.some(
        (m) =>
          m.kind === "ServiceMonitor" &&
          m.spec.endpoints.every((e: { path: string }) => e.path === "/metrics") &&
          manifests.some(
            (s) =>
              s.kind === "Service" &&
              matches(m.spec.selector.matchLabels, s.metadata.labels!) &&
              matches(s.spec.selector, labels),
          ),
      );
      expect(byPod || byService, d.metadata.name).toBe(true);
    }
  });
});

describe("names the runbook's commands use", () => {
  it("hub: deployment/fleet-manager-hub-api, component api, container api, behind a PodDisruptionBudget", async () => {
    const ms = await render(HUB, HUB_EXAMPLE);
    const api = deployments(ms).find((d) => d.metadata.name === "fleet-manager-hub-api")!;
    expect(api.metadata.labels!["app.kubernetes.io/component"]).toBe("api");
    expect(containerOf(api).args).toEqual(["apps/hub/dist/main.js"]);
    const pdb = ms.find((m) => m.kind === "PodDisruptionBudget")!;
    expect(matches(pdb.spec.selector.matchLabels, api.spec.template.metadata.labels)).toBe(true);
    expect(pdb.spec.minAvailable).toBeGreaterThanOrEqual(1);
    expect(api.spec.replicas).toBeGreaterThan(pdb.spec.minAvailable);
    const expected = containerOf(api).env.find((e) => e.name === "FM_EXPECTED_SATELLITES")!.value!;
    expect(JSON.parse(expected)).toEqual([
      { name: "sys1-ice2", sites: ["keflavik"], environment: "prod" },
      { name: "sys2-sta1", sites: ["stavanger"], environment: "prod" },
    ]);
    // The NetBox allowlist and role mapping are the hub's configuration (rollout guide).
    const hubEnv = (name: string) => JSON.parse(containerOf(api).env.find((e) => e.name === name)!.value!) as unknown;
    expect(hubEnv("FM_NETBOX_DEVICE_FILTERS")).toEqual([
      { site: "keflavik", clusters: ["sys1-ice2"] },
      { site: "stavanger", clusters: ["sys2-sta1"] },
    ]);
    expect(hubEnv("FM_NETBOX_DEVICE_ROLE_CLASS_MAPPING")).toEqual({
      "gpu-node": "GPU_COMPUTE",
      "cpu-node": "CPU_BAREMETAL",
      hypervisor: "CPU_HYPERVISOR",
    });
  });

  it("satellite: fleet-manager-satellite-<component>, clients templated from satelliteName, temporal.host generated", async () => {
    const ms = await render(SATELLITE, SATELLITE_EXAMPLE);
    const byName = Object.fromEntries(deployments(ms).map((d) => [d.metadata.name, d]));
    const env = (name: string, v: string) => containerOf(byName[name]!).env.find((e) => e.name === v)?.value;
    for (const [component, process, client] of [
      ["openstack-agent", "openstack", "ironic-agent-sys1-ice2"],
      ["workflow-agent", "workflow", "workflow-agent-sys1-ice2"],
      ["temporal-worker", "temporal-worker", "temporal-worker-sys1-ice2"],
      ["health-status-agent", "health-status", "health-status-agent-sys1-ice2"],
    ] as const) {
      const name = `fleet-manager-satellite-${component}`;
      expect(containerOf(byName[name]!).args).toEqual(["apps/satellite-agents/dist/main.js", process]);
      expect(env(name, "FM_CLIENT_ID")).toBe(client);
      expect(env(name, "FM_SITE")).toBe("keflavik");
      expect(env(name, "FM_HUB_URL")).toBe("https://api.fleet.nscale.com");
    }
    for (const name of ["fleet-manager-satellite-workflow-agent", "fleet-manager-satellite-temporal-worker"])
      expect(env(name, "TEMPORAL_ADDRESS")).toBe("temporal-frontend.temporal.svc.cluster.local:7233");
    expect(env("fleet-manager-satellite-temporal-worker", "SLURM_URL")).toBe("https://10.20.30.40:6820");
    // The worker and the SLURM agent must agree on which node a device is.
    expect(env("fleet-manager-satellite-temporal-worker", "SLURM_DEVICE_NAME_PREFIX")).toBe("ice2-");
    expect(env("fleet-manager-satellite-health-status-agent", "MIMIR_BASE_URL")).toBe(
      "https://mimir.nscale.com/prometheus",
    );
    expect(env("fleet-manager-satellite-temporal-worker", "IRONIC_DEPLOY_KERNEL")).toBe(
      "5f0b2c8e-6c1a-4b1e-9a43-2d7f3c1e9b10",
    );
    expect(env("fleet-manager-satellite-temporal-worker", "IRONIC_DEPLOY_RAMDISK")).toBe(
      "8a4d1e2f-3b5c-4d6e-8f70-91a2b3c4d5e6",
    );
    expect(env("fleet-manager-satellite-temporal-worker", "IRONIC_ENROL_BOOT_INTERFACE")).toBe("redfish-virtual-media");
    expect(env("fleet-manager-satellite-temporal-worker", "IRONIC_ENROL_TARGET_PROJECT_NAME")).toBe(
      "fleet-manager-enrol",
    );
    // openstack.slurm: Nova in the SLURM project for SLURM adoption, its clouds.yaml mounted.
    expect(env("fleet-manager-satellite-temporal-worker", "OPENSTACK_SLURM_PROJECT_NAME")).toBe("slurm");
    expect(env("fleet-manager-satellite-temporal-worker", "OPENSTACK_SLURM_NETWORK")).toBe(
      "4c7e2a90-1b3d-4e5f-a6b7-c8d9e0f1a2b3",
    );
    expect(env("fleet-manager-satellite-temporal-worker", "OPENSTACK_SLURM_KEY_NAME")).toBe("sys1-ice2-keypair");
    const worker = byName["fleet-manager-satellite-temporal-worker"]!;
    const cloudsDir = env("fleet-manager-satellite-temporal-worker", "OPENSTACK_SLURM_CLOUDS_FILE")!.replace(
      /\/clouds\.yaml$/,
      "",
    );
    const mount = (containerOf(worker).volumeMounts as { name: string; mountPath: string }[]).find(
      (m) => m.mountPath === cloudsDir,
    )!;
    expect(
      (worker.spec.template.spec.volumes as { name: string; secret: unknown }[]).find((v) => v.name === mount.name)!
        .secret,
    ).toEqual({
      secretName: "fleet-manager-satellite-openstack",
      items: [{ key: "slurm-clouds.yaml", path: "clouds.yaml" }],
    });
  });

  it("satellite: the worker reads BMC credentials as <item>/username and <item>/password from the `*-bmc` items", async () => {
    const values = parse(readFileSync(SATELLITE_EXAMPLE, "utf8"));
    values.fleetManager.satellite.temporalWorker.bmcCredentialItems = ["site-bmc", "gpu001-bmc"];
    const file = join(scratch, "bmc-items.json");
    await writeFile(file, JSON.stringify(values));
    const ms = await render(SATELLITE, file);
    const worker = deployments(ms).find((d) => d.metadata.name === "fleet-manager-satellite-temporal-worker")!;
    const env = containerOf(worker).env.find((e) => e.name === "BMC_CREDENTIALS_DIR")!.value!;
    const mount = (containerOf(worker).volumeMounts as { name: string; mountPath: string }[]).find(
      (m) => m.mountPath === env,
    )!;
    const volume = (
      worker.spec.template.spec.volumes as { name: string; secret: { secretName: string; items: unknown } }[]
    ).find((v) => v.name === mount.name)!;
    expect(volume.secret).toEqual({
      secretName: "fleet-manager-satellite-bmc",
      items: ["site-bmc", "gpu001-bmc"].flatMap((i) => [
        { key: `${i}.username`, path: `${i}/username` },
        { key: `${i}.password`, path: `${i}/password` },
      ]),
    });
    const secret = ms.find((m) => m.kind === "ExternalSecret" && m.metadata.name === "fleet-manager-satellite-bmc")!;
    expect(secret.spec.data).toContainEqual({
      secretKey: "gpu001-bmc.password",
      remoteRef: { key: "prod/sys1-ice2/gpu001-bmc", property: "password" },
    });
  });
  it("satellite: burn-in's images by architecture or the legacy scalar, its output claim, and the object storage secret", async () => {
    const workerEnv = async (edit: (v: Values) => void) => {
      const values = parse(readFileSync(SATELLITE_EXAMPLE, "utf8"));
      edit(values);
      const file = join(scratch, `burn-in-${Math.random().toString(36).slice(2)}.json`);
      await writeFile(file, JSON.stringify(values));
      const worker = deployments(await render(SATELLITE, file)).find(
        (d) => d.metadata.name === "fleet-manager-satellite-temporal-worker",
      )!;
      return Object.fromEntries(containerOf(worker).env.map((e) => [e.name, e.value ?? e.valueFrom?.secretKeyRef]));
    };
    // The guide's architecture-keyed map.
    const keyed = await workerEnv(() => {});
    expect(keyed).toMatchObject({
      HARDWARE_TESTS_DEFAULT_IMAGE_X86_64: "/vast/fleet-manager/enroot/x86_64/hardware-tests-default.sqsh",
      HARDWARE_TESTS_DEFAULT_IMAGE_AARCH64: "/vast/fleet-manager/enroot/aarch64/hardware-tests-default.sqsh",
      FM_BURNIN_OUTPUT_DIR: "/vast/fleet-manager/burn-in",
    });
    expect(keyed).not.toHaveProperty("HARDWARE_TESTS_DEFAULT_IMAGE");
    // A site still on the legacy scalar, with the bucket controller's secret.
    const scalar = await workerEnv((v) => {
      v.fleetManager.satellite.temporalWorker.hardwareTests.defaultContainerImage = "/vast/enroot-cache/hw.sqsh";
      v.fleetManager.satellite.workflowAgent.objectStorage = { enableOperatorSecret: true };
    });
    expect(scalar.HARDWARE_TESTS_DEFAULT_IMAGE).toBe("/vast/enroot-cache/hw.sqsh");
    expect(scalar).not.toHaveProperty("HARDWARE_TESTS_DEFAULT_IMAGE_X86_64");
    for (const key of ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "BUCKET_NAME", "S3_ENDPOINT"])
      expect(scalar[key]).toEqual({ name: "workflow-agent-object-storage-credentials", key });
  });
});

describe("values the render refuses, naming them", () => {
  const drop = (path: string) => (v: Values) => {
    const keys = path.split(".");
    const last = keys.pop()!;
    delete keys.reduce((o, k) => o[k], v)[last];
  };
  it.each([
    [HUB, HUB_EXAMPLE, "environment"],
    [HUB, HUB_EXAMPLE, "deployment"],
    [HUB, HUB_EXAMPLE, "fleetManager.netboxUrl"],
    [HUB, HUB_EXAMPLE, "fleetManager.hub.connectors.0.kusto"],
    [SATELLITE, SATELLITE_EXAMPLE, "environment"],
    [SATELLITE, SATELLITE_EXAMPLE, "satelliteName"],
    [SATELLITE, SATELLITE_EXAMPLE, "siteSlug"],
    [SATELLITE, SATELLITE_EXAMPLE, "fleetManager.netboxUrl"],
    [SATELLITE, SATELLITE_EXAMPLE, "fleetManager.satellite.hubUrl"],
  ])("%s without %s", async (chart, example, path) => {
    const error = await renderError(chart, example, drop(path));
    const leaf = path.split(".").pop()!;
    expect(error).toMatch(new RegExp(`missing propert(y|ies) .*'${leaf}'`));
  });

  it("a site silence window longer than the staleness window, naming both; equal renders", async () => {
    const windows = (silence: number, stale: number) => (v: Values) => {
      v.fleetManager.hub.siteSilenceAfterSeconds = silence;
      v.fleetManager.hub.staleAfterSeconds = stale;
    };
    expect(await renderError(HUB, HUB_EXAMPLE, windows(601, 600))).toMatch(
      /fleetManager\.hub\.siteSilenceAfterSeconds \(601\) must be at most fleetManager\.hub\.staleAfterSeconds \(600\)/,
    );
    expect(await renderError(HUB, HUB_EXAMPLE, windows(600, 600))).toBe("");
    expect(await renderError(HUB, HUB_EXAMPLE, () => undefined)).toBe("");
  });

  it("a web login idle longer than its maximum length, naming both; equal renders", async () => {
    const windows = (idle: number, max: number) => (v: Values) => {
      v.fleetManager.hub.oidc = { ...v.fleetManager.hub.oidc, webSessionIdleSeconds: idle, webSessionMaxSeconds: max };
    };
    expect(await renderError(HUB, HUB_EXAMPLE, windows(3601, 3600))).toMatch(
      /fleetManager\.hub\.oidc\.webSessionIdleSeconds \(3601\) must be at most fleetManager\.hub\.oidc\.webSessionMaxSeconds \(3600\)/,
    );
    expect(await renderError(HUB, HUB_EXAMPLE, windows(3600, 3600))).toBe("");
  });

  it("an environment other than dev, stg or prod; stg itself renders", async () => {
    expect(await renderError(SATELLITE, SATELLITE_EXAMPLE, (v) => (v.environment = "staging"))).toMatch(
      /\/environment.*'dev', 'stg', 'prod'/,
    );
    expect(await renderError(SATELLITE, SATELLITE_EXAMPLE, (v) => (v.environment = "stg"))).toBe("");
    expect(await renderError(HUB, HUB_EXAMPLE, (v) => (v.environment = "stg"))).toBe("");
  });

  it("SLURM through OpenStack enabled without the worker's slurmrestd URL or the project", async () => {
    const error = await renderError(SATELLITE, SATELLITE_EXAMPLE, (v) => {
      delete v.fleetManager.satellite.temporalWorker.slurm.baseUrl;
      v.fleetManager.satellite.openstack.slurm.network = "";
    });
    expect(error).toContain("/fleetManager/satellite/temporalWorker/slurm/baseUrl");
    expect(error).toContain("/fleetManager/satellite/openstack/slurm/network");
  });

  it("the SLURM agent without the slurmrestd URL it reads; disabled, it renders no Deployment nor client secret", async () => {
    const error = await renderError(SATELLITE, SATELLITE_EXAMPLE, (v) => {
      v.fleetManager.satellite.openstack.slurm.enabled = false;
      v.fleetManager.satellite.temporalWorker.slurm.baseUrl = "";
    });
    expect(error).toContain("/fleetManager/satellite/temporalWorker/slurm/baseUrl");
    const values = parse(readFileSync(SATELLITE_EXAMPLE, "utf8"));
    values.fleetManager.satellite.slurmAgent.enabled = false;
    const file = join(scratch, "no-slurm-agent.json");
    await writeFile(file, JSON.stringify(values));
    const ms = await render(SATELLITE, file);
    expect(deployments(ms).map((d) => d.metadata.labels!["app.kubernetes.io/component"])).not.toContain("slurm-agent");
    const clients = ms.find((m) => m.metadata.name === "fleet-manager-satellite-hub-clients")!;
    expect(clients.spec.data.map((d: { secretKey: string }) => d.secretKey)).not.toContain("slurm");
  });

  it("the health-status agent enabled without Mimir's URL; disabled, it renders no Deployment and no Mimir secret", async () => {
    expect(
      await renderError(
        SATELLITE,
        SATELLITE_EXAMPLE,
        (v) => (v.fleetManager.satellite.healthStatusAgent.mimir.baseUrl = ""),
      ),
    ).toContain("/fleetManager/satellite/healthStatusAgent/mimir/baseUrl");
    const values = parse(readFileSync(SATELLITE_EXAMPLE, "utf8"));
    values.fleetManager.satellite.healthStatusAgent.enabled = false;
    const file = join(scratch, "no-health.json");
    await writeFile(file, JSON.stringify(values));
    const ms = await render(SATELLITE, file);
    expect(deployments(ms).map((d) => d.metadata.name)).not.toContain("fleet-manager-satellite-health-status-agent");
    expect(ms.map((m) => m.metadata.name)).not.toContain("fleet-manager-satellite-mimir");
  });

  it("a deploy kernel without its ramdisk", async () => {
    const error = await renderError(SATELLITE, SATELLITE_EXAMPLE, (v) => {
      v.fleetManager.satellite.openstack.ironic.deployRamdisk = "";
    });
    expect(error).toContain("/fleetManager/satellite/openstack/ironic/deployRamdisk");
  });

  it("a hardware type that logs in to BMCs without a BMC credentials item, or an item not named *-bmc", async () => {
    expect(
      await renderError(
        SATELLITE,
        SATELLITE_EXAMPLE,
        (v) => (v.fleetManager.satellite.temporalWorker.bmcCredentialItems = []),
      ),
    ).toContain("/fleetManager/satellite/temporalWorker/bmcCredentialItems");
    expect(
      await renderError(
        SATELLITE,
        SATELLITE_EXAMPLE,
        (v) => (v.fleetManager.satellite.temporalWorker.bmcCredentialItems = ["netbox-login"]),
      ),
    ).toContain("/fleetManager/satellite/temporalWorker/bmcCredentialItems/0");
  });

  it("temporal.host, which the chart generates", async () => {
    expect(await renderError(SATELLITE, SATELLITE_EXAMPLE, (v) => (v.temporal = { host: "temporal:7233" }))).toContain(
      "/temporal/host",
    );
  });
});

/**
 * Every numeric bound of both charts' schemas, found by walking the schema: the at-the-bound value
 * renders and one step past it is refused, naming the value. The list is written out so that a
 * bound removed from a schema (the feed retention minimum is the only guard of "at least twice
 * the snapshot timeout") fails here rather than silently dropping out of the table.
 */
describe("the charts' numeric guards, on both sides of each bound", () => {
  type Bound = {
    chart: string;
    example: string;
    path: string;
    kind: "minimum" | "maximum";
    bound: number;
    integer: boolean;
  };
  const EXPECTED = {
    "fleet-manager-hub": [
      "fleetManager.hub.replicas >= 1",
      "fleetManager.hub.netboxAgent.resyncIntervalSeconds >= 1",
      "fleetManager.hub.oidc.webSessionIdleSeconds >= 120",
      "fleetManager.hub.oidc.webSessionIdleSeconds <= 2592000",
      "fleetManager.hub.oidc.webSessionMaxSeconds >= 300",
      "fleetManager.hub.oidc.webSessionMaxSeconds <= 2592000",
      "fleetManager.hub.staleAfterSeconds >= 10",
      "fleetManager.hub.siteSilenceAfterSeconds >= 10",
      "fleetManager.hub.feedRetentionSeconds >= 1200",
      "fleetManager.hub.impairment.cordonAfterSeconds >= 0",
      "fleetManager.hub.impairment.releaseAfterSeconds >= 0",
      "fleetManager.hub.impairment.maxSiteFraction >= 0",
      "fleetManager.hub.impairment.maxSiteFraction <= 1",
      "fleetManager.hub.connectors.0.slaSeconds >= 1",
    ],
    "fleet-manager-satellite": [
      "temporal.port >= 1",
      "temporal.port <= 65535",
      "fleetManager.satellite.workflowAgent.concurrency >= 1",
    ],
  };
  const EXAMPLES = { [HUB]: HUB_EXAMPLE, [SATELLITE]: SATELLITE_EXAMPLE };

  /** The bounds a schema declares, as value paths (an array's items as its first element). */
  function bounds(chart: string): Bound[] {
    const found: Bound[] = [];
    const walk = (node: Record<string, unknown>, path: string[]) => {
      for (const kind of ["minimum", "maximum"] as const)
        if (typeof node[kind] === "number")
          found.push({
            chart,
            example: EXAMPLES[chart]!,
            path: path.join("."),
            kind,
            bound: node[kind],
            integer: node.type === "integer",
          });
      for (const [k, child] of Object.entries((node.properties ?? {}) as Record<string, Record<string, unknown>>))
        walk(child, [...path, k]);
      if (node.items && typeof node.items === "object") walk(node.items as Record<string, unknown>, [...path, "0"]);
    };
    walk(JSON.parse(readFileSync(join(chart, "values.schema.json"), "utf8")) as Record<string, unknown>, []);
    return found;
  }
  const all = [...bounds(HUB), ...bounds(SATELLITE)];
  const label = (b: Bound) => `${b.path} ${b.kind === "minimum" ? ">=" : "<="} ${b.bound}`;

  it("are exactly the bounds the schemas declare", () => {
    expect(
      Object.fromEntries([HUB, SATELLITE].map((c) => [basename(c), all.filter((b) => b.chart === c).map(label)])),
    ).toEqual(EXPECTED);
  });

  /** Sets `path` in the example's values, creating what is missing on the way. */
  const set = (path: string, value: number) => (v: Values) => {
    const keys = path.split(".");
    const last = keys.pop()!;
    let o = v;
    for (const k of keys) o = o[k] ??= {};
    o[last] = value;
  };
  /**
   * A window at its bound takes the window it bounds along (the render refuses silence >
   * staleness, and a web login's idle time > its maximum length).
   */
  const setCoherent = (path: string, value: number) => (v: Values) => {
    set(path, value)(v);
    if (path === "fleetManager.hub.staleAfterSeconds") set("fleetManager.hub.siteSilenceAfterSeconds", 10)(v);
    if (path === "fleetManager.hub.oidc.webSessionIdleSeconds")
      set("fleetManager.hub.oidc.webSessionMaxSeconds", 2592000)(v);
    if (path === "fleetManager.hub.oidc.webSessionMaxSeconds")
      set("fleetManager.hub.oidc.webSessionIdleSeconds", 120)(v);
  };
  it.each(all.map((b) => [label(b), b] as const))("%s", async (_, b) => {
    const step = b.integer ? 1 : 0.001;
    const past = b.kind === "minimum" ? b.bound - step : b.bound + step;
    expect(await renderError(b.chart, b.example, setCoherent(b.path, b.bound))).toBe("");
    const error = await renderError(b.chart, b.example, setCoherent(b.path, past));
    expect(error).toContain(`/${b.path.replaceAll(".", "/")}`);
    expect(error).toMatch(b.kind === "minimum" ? /minimum|must be >=/ : /maximum|must be <=/);
  });
});
