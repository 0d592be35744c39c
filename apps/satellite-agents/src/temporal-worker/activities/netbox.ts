/**
 * NetBox activities: the enrolment precondition (staged, with a BMC address and a role), and the
 * status, tag and platform-class writes of enrolment and unenrolment. The client's writes look
 * first and send nothing when NetBox already holds the value.
 */
import type { DevicePlan } from "@fm/domain/workflows";
import { ironicFor, netboxIdOf, netboxOf, type ActivityDeps } from "./deps.ts";
import { badInput, guarded } from "./failures.ts";

export function netboxActivities(deps: Pick<ActivityDeps, "netbox" | "ironic">) {
  return {
    /** ENROL precondition: staged in NetBox, with a BMC address and a role. */
    async netboxCheckStaged(d: DevicePlan): Promise<void> {
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
    },

    /** NetBox `active`; `platform_class` when the site's gate is on; existing tags attached. */
    async netboxActivate(d: DevicePlan, o: { platformClass: string | null; tags: string[] }): Promise<void> {
      return guarded(async () => {
        const id = netboxIdOf(d);
        const netbox = netboxOf(deps);
        if (o.tags.length) await netbox.addDeviceTags(id, o.tags);
        if (o.platformClass) await netbox.setPlatformClass(id, o.platformClass);
        await netbox.setDeviceStatus(id, "active");
      });
    },

    /** UNENROL: back to `staged` in NetBox. */
    async netboxStage(d: DevicePlan): Promise<void> {
      return guarded(async () => {
        await netboxOf(deps).setDeviceStatus(netboxIdOf(d), "staged");
      });
    },
  };
}
