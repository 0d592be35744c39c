import { describe, expect, it } from "vitest";
import { IRONIC_MASK, driverInfoPatch, wantedDriverInfo, type DriverInfoInput } from "./driver-info.ts";

const credentials = { username: "root", password: "s3cret:with:colons" };
const redfish = { addressTemplate: "https://{address}", verifyCa: true };
const deployImages = { kernel: "k-uuid", ramdisk: "r-uuid" };
const input = (over: Partial<DriverInfoInput>): DriverInfoInput => ({
  driver: "redfish",
  bmcAddress: "10.1.2.3",
  credentials,
  redfish,
  ...over,
});

describe("wantedDriverInfo", () => {
  it.each([
    [
      "redfish, with system id, CA bundle and deploy images",
      input({
        redfish: { ...redfish, systemId: "/redfish/v1/Systems/1", verifyCa: "/etc/ironic/bmc-ca.pem" },
        deployImages,
      }),
      {
        redfish_address: "https://10.1.2.3",
        redfish_system_id: "/redfish/v1/Systems/1",
        redfish_username: "root",
        redfish_password: "s3cret:with:colons",
        redfish_verify_ca: "/etc/ironic/bmc-ca.pem",
        deploy_kernel: "k-uuid",
        deploy_ramdisk: "r-uuid",
      },
    ],
    [
      "redfish through an address template, CA verification off",
      input({ redfish: { addressTemplate: "http://{address}:8000", verifyCa: false } }),
      {
        redfish_address: "http://10.1.2.3:8000",
        redfish_username: "root",
        redfish_password: "s3cret:with:colons",
        redfish_verify_ca: false,
      },
    ],
    [
      "idrac speaks redfish",
      input({ driver: "idrac" }),
      {
        redfish_address: "https://10.1.2.3",
        redfish_username: "root",
        redfish_password: "s3cret:with:colons",
        redfish_verify_ca: true,
      },
    ],
    [
      "ipmi",
      input({ driver: "ipmi", deployImages }),
      {
        ipmi_address: "10.1.2.3",
        ipmi_username: "root",
        ipmi_password: "s3cret:with:colons",
        deploy_kernel: "k-uuid",
        deploy_ramdisk: "r-uuid",
      },
    ],
    [
      "fake-hardware: the address only",
      input({ driver: "fake-hardware", credentials: undefined }),
      { bmc_address: "10.1.2.3" },
    ],
  ])("%s", (_, i, want) => {
    expect(wantedDriverInfo(i)).toEqual(want);
  });
});

describe("driverInfoPatch", () => {
  const wanted = wantedDriverInfo(input({ deployImages }));

  it("writes every field of a node that has none", () => {
    expect(driverInfoPatch(undefined, wanted)).toEqual(
      Object.entries(wanted).map(([k, value]) => ({ op: "add", path: `/driver_info/${k}`, value })),
    );
  });

  it("writes nothing when the node holds it all, its password masked as Ironic shows it", () => {
    expect(driverInfoPatch({ ...wanted, redfish_password: IRONIC_MASK }, wanted)).toEqual([]);
  });

  it("writes what differs, and a masked password only when asked to rewrite secrets", () => {
    const current = {
      ...wanted,
      redfish_password: IRONIC_MASK,
      redfish_address: "https://10.9.9.9",
      deploy_kernel: "old",
    };
    expect(driverInfoPatch(current, wanted).map((p) => p.path)).toEqual([
      "/driver_info/redfish_address",
      "/driver_info/deploy_kernel",
    ]);
    expect(driverInfoPatch(current, wanted, { rewriteSecrets: true })).toContainEqual({
      op: "add",
      path: "/driver_info/redfish_password",
      value: "s3cret:with:colons",
    });
  });

  it("compares booleans as values: a string 'true' left by hand is replaced", () => {
    expect(driverInfoPatch({ ...wanted, redfish_password: IRONIC_MASK, redfish_verify_ca: "true" }, wanted)).toEqual([
      { op: "add", path: "/driver_info/redfish_verify_ca", value: true },
    ]);
  });
});
