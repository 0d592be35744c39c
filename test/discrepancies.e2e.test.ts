/**
 * The discrepancy report end to end, as processes: the OpenStack agent reads a real Ironic and
 * pushes to the hub (see openstack-agent-env.ts); an operator reads the report over HTTP. A
 * discrepancy appears after the agent's push that shows it, and clears after the push that
 * shows the sources agree.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DiscrepancyList } from "@fm/domain";
import { seedNetboxOnlyDevices } from "@fm/hub/testing";
import { createNode, deleteNode } from "@fm/test-support/ironic";
import { eventually } from "@fm/test-support/wait";
import { INTERVAL_S, startOpenstackEnv, type OpenstackEnv } from "./openstack-agent-env.ts";

let e: OpenstackEnv;
beforeAll(async () => {
  e = await startOpenstackEnv();
}, 120_000);
afterAll(() => e?.stop(), 60_000);

const WITHIN = (INTERVAL_S + 20) * 1000;

async function report(siteId: string): Promise<string[]> {
  const r = await e.api<DiscrepancyList>(`/api/v1/sites/${siteId}/discrepancies/?limit=1000`);
  expect(r.status).toBe(200);
  return r.body.items.map((d) => `${d.kind}:${d.name}`).sort();
}

describe("discrepancies from a real Ironic through the OpenStack agent", () => {
  it("a node without a device and a device without a node appear, and clear when Ironic agrees with NetBox", async () => {
    const site = (await e.api<{ items: { id: string }[] }>("/api/v1/sites/?slug=keflavik")).body.items[0]!.id;
    // The fixture's stray node matches no device.
    await eventually(async () => expect(await report(site)).toContain("ironic_node_unmatched:stray-node"), WITHIN);

    // NetBox gains an active GPU node that Ironic does not have.
    await seedNetboxOnlyDevices(e.db.prisma, { slug: "keflavik" }, [{ name: "lonely-gpu", role: "gpu-node" }]);
    await eventually(
      async () => expect(await report(site)).toContain("netbox_active_without_ironic_node:lonely-gpu"),
      WITHIN,
    );

    // Ironic enrols it, and the stray node is deleted: the sources agree again.
    await createNode(e.over.url, { name: "lonely-gpu" });
    await deleteNode(e.over.url, e.nodes["stray-node"]!);
    await eventually(async () => {
      const open = await report(site);
      expect(open).not.toContain("netbox_active_without_ironic_node:lonely-gpu");
      expect(open).not.toContain("ironic_node_unmatched:stray-node");
    }, WITHIN);

    const summary = await e.api<{ byKind: Record<string, number> }>("/api/v1/discrepancies/summary");
    expect(summary.status).toBe(200);
    expect(summary.body.byKind.ironic_node_unmatched).toBe(0);
  });
});
