/**
 * A seeded fuzz of the names and free text sources and operators give the hub: NetBox pushes
 * whose device names, racks, serials and tags, and cordon reasons, are drawn from what breaks
 * stores and terminals (control characters however JSON spells them, path segments, shell and
 * HTML, the hub's own parking prefix and its old spelling, look-alikes of names the site holds).
 * Every answer is a 200 that stored exactly what was sent, or a 400 naming the field; never a
 * 5xx, never a control character stored, and the site's next honest push always applies (no
 * name can wedge its reflection). A failure prints its seed: FM_FUZZ_SEED=<seed> reruns it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Device, NetboxItem } from "@fm/domain";
import { bearer, clientToken } from "@fm/test-support/process";
import { prng } from "../testing/fuzz.ts";
import { startOAuthTestHub, type TestHub } from "../testing/test-hub.ts";

const SEED = Number(process.env.FM_FUZZ_SEED ?? 20261207);
const PUSHES = Number(process.env.FM_FUZZ_PUSHES ?? 60);
const SIZE = 6;

let hub: TestHub & { url: string; adminToken: string };
let netbox: string;
let siteId: string;

const call = async (path: string, init: RequestInit & { token?: string } = {}) => {
  const res = await fetch(`${hub.url}${path}`, {
    ...init,
    headers: {
      "content-type": "application/json",
      ...bearer(init.token ?? hub.adminToken),
      ...(init.headers as Record<string, string>),
    },
  });
  return { status: res.status, etag: res.headers.get("etag"), text: await res.text() };
};

beforeAll(async () => {
  hub = await startOAuthTestHub();
  siteId = (
    JSON.parse(
      (await call("/api/v1/sites/", { method: "POST", body: JSON.stringify({ slug: "fuzz-names", name: "Fuzz" }) }))
        .text,
    ) as { id: string }
  ).id;
  const sat = JSON.parse(
    (
      await call("/api/v1/satellites/", {
        method: "POST",
        body: JSON.stringify({ name: "sys9-fuzz", siteIds: [siteId], environment: "dev" }),
      })
    ).text,
  ) as { secrets: { agent: string; clientId: string; clientSecret: string }[] };
  const s = sat.secrets.find((x) => x.agent === "netbox")!;
  netbox = await clientToken(hub.url, s.clientId, s.clientSecret);
}, 60_000);
afterAll(() => hub?.close());

/** Pieces a hostile or careless source strings together. */
const PIECES = [
  "gpu-00",
  "GPU-00",
  " ",
  "\t",
  "\n",
  "\r",
  "\u0007",
  "\u0008",
  "\u000c",
  "\u001b[2J",
  "\u001b]52;c;cm0gLXJmIH4=\u0007",
  "\u001b]8;;https://evil.example\u001b\\",
  "\u001f",
  "\u001ffm-renaming:",
  "~fm-renaming~",
  "\u007f",
  "\u0085",
  "\u009b2J",
  "../",
  "..",
  "/",
  "$(reboot)",
  "`id`",
  "<b>",
  "&amp;",
  ",set:pxe",
  "é",
  "😀",
  "\u202e",
  "%2e%2e%2f",
];

