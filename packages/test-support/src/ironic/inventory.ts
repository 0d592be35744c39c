/**
 * A node's inspection inventory, stored in a test Ironic as in-band inspection stores it. On a
 * real site ironic-inspector (with the agent ramdisk booted on the node) hands the data to Ironic
 * when inspection finishes (ironic/drivers/modules/inspector.py `_check_status` →
 * inspect_utils.py `store_introspection_data`, `[inventory] data_backend = database`, Ironic
 * 21.4), which writes one row of the `node_inventory` table (ironic/db/sqlalchemy/models.py
 * `NodeInventory`: inventory_data, plugin_data, node_id). Nothing here can boot that ramdisk, so
 * the row is written the same way into the test Ironic's SQLite database; Ironic itself then
 * answers `GET /v1/nodes/{node}/inventory` from it.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import type { IronicPeer } from "./peer.ts";

const execFileAsync = promisify(execFile);

/** An InfiniBand port as IPA's Mellanox hardware manager reports it (hardware_managers/mlnx.py). */
export function ipaInfinibandInterface(name: string, guid: string) {
  const bytes = guid.replace(/^0x/, "").replace(/:/g, "").match(/.{2}/g)!;
  return {
    name,
    mac_address: [...bytes.slice(0, 3), ...bytes.slice(5)].join(":"),
    ipv4_address: null,
    ipv6_address: null,
    has_carrier: true,
    lldp: null,
    vendor: "0x15b3",
    product: "0x1021",
    client_id: `ff:00:00:00:00:00:02:00:00:02:c9:00:${bytes.join(":")}`,
    biosdevname: null,
    speed_mbps: 400_000,
  };
}

/** An Ethernet port as IPA reports it (hardware.py `NetworkInterface`: no client_id). */
export function ipaEthernetInterface(name: string, mac: string) {
  return {
    name,
    mac_address: mac.toLowerCase(),
    ipv4_address: null,
    ipv6_address: null,
    has_carrier: true,
    lldp: null,
    vendor: "0x15b3",
    product: "0x101d",
    client_id: null,
    biosdevname: null,
    speed_mbps: 100_000,
  };
}

const STORE = `
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1], timeout=30)
with db:
    (node_id,) = db.execute("SELECT id FROM nodes WHERE uuid = ?", (sys.argv[2],)).fetchone()
    db.execute("DELETE FROM node_inventory WHERE node_id = ?", (node_id,))
    db.execute(
        "INSERT INTO node_inventory (inventory_data, plugin_data, node_id, created_at, version)"
        " VALUES (?, ?, ?, datetime('now'), '1.0')",
        (sys.argv[3], sys.argv[4], node_id),
    )
`;

/** Stores (replaces) the node's inventory: `interfaces` as IPA reports them, a minimal rest. */
export async function storeNodeInventory(ironic: IronicPeer, nodeUuid: string, interfaces: unknown[]): Promise<void> {
  const inventory = {
    interfaces,
    cpu: { model_name: "Neoverse-V2", count: 72, architecture: "aarch64" },
    memory: { total: 515396075520, physical_mb: 491520 },
    disks: [],
    bmc_address: "0.0.0.0",
  };
  const plugin = { all_interfaces: {}, valid_interfaces: {} };
  await execFileAsync("python3", [
    "-c",
    STORE,
    join(ironic.dir, "ironic.db"),
    nodeUuid,
    JSON.stringify(inventory),
    JSON.stringify(plugin),
  ]);
}
