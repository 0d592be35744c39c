/**
 * The worker's configuration of enrolment: the redfish variables as parsed, and the enrol target
 * project resolved through the cloud's Keystone (the Keystone stand-in over HTTP).
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appCredentialCloud, startKeystoneServer, type KeystoneServer } from "@fm/clients/testing/keystone-server";
import { ConfigError, loadConfig } from "../runtime/config.ts";
import { sourceClients } from "./clients.ts";
import { checkWorkerConfig, redfishVerifyCa, workerEnv } from "./env.ts";

let keystone: KeystoneServer;
let dir: string;
beforeAll(async () => {
  [keystone, dir] = await Promise.all([
    startKeystoneServer({
      projects: [
        { id: "5d2a0c7e9b1f4e3a", name: "iad1-baremetal", domain_id: "default" },
        { id: "77", name: "twice", domain_id: "default" },
        { id: "78", name: "twice", domain_id: "other" },
      ],
    }),
    mkdtemp(join(tmpdir(), "worker-clients-")),
  ]);
});
afterAll(async () => {
  await keystone?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const base = {
  FM_HUB_URL: "http://127.0.0.1:9",
  FM_CLIENT_ID: "temporal-worker-sat1",
  FM_CLIENT_SECRET: "x",
  FM_SITE: "iad1",
};
const config = (env: Record<string, string>) => loadConfig(workerEnv, { ...base, ...env });
const once = <T>(_what: string, fn: () => Promise<T>) => fn();

describe("worker enrolment configuration", () => {
  it("defaults redfish to https://{address} with CA verification, and refuses a template without {address}", () => {
    const c = config({});
    expect([c.IRONIC_REDFISH_ADDRESS_TEMPLATE, c.IRONIC_REDFISH_VERIFY_CA]).toEqual(["https://{address}", "true"]);
    expect(() => config({ IRONIC_REDFISH_ADDRESS_TEMPLATE: "https://bmc" })).toThrow(
      new ConfigError(["IRONIC_REDFISH_ADDRESS_TEMPLATE: must contain {address}"]),
    );
    expect(() => config({ IRONIC_REDFISH_SYSTEM_ID: "Systems/1" })).toThrow(/IRONIC_REDFISH_SYSTEM_ID: must be a path/);
  });

  it.each([
    ["true", true],
    ["TRUE", true],
    ["false", false],
    ["/etc/ironic/bmc-ca.pem", "/etc/ironic/bmc-ca.pem"],
  ])("IRONIC_REDFISH_VERIFY_CA=%s is redfish_verify_ca %s", (value, want) => {
    expect(redfishVerifyCa(value)).toBe(want);
  });

  it("resolves the enrol target project through the cloud's Keystone, once", async () => {
    const clouds = join(dir, "app.yaml");
    await writeFile(clouds, appCredentialCloud(keystone.url));
    const clients = await sourceClients(
      config({
        OPENSTACK_OVERCLOUD_CLOUDS_FILE: clouds,
        OPENSTACK_OVERCLOUD_CLOUD: "kef",
        IRONIC_ENROL_TARGET_PROJECT_NAME: "iad1-baremetal",
      }),
      once,
    );
    expect(await clients!.enrolOwner!("overcloud")).toBe("5d2a0c7e9b1f4e3a");
    keystone.projects[0]!.id = "changed";
    expect(await clients!.enrolOwner!("overcloud")).toBe("5d2a0c7e9b1f4e3a");
    const ambiguous = await sourceClients(
      config({
        OPENSTACK_OVERCLOUD_CLOUDS_FILE: clouds,
        OPENSTACK_OVERCLOUD_CLOUD: "kef",
        IRONIC_ENROL_TARGET_PROJECT_NAME: "twice",
      }),
      once,
    );
    await expect(ambiguous!.enrolOwner!("overcloud")).rejects.toThrow(/2 projects named "twice"/);
    // Without the variable, nodes get no owner from the worker.
    const none = await sourceClients(
      config({ OPENSTACK_OVERCLOUD_CLOUDS_FILE: clouds, OPENSTACK_OVERCLOUD_CLOUD: "kef" }),
      once,
    );
    expect(none!.enrolOwner).toBeUndefined();
  });

  it("refuses to start with a target project but a cloud without Keystone", async () => {
    const clouds = join(dir, "none.yaml");
    await writeFile(
      clouds,
      "clouds:\n  plain:\n    auth_type: none\n    baremetal_endpoint_override: http://127.0.0.1:9\n",
    );
    await expect(
      sourceClients(
        config({ OPENSTACK_OVERCLOUD_CLOUDS_FILE: clouds, IRONIC_ENROL_TARGET_PROJECT_NAME: "iad1-baremetal" }),
        once,
      ),
    ).rejects.toThrow(
      new ConfigError([
        `IRONIC_ENROL_TARGET_PROJECT_NAME: the overcloud cloud in ${clouds} has no Keystone (auth_type none) to resolve it through`,
      ]),
    );
  });
});

describe("worker SLURM adoption configuration (openstack.slurm)", () => {
  const slurm = (clouds: string, project = "site-kef") => ({
    OPENSTACK_SLURM_CLOUDS_FILE: clouds,
    OPENSTACK_SLURM_PROJECT_NAME: project,
    OPENSTACK_SLURM_NETWORK: "0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9",
    OPENSTACK_SLURM_KEY_NAME: "sys1-ice2-keypair",
    SLURM_URL: "http://127.0.0.1:9",
    SLURM_TOKEN_FILE: "/dev/null",
  });

  it("takes the cloud, project, network and key pair together, with slurmrestd to wait for the node on", () => {
    expect(() => checkWorkerConfig(config(slurm("/etc/clouds.yaml")))).not.toThrow();
    const { OPENSTACK_SLURM_NETWORK: _n, OPENSTACK_SLURM_KEY_NAME: _k, ...partial } = slurm("/etc/clouds.yaml");
    expect(() => checkWorkerConfig(config(partial))).toThrow(
      new ConfigError([
        "OPENSTACK_SLURM_NETWORK: required together with OPENSTACK_SLURM_CLOUDS_FILE, OPENSTACK_SLURM_PROJECT_NAME",
        "OPENSTACK_SLURM_KEY_NAME: required together with OPENSTACK_SLURM_CLOUDS_FILE, OPENSTACK_SLURM_PROJECT_NAME",
      ]),
    );
    const { SLURM_URL: _u, SLURM_TOKEN_FILE: _t, ...noSlurm } = slurm("/etc/clouds.yaml");
    expect(() => checkWorkerConfig(config(noSlurm))).toThrow(/SLURM_URL: SLURM adoption/);
    expect(() => config({ ...slurm("/etc/clouds.yaml"), OPENSTACK_SLURM_NETWORK: "provider" })).toThrow(
      /OPENSTACK_SLURM_NETWORK/,
    );
  });

  it("refuses a credential scoped to another project than the one named: its servers would be a stranger's", async () => {
    const clouds = join(dir, "slurm.yaml");
    await writeFile(clouds, appCredentialCloud(keystone.url));
    keystone.computeUrl = "http://127.0.0.1:9";
    try {
      const clients = await sourceClients(config(slurm(clouds)), once);
      expect(clients!.slurmAdoption).toEqual({
        networkId: "0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9",
        keyName: "sys1-ice2-keypair",
        registerTimeoutMs: 1_800_000,
      });
      expect(clients!.nova!.endpoint).toBe(`${keystone.url}/compute/v2.1`);
      await expect(sourceClients(config(slurm(clouds, "slurm")), once)).rejects.toThrow(
        new ConfigError([
          `OPENSTACK_SLURM_PROJECT_NAME: the credential in ${clouds} is scoped to project "site-kef", not "slurm"`,
        ]),
      );
    } finally {
      keystone.computeUrl = undefined;
    }
  });
});