/** What drives a terminal (C0 but TAB/LF/CR, DEL, C1), spelled out here as a reader would. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL_CHARACTER = /[\u0001-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/;
const hasControl = (v: string) => CONTROL_CHARACTER.test(v) || /[\t\n\r]/.test(v);

describe("names and free text, fuzzed from a seed", () => {
  it(`${PUSHES} NetBox pushes and cordons of hostile names and text: 200 storing exactly what was sent, or a 400 naming the field; never a 5xx or a wedged site`, async () => {
    const rand = prng(SEED);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
    const text = () =>
      Array.from({ length: 1 + Math.floor(rand() * 3) }, () => pick(PIECES)).join("") + String(Math.floor(rand() * 10));
    let at = Date.now() - 3_600_000;
    const push = (items: NetboxItem[]) =>
      call(`/api/v1/sites/${siteId}/reflections/netbox/`, {
        method: "PUT",
        token: netbox,
        body: JSON.stringify({ observedAt: new Date((at += 1000)).toISOString(), complete: true, items }),
      });
    const item = (n: number, o: Partial<NetboxItem> = {}): NetboxItem => ({
      netboxId: 9000 + n,
      name: `gpu-00${n}`,
      serial: `SN-${n}`,
      assetTag: null,
      status: "active",
      role: { slug: "gpu-node", name: "GPU node", netboxId: 7, deviceClass: "GPU_COMPUTE" },
      deviceType: null,
      location: null,
      rack: { name: "A01", netboxId: 50 },
      rackPosition: n,
      platformClass: null,
      tags: [],
      bmcAddress: null,
      interfaces: [],
      ...o,
    });
    const honest = () => Array.from({ length: SIZE }, (_, n) => item(n));
    const devices = async () =>
      (JSON.parse((await call(`/api/v1/devices/?site=fuzz-names&limit=1000`)).text) as { items: Device[] }).items;
    expect((await push(honest())).status).toBe(200);

    const failures: string[] = [];
    const statuses: Record<number, number> = {};
    for (let i = 0; i < PUSHES && failures.length < 10; i++) {
      // Some devices renamed (to hostile names, to each other's, to look-alikes), some free text hostile.
      const items = honest().map((it, n) => {
        const r = rand();
        if (r < 0.25) return { ...it, name: text() };
        if (r < 0.35) return { ...it, name: `gpu-00${(n + 1) % SIZE}` };
        if (r < 0.4) return { ...it, name: `gpu-00${n}`.toUpperCase() };
        if (r < 0.5) return { ...it, serial: text() };
        if (r < 0.55) return { ...it, tags: [text()] };
        if (r < 0.6) return { ...it, rack: { name: text(), netboxId: 50 } };
        return it;
      });
      const res = await push(items);
      statuses[res.status] = (statuses[res.status] ?? 0) + 1;
      const where = `push ${i} (seed ${SEED})`;
      if (res.status === 200) {
        const stored = new Map((await devices()).filter((d) => !d.netbox.missing).map((d) => [d.netbox.id, d]));
        for (const it of items) {
          const d = stored.get(it.netboxId);
          if (!d) failures.push(`${where}: ${JSON.stringify(it.name)} not stored`);
          else if (d.name !== it.name && !res.text.includes('"field":"name"'))
            failures.push(`${where}: ${JSON.stringify(it.name)} stored as ${JSON.stringify(d.name)}`);
          // A name holds no control character at all; free text may hold TAB, LF and CR, nothing else.
          if (d && (hasControl(d.name) || CONTROL_CHARACTER.test(d.serial ?? "")))
            failures.push(`${where}: a control character stored in ${JSON.stringify(d.name)}`);
        }
      } else if (res.status === 400) {
        const body = JSON.parse(res.text) as { errors?: { path: string }[] };
        if (!body.errors?.every((e) => /^body\.items\.\d+\.(name|serial|tags\.\d+|rack\.name)$/.test(e.path)))
          failures.push(`${where}: 400 not naming an item's field: ${res.text.slice(0, 300)}`);
      } else failures.push(`${where}: ${res.status} ${res.text.slice(0, 300)}`);
      // Whatever was refused or applied, the honest view applies next: no name wedges the site.
      const back = await push(honest());
      if (back.status !== 200) failures.push(`${where}: the honest push after it answered ${back.status} ${back.text}`);
    }

    // Cordon reasons: stored exactly, or a 400 naming body.cordonReason.
    const target = (await devices()).find((d) => d.name === "gpu-000")!;
    for (let i = 0; i < 30; i++) {
      const reason = text();
      const current = await call(`/api/v1/devices/${target.id}/`);
      const res = await call(`/api/v1/devices/${target.id}/`, {
        method: "PATCH",
        headers: { "if-match": current.etag! },
        body: JSON.stringify({ cordoned: true, cordonReason: reason }),
      });
      statuses[res.status] = (statuses[res.status] ?? 0) + 1;
      const where = `cordon ${i} (seed ${SEED}) ${JSON.stringify(reason)}`;
      if (res.status === 200) {
        const stored = (JSON.parse(res.text) as Device).cordonReason;
        if (stored !== reason.trim()) failures.push(`${where}: stored as ${JSON.stringify(stored)}`);
        if (CONTROL_CHARACTER.test(stored ?? "")) failures.push(`${where}: a control character stored`);
      } else if (res.status === 400) {
        if (!res.text.includes("body.cordonReason")) failures.push(`${where}: 400 not naming it: ${res.text}`);
      } else failures.push(`${where}: ${res.status} ${res.text.slice(0, 300)}`);
    }
    expect(failures, `statuses ${JSON.stringify(statuses)}; rerun: FM_FUZZ_SEED=${SEED}`).toEqual([]);
    // Both answers were reached: the fuzz is not all refusals nor all acceptances.
    expect(statuses[200]).toBeGreaterThan(0);
    expect(statuses[400]).toBeGreaterThan(0);
  }, 300_000);
});
