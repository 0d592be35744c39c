/**
 * A NetBox 4.5 stand-in for tests: NetBox (Django, PostgreSQL, Redis) cannot run on this machine,
 * so this node:http server answers the part of NetBox's REST API the fleet manager uses, from an
 * in-memory store, with NetBox's own response shapes and semantics: NetBox 4.5.0 unless the
 * `version` option says 4.2.0, 4.5.3 or another release (status.ts says what differs).
 * netbox-server.test.ts holds every shape against the fixtures in fixtures/netbox/ (their sources
 * in SOURCES.md there), so this server cannot drift into an invented API.
 *
 * One file per concern: server.ts (HTTP, routing, authentication), paging.ts and filters.ts,
 * one module per resource group (dcim-sites, dcim-devices, dcim-interfaces, dcim-cables, paths, ipam,
 * virtualization, extras, core, status), nested.ts (what every representation embeds), the
 * store (store.ts) and how it changes (writes.ts), and the fleet generator (fleet.ts).
 */
export {
  startNetboxServer,
  type NetboxRequestLog,
  type NetboxServer,
  type StartNetboxServerOptions,
} from "./server.ts";
export { realisticFleet } from "./fleet.ts";
export { cableThroughPatchPanels } from "./paths.ts";
export { NETBOX_VERSION, parseRelease, atLeast, type NetboxRelease } from "./status.ts";
export { INTERFACE_TYPES } from "./choices.ts";
export { renderConfigContext } from "./extras.ts";
export {
  emptyNetboxData,
  netboxTime,
  type CableRecord,
  type ClusterRecord,
  type ClusterTypeRecord,
  type ConfigContextRecord,
  type DeviceRecord,
  type DeviceRoleRecord,
  type DeviceTypeRecord,
  type InterfaceRecord,
  type IpAddressRecord,
  type LocationRecord,
  type MacAddressRecord,
  type ManufacturerRecord,
  type NetboxData,
  type ObjectChangeRecord,
  type RackRecord,
  type SiteRecord,
  type TagRecord,
} from "./store.ts";
