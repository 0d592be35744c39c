import { afterAll, beforeAll, expect, it } from "vitest";
import { startTestHub, type TestHub } from "../../testing/test-hub.ts";
import { seedInventory } from "../../testing/inventory.ts";
import { reconcileExpectedSatellites } from "./bootstrap.ts";

let hub: TestHub;
beforeAll(async () => {
  hub = await startTestHub();
  await seedInventory(hub.db.prisma, 1);
  await hub.app.ready();
});
afterAll(() => hub.close());

const sitesOf = async (name: string) =>
  await hub.db.prisma.satellite.findUnique({
    where: { name },
    include: { sites: { include: { site: true } }, clients: true },
  });

it("reconciles FM_EXPECTED_SATELLITES: creates missing satellites with their six clients, updates sites, skips unknown sites", async () => {
  const { satellites } = hub.app.identity;
  await reconcileExpectedSatellites(
    hub.db.prisma,
    satellites,
    [
      { name: "sys1-ice2", sites: ["keflavik"], environment: "prod" },
      { name: "sys9-ghost", sites: ["atlantis"], environment: "dev" },
    ],
    hub.app.log,
  );
  const created = await sitesOf("sys1-ice2");
  expect(created?.sites.map((s) => s.site.slug)).toEqual(["keflavik"]);
  expect(created?.clients.map((c) => c.clientId).sort()).toEqual([
    "health-status-agent-sys1-ice2",
    "ironic-agent-sys1-ice2",
    "netbox-agent-sys1-ice2",
    "slurm-agent-sys1-ice2",
    "temporal-worker-sys1-ice2",
    "workflow-agent-sys1-ice2",
  ]);
  expect(await sitesOf("sys9-ghost")).toBeNull();
  expect(hub.logs.some((l) => l.msg === "FM_EXPECTED_SATELLITES names unknown sites; satellite skipped")).toBe(true);

  // A second start with a changed list updates the sites and keeps the clients (and their secrets).
  const hashes = created!.clients.map((c) => c.secretHash).sort();
  await reconcileExpectedSatellites(
    hub.db.prisma,
    satellites,
    [{ name: "sys1-ice2", sites: ["keflavik", "stavanger"], environment: "prod" }],
    hub.app.log,
  );
  const updated = await sitesOf("sys1-ice2");
  expect(updated?.sites.map((s) => s.site.slug).sort()).toEqual(["keflavik", "stavanger"]);
  expect(updated?.clients.map((c) => c.secretHash).sort()).toEqual(hashes);
});
