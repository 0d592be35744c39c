/**
 * The Ironic activities with the `redfish` hardware type: a real Ironic whose redfish driver
 * (python3-sushy) talks HTTP to test Redfish BMCs (@fm/test-support/redfish), one per device on
 * its own loopback address, credentials read from a mounted-style directory.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IronicClient } from "@fm/clients";
import { getNode, ironicRequest, startIronic, type IronicPeer } from "@fm/test-support/ironic";
import { SYSTEM_PATH, selfSignedCertificate, startRedfishBmc, type RedfishBmc } from "@fm/test-support/redfish";
import { WAITING, expectFinal, plan, rejection, run } from "./activity-testing.ts";
import { directoryCredentials } from "./bmc-credentials.ts";
import type { ActivityDeps } from "./deps.ts";
import { ironicActivities } from "./ironic.ts";

const SITE_PASSWORD = "site-Pa55word-7f3a";
const OWN_PASSWORD = "own-Pa55word-91c2";

let ironic: IronicPeer;
let credsDir: string;
let port: number;
const bmcs: RedfishBmc[] = [];
let hostSeq = 20;

beforeAll(async () => {
  [ironic, credsDir] = await Promise.all([
    // Nothing here boots the agent ramdisk cleaning would wait for.
    startIronic({ automatedClean: false }),
    mkdtemp(join(tmpdir(), "bmc-creds-")),
  ]);
  await writeItem("site-bmc", "admin", SITE_PASSWORD);
  const first = await startRedfishBmc({ username: "admin", password: SITE_PASSWORD, host: "127.0.0.19" });
  bmcs.push(first);
  port = first.port;
}, 120_000);
afterAll(async () => {
  await Promise.all(bmcs.map((b) => b.stop()));
  await ironic?.stop();
  if (credsDir) await rm(credsDir, { recursive: true, force: true });
}, 60_000);

async function writeItem(item: string, username: string, password: string) {
  await mkdir(join(credsDir, item), { recursive: true });
  await writeFile(join(credsDir, item, "username"), `${username}\n`);
  await writeFile(join(credsDir, item, "password"), `${password}\n`);
}

/** A device with a BMC of its own (at 127.0.0.N, on the shared port), accepting these credentials. */
async function deviceWithBmc(username = "admin", password = SITE_PASSWORD) {
  const host = `127.0.0.${hostSeq++}`;
  const bmc = await startRedfishBmc({ username, password, host, port });
  bmcs.push(bmc);
  return { d: plan({ bmcAddress: host }), bmc };
}

const activities = (over: Partial<ActivityDeps> = {}) =>
  ironicActivities({
    ironic: { overcloud: new IronicClient({ endpoint: ironic.url, backoffMs: 20 }) },
    ironicDriver: "redfish",
    bmcCredentials: directoryCredentials(credsDir),
    redfish: { addressTemplate: `http://{address}:${port}`, systemId: SYSTEM_PATH, verifyCa: false },
    deployImages: { kernel: "http://127.0.0.1:9/ipa.kernel", ramdisk: "http://127.0.0.1:9/ipa.initramfs" },
    enrolOwner: async (instance) => `project-of-${instance}`,
    pollIntervalMs: 100,
    ...over,
  });

