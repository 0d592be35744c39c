/**
 * NetBox activities: the enrolment precondition (staged, with a BMC address and a role), and the
 * status, tag and platform-class writes of enrolment and unenrolment. The client's writes look
 * first and send nothing when NetBox already holds the value.
 */
import type { DevicePlan } from "@fm/domain/workflows";
import { ironicFor, netboxIdOf, netboxOf, type ActivityDeps } from "./deps.ts";
import { badInput, guarded } from "./failures.ts";

type NetboxDeps = Pick<ActivityDeps, "netbox" | "ironic">;
type Activation = { platformClass: string | null; tags: string[] };

export function netboxActivities(deps: NetboxDeps) {
  return {
    netboxCheckStaged: (d: DevicePlan) => netboxCheckStaged(deps, d),
    netboxActivate: (d: DevicePlan, o: Activation) => netboxActivate(deps, d, o),
    netboxStage: (d: DevicePlan) => netboxStage(deps, d),
  };
}

/** ENROL precondition: staged in NetBox, with a BMC address and a role this worker's Ironic serves. */
async function netboxCheckStaged(deps: NetboxDeps, d: DevicePlan): Promise<void> {
  return guarded(async () => {
    const nb = await netboxOf(deps).device(netboxIdOf(d));
    const status = nb.status.value;
    if (status !== "staged") throw badInput(`${d.name} is ${status} in NetBox; enrolment needs it staged`);
    const missing = [
      !nb.oob_ip && !d.bmcAddress ? "an out-of-band (BMC) IP" : null,
      !d.ironicInstance ? "a device role that maps to an Ironic instance" : null,
    ].filter(Boolean);
    if (missing.length) throw badInput(`${d.name} cannot be enrolled: it needs ${missing.join(" and ")} in NetBox`);
    ironicFor(deps, d);
  });
}

/** NetBox `active`; `platform_class` when the site's gate is on; existing tags attached. */
async function netboxActivate(deps: NetboxDeps, d: DevicePlan, o: Activation): Promise<void> {
  return guarded(async () => {
    const id = netboxIdOf(d);
    const netbox = netboxOf(deps);
    if (o.tags.length) await netbox.addDeviceTags(id, o.tags);
    if (o.platformClass) await netbox.setPlatformClass(id, o.platformClass);
    await netbox.setDeviceStatus(id, "active");
  });
}

/** UNENROL: back to `staged` in NetBox. */
async function netboxStage(deps: NetboxDeps, d: DevicePlan): Promise<void> {
  return guarded(async () => {
    await netboxOf(deps).setDeviceStatus(netboxIdOf(d), "staged");
  });
}
