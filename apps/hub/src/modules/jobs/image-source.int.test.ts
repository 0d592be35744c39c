/**
 * IMAGE_NODE's image, as an operator sends it: checked before the devices' state, so a bad
 * image is a 400 on any device (here, devices no IMAGE_NODE could run on: a 409 otherwise),
 * and the hub's FM_IMAGE_ALLOW_HTTP / FM_IMAGE_HOSTS apply on top of the contract's rule.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer } from "@fm/test-support/process";
import { startOAuthTestHub, type TestHub } from "../../testing/test-hub.ts";
import { seedNetboxOnlyDevices } from "../../testing/inventory.ts";

type Hub = TestHub & { url: string; adminToken: string };
let strict: Hub;
let mirrored: Hub;
const SHA256 = { algo: "sha256", value: "ab".repeat(32) };

async function deviceOf(hub: Hub): Promise<string> {
  await seedNetboxOnlyDevices(hub.db.prisma, { slug: "oslo" }, [{ name: "osl-gpu-001", role: "gpu-node" }]);
  return (await hub.db.prisma.device.findFirstOrThrow({ where: { name: "osl-gpu-001" } })).id;
}
const create = async (hub: Hub, deviceId: string, params: unknown) => {
  const res = await fetch(`${hub.url}/api/v1/jobs/`, {
    method: "POST",
    headers: { ...bearer(hub.adminToken), "content-type": "application/json" },
    body: JSON.stringify({ kind: "IMAGE_NODE", deviceIds: [deviceId], params }),
  });
  const body = (await res.json()) as { code?: string; detail?: string; errors?: { path: string; message: string }[] };
  return { ...body, status: res.status, contentType: res.headers.get("content-type") };
};

let strictDevice: string;
let mirroredDevice: string;
beforeAll(async () => {
  strict = await startOAuthTestHub();
  mirrored = await startOAuthTestHub({ imagePolicy: { allowHttp: true, hosts: [".mirror.example"] } });
  strictDevice = await deviceOf(strict);
  mirroredDevice = await deviceOf(mirrored);
}, 60_000);
afterAll(async () => {
  await strict?.close();
  await mirrored?.close();
});

describe("IMAGE_NODE's image", () => {
  it("file://, gopher:// and metadata URLs are a 400 naming params.image, on a device that could not take the job anyway", async () => {
    for (const image of [
      "file:///etc/ironic/ironic.conf",
      "gopher://169.254.169.254:80/_GET",
      "https://169.254.169.254/latest/meta-data/",
    ]) {
      const r = await create(strict, strictDevice, { image, osHash: SHA256 });
      expect([r.status, r.contentType], image).toEqual([400, "application/problem+json"]);
      expect(
        r.errors?.map((e) => e.path),
        image,
      ).toEqual(["body.params.image"]);
    }
    // A good image on the same device: the device's own state is what refuses it.
    const good = await create(strict, strictDevice, { image: "ubuntu-24.04-gpu" });
    expect([good.status, good.code]).toEqual([409, "device_state_conflict"]);
    expect(await strict.db.prisma.job.count()).toBe(0);
  });

  it("http:// only where the hub allows it, and only FM_IMAGE_HOSTS' hosts when that is set", async () => {
    const http = { image: "http://pxe.mirror.example/u.img", osHash: SHA256 };
    const refused = await create(strict, strictDevice, http);
    expect([refused.status, refused.code]).toEqual([400, "invalid_image"]);
    expect(refused.detail).toBe(
      "params.image an http:// URL is not accepted here (FM_IMAGE_ALLOW_HTTP is off): use https://",
    );
    expect((await create(mirrored, mirroredDevice, http)).code).toBe("device_state_conflict");
    const elsewhere = await create(mirrored, mirroredDevice, {
      image: "https://images.example.net/u.img",
      osHash: SHA256,
    });
    expect([elsewhere.status, elsewhere.code]).toEqual([400, "invalid_image"]);
    expect(elsewhere.errors).toEqual([
      {
        path: "body.params.image",
        message: "images.example.net is not one of the image hosts this hub allows (FM_IMAGE_HOSTS)",
      },
    ]);
    // A Glance image is not a URL: the host list does not apply to it.
    expect((await create(mirrored, mirroredDevice, { image: "ubuntu-24.04-gpu" })).code).toBe("device_state_conflict");
    expect(await mirrored.db.prisma.job.count()).toBe(0);
  });
});
