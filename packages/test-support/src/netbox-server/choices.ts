/** Choices: `{value, label}` as NetBox's ChoiceField renders them; a blank value renders as null. */

export const DEVICE_STATUS: Record<string, string> = {
  offline: "Offline",
  active: "Active",
  planned: "Planned",
  staged: "Staged",
  failed: "Failed",
  inventory: "Inventory",
  decommissioning: "Decommissioning",
};
export const SITE_STATUS: Record<string, string> = {
  planned: "Planned",
  staging: "Staging",
  active: "Active",
  decommissioning: "Decommissioning",
  retired: "Retired",
};
export const RACK_STATUS: Record<string, string> = {
  reserved: "Reserved",
  available: "Available",
  planned: "Planned",
  active: "Active",
  deprecated: "Deprecated",
};
export const CLUSTER_STATUS: Record<string, string> = {
  planned: "Planned",
  staging: "Staging",
  active: "Active",
  decommissioning: "Decommissioning",
  offline: "Offline",
};
export const IP_STATUS: Record<string, string> = {
  active: "Active",
  reserved: "Reserved",
  deprecated: "Deprecated",
  dhcp: "DHCP",
  slaac: "SLAAC",
};
export const CABLE_STATUS: Record<string, string> = {
  connected: "Connected",
  planned: "Planned",
  decommissioning: "Decommissioning",
};
export const LENGTH_UNIT: Record<string, string> = { m: "Meters", cm: "Centimeters", ft: "Feet", in: "Inches" };
export const FACE: Record<string, string> = { front: "Front", rear: "Rear" };
export const AIRFLOW: Record<string, string> = {
  "front-to-rear": "Front to rear",
  "rear-to-front": "Rear to front",
  passive: "Passive",
};
export const ACTION: Record<string, string> = { create: "Created", update: "Updated", delete: "Deleted" };
export const INTERFACE_TYPES: Record<string, string> = {
  "1000base-t": "1000BASE-T (1GE)",
  "25gbase-x-sfp28": "SFP28 (25GE)",
  "100gbase-x-qsfp28": "QSFP28 (100GE)",
  "200gbase-x-qsfp56": "QSFP56 (200GE)",
  "400gbase-x-osfp": "OSFP (400GE)",
  "800gbase-x-osfp": "OSFP (800GE)",
  "infiniband-hdr": "HDR (50 Gbps)",
  "infiniband-ndr": "NDR (100 Gbps)",
  "infiniband-xdr": "XDR (250 Gbps)",
};

export function choice(labels: Record<string, string>, value: string | null): { value: string; label: string } | null {
  if (value === null || value === "") return null;
  return { value, label: labels[value] ?? "" };
}
