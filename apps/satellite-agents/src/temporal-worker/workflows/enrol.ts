/**
 * ENROL: from a device staged in NetBox to an Ironic node that is available, its BMC reachable
 * (and reserved in DHCP where Fleet Manager manages it), and the device active in NetBox.
 */
import { patched } from "@temporalio/workflow";
import { WORKFLOW_STEPS, type JobWorkflowInput, type JobWorkflowResult } from "@fm/domain/workflows";
import { quick, waiting } from "./proxies.ts";
import { MESSAGE_MAX, Steps, eachDevice, preflight, skipped } from "./steps.ts";

export async function enrolWorkflow(input: JobWorkflowInput<"ENROL">): Promise<JobWorkflowResult> {
  const steps = new Steps(WORKFLOW_STEPS.ENROL);
  const plan = await preflight(steps, input);
  if (!plan) return skipped(steps, "job no longer active");
  const { devices, site } = plan;
  await steps.run("netbox-check", (tick) => eachDevice(devices, tick, (d) => quick.netboxCheckStaged(d)));
  // The BMC check came later as a step of its own: `bmc-configure` brings the node to `manageable`,
  // which is where Ironic verifies the BMC credentials, so a wrong password fails that step.
  // An enrolment that started before keeps its order (manage inside ironic-enroll, BMC last).
  const bmcFirst = patched("enrol-bmc-verifies");
  const nodes = await steps.run(
    "ironic-enroll",
    (tick) => eachDevice(devices, tick, (d) => (bmcFirst ? quick.ironicRegister(d) : waiting.ironicEnroll(d))),
    (uuids) => `node(s) ${uuids.join(", ")} ${bmcFirst ? "enrolled" : "manageable"}`.slice(0, MESSAGE_MAX),
  );
  const enrolled = devices.map((d, i) => ({ ...d, ironicNodeUuid: nodes[i]! }));
  // Ports came later: an enrolment that started without them replays without them.
  if (patched("enrol-ironic-ports"))
    await steps.run(
      "ironic-ports",
      (tick) => eachDevice(enrolled, tick, (d) => quick.ironicPorts(d)),
      (counts) => {
        const sum = (k: "created" | "updated" | "unchanged") => counts.reduce((n, c) => n + c[k], 0);
        return `ports: ${sum("created")} created, ${sum("updated")} updated, ${sum("unchanged")} unchanged`;
      },
    );
  else steps.skip("ironic-ports", "this enrolment started before Fleet Manager created Ironic ports");
  // Verifying the BMC waits on Ironic's `verifying`: `waiting`. Before, only a validation: `quick`.
  const configureBmc = () =>
    steps.run("bmc-configure", (tick) =>
      eachDevice(enrolled, tick, (d) => (bmcFirst ? waiting : quick).configureBmc(d)),
    );
  if (bmcFirst) await configureBmc();
  await steps.run("ironic-inspect", (tick) => eachDevice(enrolled, tick, (d) => waiting.ironicInspect(d)));
  if (!bmcFirst) await configureBmc();
  const { configureDhcp, platformClass: requestedClass, tags = [] } = input.params;
  const dhcp = configureDhcp !== false && site.configureDhcp;
  if (dhcp) await steps.run("dhcp-configure", (tick) => eachDevice(enrolled, tick, (d) => quick.configureDhcp(d)));
  else
    steps.skip(
      "dhcp-configure",
      site.configureDhcp
        ? "turned off by the job's configureDhcp: false"
        : `DHCP is managed outside Fleet Manager at ${site.slug}`,
    );
  await steps.run("ironic-provide", (tick) => eachDevice(enrolled, tick, (d) => waiting.ironicProvide(d)));
  const platformClass = site.platformClassActivityReady ? (requestedClass ?? null) : null;
  await steps.run("netbox-activate", (tick) =>
    eachDevice(enrolled, tick, (d) => quick.netboxActivate(d, { platformClass, tags })),
  );
  await steps.run("hub-record", () => quick.recordOnHub(input.jobId, enrolled));
  return steps.snapshot();
}
