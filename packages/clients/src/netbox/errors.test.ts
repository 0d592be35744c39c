import { describe, expect, it } from "vitest";
import { netboxErrorMessage, objectTypeForPath } from "./errors.ts";

describe("NetBox errors", () => {
  it("derives object types from paths as NetBox names them", () => {
    expect(objectTypeForPath("/api/dcim/mac-addresses/")).toBe("dcim.macaddress");
    expect(objectTypeForPath("/api/ipam/ip-addresses/12/")).toBe("ipam.ipaddress");
    expect(objectTypeForPath("/api/dcim/devices/")).toBe("dcim.device");
    expect(objectTypeForPath("/api/dcim/device-roles/")).toBe("dcim.devicerole");
    expect(objectTypeForPath("/api/virtualization/clusters/")).toBe("virtualization.cluster");
    expect(objectTypeForPath("/api/core/object-changes/")).toBe("core.objectchange");
    expect(objectTypeForPath("/api/extras/config-contexts/")).toBe("extras.configcontext");
    expect(netboxErrorMessage('{"detail": "Invalid v2 token"}')).toBe("Invalid v2 token");
    expect(netboxErrorMessage('{"status": ["\\"x\\" is not a valid choice."]}')).toBe(
      'status: "x" is not a valid choice.',
    );
  });
});
