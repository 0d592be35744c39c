import { describe, expect, it } from "vitest";
import {
  NetboxAuthenticationError,
  NetboxPermissionError,
  netboxError,
  netboxErrorMessage,
  objectTypeForPath,
} from "./errors.ts";

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

  it.each([
    'Invalid authorization header: Must be in the form "Bearer <key>.<token>" or "Token <token>"',
    "Invalid authorization header: Could not parse key from v2 token. Did you mean to use 'Token' instead of 'Bearer'?",
    "Invalid authorization header: Token contains invalid characters",
    "Source IP 10.1.2.3 is not permitted to authenticate using this token.",
    "Client IP address could not be determined for validation. Check that the HTTP server is correctly configured to pass the required header(s).",
    "Invalid token",
    "Invalid v1 token",
    "Token expired",
  ])("classifies NetBox 4.5's 403 %j as an authentication failure, not a missing permission", (detail) => {
    const err = netboxError(
      { status: 403, text: JSON.stringify({ detail }), statusText: "Forbidden" },
      { method: "GET", path: "/api/dcim/devices/?limit=1" },
      { url: "https://netbox.example.com", token: "nbt_abc.def" },
    );
    expect(err).toBeInstanceOf(NetboxAuthenticationError);
    expect(err.message).not.toContain("permission on");
    expect(err.message).toContain(detail);
  });

  it("names the permission a 403 'You do not have permission' lacks", () => {
    const err = netboxError(
      {
        status: 403,
        text: '{"detail": "You do not have permission to perform this action."}',
        statusText: "Forbidden",
      },
      { method: "GET", path: "/api/core/object-changes/?time_after=x" },
      { url: "https://netbox.example.com", token: "0123" },
    );
    expect(err).toBeInstanceOf(NetboxPermissionError);
    expect(err.message).toContain("core.view_objectchange");
  });
});
