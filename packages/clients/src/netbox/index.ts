/** The NetBox client: the client and its reads, the object schemas, the errors and the idempotent writes. */
export * from "./netbox-client.ts";
export * from "./schemas.ts";
export { macOf, peerOf, type NetboxPeer } from "./interfaces.ts";
export {
  NetboxApiError,
  NetboxAuthenticationError,
  NetboxMissingTagsError,
  NetboxPermissionError,
  NetboxUnavailableError,
  NetboxUndefinedCustomFieldError,
  netboxErrorMessage,
  objectTypeForPath,
} from "./errors.ts";
export type { NetboxWriteResult } from "./writes.ts";
export { netboxReleaseAtLeast } from "./release.ts";
export { checkNetboxSite, formatFindings, REQUIRED_CONTEXT_KEYS, type Finding, type Severity } from "./site-check.ts";
export { applyIbGuids, planIbGuids, type IbGuidAction, type IbGuidRow } from "./ib-guids.ts";
export {
  cableMovesOf,
  ensureInterfaceMac,
  moveCable,
  type CableMove,
  placeDevice,
  placeOf,
  setPrimaryMac,
  SwapRefusedError,
  type InterfaceMacResult,
  type RackPlace,
} from "./swap.ts";
