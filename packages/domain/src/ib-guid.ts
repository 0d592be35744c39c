/**
 * InfiniBand port GUIDs. NetBox has no field for one: Fleet Manager keeps it in the interface's
 * `label` (`fleetctl netbox populate-ib-guids`), and the NetBox agent reads it back into the
 * hub's `DeviceInterface.ibGuid`.
 *
 * The canonical form is four groups of four lowercase hex digits, `7cfe:9003:0029:2652`, as the
 * kernel shows a GUID (`/sys/class/infiniband/<hca>/node_guid`, `ibv_devinfo`). A label written
 * by hand in one of the other usual forms (`0x7cfe900300292652` as `ibstat` prints it, or eight
 * colon-separated bytes as IPA's client-id ends) is read as the same GUID.
 */

const FORMS = [/^(?:[0-9a-f]{4}:){3}[0-9a-f]{4}$/i, /^(?:0x)?[0-9a-f]{16}$/i, /^(?:[0-9a-f]{2}:){7}[0-9a-f]{2}$/i];

/** The GUID in canonical form, or null when the text is not a GUID in one of the usual forms. */
export function parseIbGuid(text: string): string | null {
  const t = text.trim();
  if (!FORMS.some((f) => f.test(t))) return null;
  const hex = t.replace(/^0x/i, "").replace(/:/g, "").toLowerCase();
  return hex.match(/.{4}/g)!.join(":");
}

/**
 * The port GUID in an InfiniBand DHCP client-id: 20 colon-separated bytes, a 12-byte vendor
 * prefix and the 8-byte port GUID (IPA's Mellanox hardware manager,
 * ironic_python_agent/hardware_managers/mlnx.py `_generate_client_id`:
 * `ff:00:00:00:00:00:02:00:00:02:c9:00:` + the GUID bytes of the 20-byte IPoIB address; Ironic
 * keeps the same value in a port's `extra["client-id"]`). Null for anything else.
 */
export function ibGuidFromClientId(clientId: string): string | null {
  const bytes = clientId.trim().split(":");
  if (bytes.length !== 20 || !bytes.every((b) => /^[0-9a-f]{2}$/i.test(b))) return null;
  return parseIbGuid(bytes.slice(12).join(":"));
}

/**
 * The "InfiniBand MAC" IPA reports for the port (`mac_address` in its inventory): the GUID's
 * first three and last three bytes (mlnx.py `_infiniband_address_to_mac`), lowercase.
 */
export function ibMacOfGuid(guid: string): string {
  const hex = guid.replace(/:/g, "");
  const bytes = hex.match(/.{2}/g)!;
  return [...bytes.slice(0, 3), ...bytes.slice(5)].join(":");
}
