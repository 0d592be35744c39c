/** The test Redfish BMC over real HTTP, as a Redfish client (sushy) sees it. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SYSTEM_PATH, startRedfishBmc, type RedfishBmc } from "../redfish.ts";

let bmc: RedfishBmc;
beforeAll(async () => {
  bmc = await startRedfishBmc({ username: "admin", password: "pa:ss", host: "127.0.0.30" });
});
afterAll(() => bmc?.stop());

const basic = (user: string, pass: string) => ({
  authorization: `Basic ${Buffer.from(`${user}:${pass}`).toString("base64")}`,
});
/** What the assertions read of a body: a resource's properties, or a Redfish error. */
type RedfishBody = Record<string, unknown> & { error: { code: string } };
async function call(method: string, path: string, o: { headers?: Record<string, string>; body?: unknown } = {}) {
  const res = await fetch(`${bmc.url}${path}`, {
    method,
    headers: { ...o.headers, ...(o.body !== undefined ? { "content-type": "application/json" } : {}) },
    body: o.body !== undefined ? JSON.stringify(o.body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? (JSON.parse(text) as RedfishBody) : null };
}

describe("test Redfish BMC", () => {
  it("serves the service root without credentials, and the mock-up's resources only with them", async () => {
    const root = await call("GET", "/redfish/v1/");
    expect(root.status).toBe(200);
    expect(root.body).toMatchObject({
      "@odata.id": "/redfish/v1/",
      Systems: { "@odata.id": "/redfish/v1/Systems" },
      Links: { Sessions: { "@odata.id": "/redfish/v1/SessionService/Sessions" } },
    });
    const denied = await call("GET", "/redfish/v1/Systems");
    expect(denied.status).toBe(401);
    expect(denied.headers.get("www-authenticate")).toBe('Basic realm="Redfish"');
    expect(denied.body!.error.code).toBe("Base.1.8.NoValidSession");
    expect((await call("GET", "/redfish/v1/Systems", { headers: basic("admin", "wrong") })).status).toBe(401);
    const systems = await call("GET", "/redfish/v1/Systems", { headers: basic("admin", "pa:ss") });
    expect(systems.body!.Members).toEqual([{ "@odata.id": SYSTEM_PATH }]);
    expect((await call("GET", "/redfish/v1/Nothing", { headers: basic("admin", "pa:ss") })).status).toBe(404);
  });

  it("opens a session for the right password only; its token authenticates until the session is deleted", async () => {
    const refused = await call("POST", "/redfish/v1/SessionService/Sessions", {
      body: { UserName: "admin", Password: "nope" },
    });
    expect(refused.status).toBe(401);
    expect(refused.headers.get("x-auth-token")).toBeNull();
    const opened = await call("POST", "/redfish/v1/SessionService/Sessions", {
      body: { UserName: "admin", Password: "pa:ss" },
    });
    expect(opened.status).toBe(201);
    const token = opened.headers.get("x-auth-token")!;
    const location = opened.headers.get("location")!;
    expect(location).toMatch(/^\/redfish\/v1\/SessionService\/Sessions\/[0-9a-f]+$/);
    const system = await call("GET", SYSTEM_PATH, { headers: { "x-auth-token": token } });
    expect(system.body).toMatchObject({ Id: "437XR1138R2", PowerState: "On" });
    expect(system.headers.get("etag")).toMatch(/^W\/"[0-9a-f]+"$/);
    expect((await call("DELETE", location, { headers: { "x-auth-token": token } })).status).toBe(204);
    expect((await call("GET", SYSTEM_PATH, { headers: { "x-auth-token": token } })).status).toBe(401);
  });

  it("ComputerSystem.Reset changes the power state; an unknown ResetType is a 400", async () => {
    const auth = basic("admin", "pa:ss");
    const reset = (ResetType: string) =>
      call("POST", `${SYSTEM_PATH}/Actions/ComputerSystem.Reset`, { headers: auth, body: { ResetType } });
    expect((await reset("ForceOff")).status).toBe(204);
    expect((await call("GET", SYSTEM_PATH, { headers: auth })).body!.PowerState).toBe("Off");
    expect((await reset("On")).status).toBe(204);
    expect(bmc.system.PowerState).toBe("On");
    const bad = await reset("Explode");
    expect(bad.status).toBe(400);
    expect(bad.body!.error.code).toBe("Base.1.8.ActionParameterValueNotInList");
    expect(bmc.resets).toEqual(["ForceOff", "On"]);
  });

  it("PATCH Boot sets the boot source override, checked against the allowable values and the ETag", async () => {
    const auth = basic("admin", "pa:ss");
    const { headers } = await call("GET", SYSTEM_PATH, { headers: auth });
    const etag = headers.get("etag")!;
    const boot = { BootSourceOverrideTarget: "Cd", BootSourceOverrideEnabled: "Once" };
    expect(
      (await call("PATCH", SYSTEM_PATH, { headers: { ...auth, "if-match": etag }, body: { Boot: boot } })).status,
    ).toBe(204);
    expect((await call("GET", SYSTEM_PATH, { headers: auth })).body!.Boot).toMatchObject(boot);
    // The ETag read before the change is stale now.
    expect(
      (await call("PATCH", SYSTEM_PATH, { headers: { ...auth, "if-match": etag }, body: { Boot: boot } })).status,
    ).toBe(412);
    const bad = await call("PATCH", SYSTEM_PATH, {
      headers: auth,
      body: { Boot: { BootSourceOverrideTarget: "Floppy" } },
    });
    expect(bad.status).toBe(400);
    expect(bad.body!.error.code).toBe("Base.1.8.PropertyValueNotInList");
  });

  it("once stopped, nothing answers on its address", async () => {
    const other = await startRedfishBmc({ username: "a", password: "b", host: "127.0.0.31", port: bmc.port });
    expect((await fetch(`${other.url}/redfish/v1/`)).status).toBe(200);
    await other.stop();
    await expect(fetch(`${other.url}/redfish/v1/`)).rejects.toThrow(/fetch failed/);
    // Its neighbour on the same port is untouched.
    expect((await fetch(`${bmc.url}/redfish/v1/`)).status).toBe(200);
  });
});
