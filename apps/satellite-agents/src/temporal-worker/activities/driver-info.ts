/**
 * What an enrolled node's `driver_info` must hold, per hardware type, and the JSON patch that
 * brings a node's driver_info there. Pure: the activities read the node and the credentials,
 * and apply the patch.
 *
 * Field names are Ironic's, at the version Debian 12 ships (python3-ironic 21.4.4, the 2023.1
 * series): https://docs.openstack.org/ironic/2023.1/admin/drivers/redfish.html (redfish_address,
 * redfish_system_id, redfish_username, redfish_password, redfish_verify_ca;
 * ironic/drivers/modules/redfish/utils.py REQUIRED_/OPTIONAL_PROPERTIES) and
 * https://docs.openstack.org/ironic/2023.1/admin/drivers/ipmitool.html (ipmi_address,
 * ipmi_username, ipmi_password; ironic/drivers/modules/ipmitool.py). deploy_kernel and
 * deploy_ramdisk: ironic/drivers/modules/redfish/boot.py and pxe_base.py, "URL or Glance UUID".
 */
import type { BmcCredentials } from "./bmc-credentials.ts";

/** Ironic never returns a secret of driver_info: it shows this instead (API reference, "Show Node Details"). */
export const IRONIC_MASK = "******";

/** Fields whose value Ironic masks when it returns driver_info. */
const SECRET_FIELDS = new Set(["redfish_password", "ipmi_password"]);

export interface RedfishSettings {
  /** How redfish_address is built from the device's BMC address: `{address}` is replaced. */
  addressTemplate: string;
  /** redfish_system_id, when the BMCs hold more than one system (e.g. /redfish/v1/Systems/1). */
  systemId?: string | undefined;
  /** redfish_verify_ca: true, false, or a CA bundle path on the conductor. */
  verifyCa: boolean | string;
}

export interface DriverInfoInput {
  /** The node's hardware type (`redfish`, `ipmi`, `idrac`, or `fake-hardware` in tests). */
  driver: string;
  bmcAddress: string;
  /** Required for the types that log in to the BMC (BMC_CREDENTIAL_DRIVERS). */
  credentials?: BmcCredentials | undefined;
  redfish: RedfishSettings;
  deployImages?: { kernel: string; ramdisk: string } | undefined;
}

/** Hardware types whose power interface logs in to the BMC: they need BMC credentials. */
export const BMC_CREDENTIAL_DRIVERS: ReadonlySet<string> = new Set(["redfish", "idrac", "ipmi"]);

export type DriverInfo = Record<string, string | boolean>;

/** The driver_info an enrolled node must have. */
export function wantedDriverInfo(i: DriverInfoInput): DriverInfo {
  const images: DriverInfo = i.deployImages
    ? { deploy_kernel: i.deployImages.kernel, deploy_ramdisk: i.deployImages.ramdisk }
    : {};
  const c = i.credentials;
  switch (i.driver) {
    case "redfish":
    case "idrac":
      return {
        redfish_address: i.redfish.addressTemplate.replaceAll("{address}", i.bmcAddress),
        ...(i.redfish.systemId ? { redfish_system_id: i.redfish.systemId } : {}),
        ...(c ? { redfish_username: c.username, redfish_password: c.password } : {}),
        redfish_verify_ca: i.redfish.verifyCa,
        ...images,
      };
    case "ipmi":
      return {
        ipmi_address: i.bmcAddress,
        ...(c ? { ipmi_username: c.username, ipmi_password: c.password } : {}),
        ...images,
      };
    default:
      return { bmc_address: i.bmcAddress, ...images };
  }
}

export type DriverInfoPatch = { op: "add"; path: string; value: string | boolean }[];

/**
 * The patch from the node's driver_info to `wanted`: a field that is missing or different is
 * written. A secret Ironic shows masked cannot be compared; it is rewritten only when
 * `rewriteSecrets` (the caller knows the stored one failed, or is about to be verified after a
 * failure), so that a retry does not write it again for nothing but a rotated password still
 * gets in.
 */
export function driverInfoPatch(
  current: Record<string, unknown> | undefined,
  wanted: DriverInfo,
  o: { rewriteSecrets?: boolean } = {},
): DriverInfoPatch {
  return Object.entries(wanted)
    .filter(([key, value]) => {
      const now = current?.[key];
      if (SECRET_FIELDS.has(key) && now === IRONIC_MASK) return o.rewriteSecrets === true;
      return now !== value;
    })
    .map(([key, value]) => ({ op: "add" as const, path: `/driver_info/${key}`, value }));
}