describe("Ironic activities on the redfish hardware type", () => {
  it(
    "register, configure (verify), inspect and provide a node through its BMC: driver_info, owner, resource class, power",
    async () => {
      const acts = activities();
      const { d, bmc } = await deviceWithBmc();
      const uuid = (await run(acts.ironicRegister, d)).result;
      // Registered only: nothing has talked to the BMC yet.
      expect(await getNode(ironic.url, uuid)).toMatchObject({ provision_state: "enroll", last_error: null });
      expect(bmc.requests).toEqual([]);
      const enrolled = { ...d, ironicNodeUuid: uuid };
      await run(acts.configureBmc, enrolled);
      const node = await getNode(ironic.url, uuid);
      expect(node).toMatchObject({
        driver: "redfish",
        provision_state: "manageable",
        resource_class: "GPU_COMPUTE",
        owner: "project-of-overcloud",
        power_state: "power on",
        driver_info: {
          redfish_address: bmc.url,
          redfish_system_id: SYSTEM_PATH,
          redfish_username: "admin",
          redfish_password: "******",
          redfish_verify_ca: false,
          deploy_kernel: "http://127.0.0.1:9/ipa.kernel",
          deploy_ramdisk: "http://127.0.0.1:9/ipa.initramfs",
        },
      });
      // Ironic logged in to the BMC with the site's credentials (a session), and read the system.
      expect(bmc.requests).toContainEqual({
        method: "POST",
        path: "/redfish/v1/SessionService/Sessions",
        auth: "none",
      });
      expect(bmc.requests).toContainEqual({ method: "GET", path: SYSTEM_PATH, auth: "session" });

      await run(acts.ironicInspect, enrolled);
      // Out-of-band inspection read the mock-up's processors, memory and disks.
      expect((await getNode(ironic.url, uuid)).properties).toMatchObject({
        cpus: 16,
        cpu_arch: "x86_64",
        memory_mb: "98304",
        local_gb: "3724",
      });
      await run(acts.configureBmc, enrolled);
      const configured = await getNode(ironic.url, uuid);
      await run(acts.configureBmc, enrolled); // all there, the password masked: nothing written
      expect((await getNode(ironic.url, uuid)).updated_at).toBe(configured.updated_at);
      await run(acts.ironicProvide, enrolled);
      expect(await getNode(ironic.url, uuid)).toMatchObject({ provision_state: "available", last_error: null });

      // Power goes through the BMC and comes back in Ironic.
      await ironicRequest(ironic.url, "PUT", `/v1/nodes/${uuid}/states/power`, { target: "power off" });
      await expect
        .poll(async () => (await getNode(ironic.url, uuid)).power_state, { timeout: 20_000 })
        .toBe("power off");
      expect(bmc.system.PowerState).toBe("Off");
      expect(bmc.resets).toEqual(["ForceOff"]);
    },
    WAITING,
  );

  it(
    "a device's own item wins over the site's: its BMC accepts only its own password",
    async () => {
      const { d, bmc } = await deviceWithBmc("root", OWN_PASSWORD);
      await writeItem(`${d.name}-bmc`, "root", OWN_PASSWORD);
      const uuid = (await run(activities().ironicEnroll, d)).result;
      expect(await getNode(ironic.url, uuid)).toMatchObject({
        provision_state: "manageable",
        driver_info: { redfish_username: "root", redfish_password: "******" },
      });
      expect(bmc.requests.filter((r) => r.auth === "rejected")).toEqual([]);
    },
    WAITING,
  );

  it(
    "a wrong password fails configureBmc with Ironic's message naming the BMC's 401, never the password; corrected, a retry succeeds",
    async () => {
      const { d, bmc } = await deviceWithBmc("admin", "the-real-one");
      const uuid = (await run(activities().ironicRegister, d)).result;
      const enrolled = { ...d, ironicNodeUuid: uuid };
      const f = expectFinal(
        await rejection(run(activities().configureBmc, enrolled)),
        "SourceRejected",
        /manage: node/,
      );
      expect(f.message).toMatch(/returned code 401/);
      expect(f.message).toMatch(/NoValidSession/);
      expect(f.message).not.toContain(SITE_PASSWORD);
      const [node] = (
        (await ironicRequest(ironic.url, "GET", "/v1/nodes?detail=true&limit=1000")) as {
          nodes: { name: string; provision_state: string; last_error: string; driver_info: object }[];
        }
      ).nodes.filter((n) => n.name === d.name);
      expect(node).toMatchObject({ provision_state: "enroll", driver_info: { redfish_password: "******" } });
      expect(JSON.stringify(node)).not.toContain(SITE_PASSWORD);
      expect(bmc.requests.some((r) => r.auth === "rejected")).toBe(true);

      // The operator fixes the item: the next attempt writes the password again and manages the node.
      await writeItem(`${d.name}-bmc`, "admin", "the-real-one");
      await run(activities().configureBmc, enrolled);
      expect(await getNode(ironic.url, uuid)).toMatchObject({ provision_state: "manageable", power_state: "power on" });
    },
    WAITING,
  );

  it(
    "an unreachable BMC fails configureBmc with Ironic's connection error",
    async () => {
      const { d, bmc } = await deviceWithBmc();
      await bmc.stop();
      const uuid = (await run(activities().ironicRegister, d)).result;
      const f = expectFinal(
        await rejection(run(activities().configureBmc, { ...d, ironicNodeUuid: uuid })),
        "SourceRejected",
        /manage: node/,
      );
      expect(f.message).toMatch(/Unable to connect to http:\/\/127\.0\.0\.\d+:\d+\/redfish\/v1\//);
    },
    WAITING,
  );

  it(
    "an HTTPS BMC: verified against the CA bundle redfish_verify_ca names; refused as untrusted with the default",
    async () => {
      const host = "127.0.0.90";
      const tls = await selfSignedCertificate([host]);
      const bmc = await startRedfishBmc({ username: "admin", password: SITE_PASSWORD, host, tls });
      bmcs.push(bmc);
      try {
        const https = (verifyCa: boolean | string) =>
          activities({ redfish: { addressTemplate: `https://{address}:${bmc.port}`, verifyCa } });
        const trusted = plan({ bmcAddress: host });
        const uuid = (await run(https(tls.caFile).ironicEnroll, trusted)).result;
        expect(await getNode(ironic.url, uuid)).toMatchObject({
          provision_state: "manageable",
          driver_info: { redfish_address: bmc.url, redfish_verify_ca: tls.caFile },
        });
        expect(bmc.url).toMatch(/^https:/);

        const f = expectFinal(
          await rejection(run(https(true).ironicEnroll, plan({ bmcAddress: host }))),
          "SourceRejected",
          /manage: node/,
        );
        expect(f.message).toMatch(/CERTIFICATE_VERIFY_FAILED|certificate verify failed/);
      } finally {
        await rm(tls.dir, { recursive: true, force: true });
      }
    },
    WAITING,
  );

  it("no credentials for the device, or no credential source at all, is NotConfigured and creates no node", async () => {
    const empty = await mkdtemp(join(tmpdir(), "bmc-none-"));
    try {
      const d = plan({ bmcAddress: "127.0.0.250" });
      expectFinal(
        await rejection(run(activities({ bmcCredentials: directoryCredentials(empty) }).ironicEnroll, d)),
        "NotConfigured",
        `no BMC credentials for ${d.name}: neither ${d.name}-bmc/ nor site-bmc/ in ${empty} holds username and password`,
      );
      expectFinal(
        await rejection(run(activities({ bmcCredentials: directoryCredentials(empty) }).ironicRegister, d)),
        "NotConfigured",
        /no BMC credentials for/,
      );
      expectFinal(
        await rejection(run(activities({ bmcCredentials: undefined }).ironicEnroll, d)),
        "NotConfigured",
        /no BMC_CREDENTIALS_DIR, but the redfish hardware type logs in to the BMC/,
      );
      const names = (
        (await ironicRequest(ironic.url, "GET", "/v1/nodes?fields=name&limit=1000")) as { nodes: { name: string }[] }
      ).nodes.map((n) => n.name);
      expect(names).not.toContain(d.name);
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
  });
});
