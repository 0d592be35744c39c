/**
 * The activities of the job workflows, built from injected clients (hub, NetBox, Ironic,
 * SLURM), so tests can run them against real peers or under MockActivityEnvironment.
 *
 * Every activity is idempotent: it looks before it acts (the Ironic node by name, the NetBox
 * status, the SLURM job by its unique name, the DHCP file's content), so a retry after a worker
 * died mid-activity, or a Temporal retry after a timeout, never applies an effect twice.
 * Waiting activities poll and heartbeat; a cancelled activity stops waiting at its next poll.
 * Errors that retrying cannot fix are thrown as non-retryable ApplicationFailures (types in
 * NON_RETRYABLE_FAILURES); outages of a source are thrown as they are and retried.
 */
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { ApplicationFailure, Context } from "@temporalio/activity";
import {
  HubApiError,
  IronicApiError,
  NetboxApiError,
  NetboxAuthenticationError,
  NetboxMissingTagsError,
  NetboxPermissionError,
  SlurmApiError,
  isTerminalSlurmState,
  type HubClient,
  type IronicClient,
  type IronicNode,
  type NetboxClient,
  type SlurmClient,
} from "@fm/clients";
import {
  ACTIVE_JOB_STATUSES,
  ironicInstanceFor,
  type Device,
  type IronicInstance,
  type JobDeviceObservation,
} from "@fm/domain";
import type { DevicePlan, JobPlan, WorkflowKind } from "@fm/domain/workflows";

export interface ActivityDeps {
  /** The site this worker serves (FM_SITE): it runs no other site's job. */
  site: string;
  hub: HubClient;
  netbox?: NetboxClient | undefined;
  ironic: Partial<Record<IronicInstance, IronicClient>>;
  slurm?: SlurmClient | undefined;
  /** Ironic hardware type for new nodes (`redfish`, `ipmi`, or `fake-hardware` in tests). */
  ironicDriver: string;
  /** dnsmasq --dhcp-hostsdir, for sites where Fleet Manager manages DHCP. */
  dhcpHostsDir?: string | undefined;
  /** What a burn-in SLURM job runs; FM_BURNIN_DURATION_S holds the job's duration. */
  burnInCommand: string;
  pollIntervalMs: number;
}

/** Failures retrying cannot fix. */
const badInput = (message: string) => ApplicationFailure.nonRetryable(message, "BadInput");
const notConfigured = (message: string) => ApplicationFailure.nonRetryable(message, "NotConfigured");

/**
 * A source's refusal (4xx other than a lock or a rate limit) is final; an outage or a 5xx is
 * thrown as is, for Temporal to retry with backoff.
 */
function classify(err: unknown): never {
  if (err instanceof NetboxMissingTagsError) throw badInput(err.message);
  // NetBox answers a bad or expired token with 403: a rotation in progress, retried.
  if (err instanceof NetboxAuthenticationError) throw err;
  if (err instanceof NetboxPermissionError) throw ApplicationFailure.nonRetryable(err.message, "SourceRejected");
  for (const E of [IronicApiError, NetboxApiError, HubApiError, SlurmApiError]) {
    if (err instanceof E) {
      const status = (err as { status: number }).status;
      if (status >= 400 && status < 500 && status !== 409 && status !== 429 && status !== 401)
        throw ApplicationFailure.nonRetryable(err.message, "SourceRejected");
    }
  }
  throw err;
}
/**
 * Runs an activity body: classifies its errors, and, for an activity with a heartbeat timeout,
 * heartbeats every 2 s (a third of the timeout at most) while it runs. The heartbeat timeout is
 * there to notice a dead worker, not a slow source: without the ticker, a few slow Ironic calls
 * in a row would make Temporal start a second attempt beside a first one still running.
 */
async function guarded<T>(fn: () => Promise<T>): Promise<T> {
  const ctx = Context.current();
  const timeoutMs = ctx.info.heartbeatTimeoutMs;
  const ticker = timeoutMs ? setInterval(() => ctx.heartbeat(), Math.min(2000, timeoutMs / 3)) : undefined;
  try {
    return await fn();
  } catch (err) {
    if (err instanceof ApplicationFailure) throw err;
    return classify(err);
  } finally {
    clearInterval(ticker);
  }
}

const RE_REQUEST_AFTER_MS = 15_000;

/** Ironic states a node passes through on its own; anything else is where it stopped. */
const FAILED_STATES = new Set([
  "clean failed",
  "inspect failed",
  "deploy failed",
  "error",
  "rescue failed",
  "unrescue failed",
  "service failed",
]);

export function createActivities(deps: ActivityDeps) {
  const ironicFor = (d: DevicePlan): IronicClient => {
    if (!d.ironicInstance) throw badInput(`${d.name} has no device role that maps to an Ironic instance`);
    const client = deps.ironic[d.ironicInstance];
    if (!client)
      throw notConfigured(
        `this worker has no ${d.ironicInstance} Ironic configured (OPENSTACK_${d.ironicInstance.toUpperCase()}_CLOUDS_FILE), but ${d.name} needs it`,
      );
    return client;
  };
  const netbox = (): NetboxClient => {
    if (!deps.netbox) throw notConfigured("this worker has no NetBox configured (NETBOX_URL, NETBOX_TOKEN)");
    return deps.netbox;
  };
  const slurm = (): SlurmClient => {
    if (!deps.slurm) throw notConfigured("this worker has no SLURM configured (SLURM_URL, SLURM_TOKEN_FILE)");
    return deps.slurm;
  };
  const netboxIdOf = (d: DevicePlan): number => {
    if (d.netboxId === null) throw badInput(`${d.name} has no NetBox id`);
    return d.netboxId;
  };
  const nodeRef = (d: DevicePlan) => d.ironicNodeUuid ?? d.name;
  /** Where the driver finds the BMC: redfish_address (https://), ipmi_address, or bmc_address. */
  const bmcDriverInfo = (d: DevicePlan): { key: string; value: string } => {
    if (!d.bmcAddress) throw badInput(`${d.name} has no BMC address`);
    return {
      key: BMC_ADDRESS_FIELD[deps.ironicDriver] ?? "bmc_address",
      value: deps.ironicDriver === "redfish" ? `https://${d.bmcAddress}` : d.bmcAddress,
    };
  };

  /**
   * Polls the node until it rests in one of `want`, heartbeating each poll. A failed state, or
   * a resting state that is neither wanted nor `passing`, ends the wait with Ironic's last_error.
   * With `retry`, a node still resting in the state the request left from after
   * RE_REQUEST_AFTER_MS is asked again: Ironic acknowledged (202) but its conductor never took
   * the request up (seen under load with 50 nodes at once), and asking again is harmless there.
   */
  async function waitFor(
    client: IronicClient,
    ref: string,
    want: readonly string[],
    passing: readonly string[],
    what: string,
    retry?: { from: string; target: string; settled: (n: IronicNode) => boolean },
  ): Promise<IronicNode> {
    const ctx = Context.current();
    let askedAt = Date.now();
    for (;;) {
      const node = await client.getNode(ref);
      ctx.heartbeat({ provisionState: node.provision_state, target: node.target_provision_state });
      const resting = !node.target_provision_state;
      if (resting && want.includes(node.provision_state)) return node;
      if (FAILED_STATES.has(node.provision_state) || (resting && !passing.includes(node.provision_state))) {
        throw ApplicationFailure.nonRetryable(
          `${what}: node ${node.name ?? node.uuid} is ${node.provision_state}${node.last_error ? `: ${node.last_error}` : ""}`,
          "SourceRejected",
        );
      }
      if (retry && resting && node.provision_state === retry.from && Date.now() - askedAt > RE_REQUEST_AFTER_MS) {
        await request(client, node.uuid, retry.target, retry.settled);
        askedAt = Date.now();
      }
      await ctx.sleep(deps.pollIntervalMs); // rejects when the activity is cancelled
    }
  }

  /**
   * Asks for a transition. A node locked by the conductor (409) is asked again at the next poll.
   * A refusal (400) because the node already moved on — another attempt of this activity asked
   * first (Temporal retries an attempt whose heartbeat it lost, while that attempt may still be
   * running) — counts as done when `settled(node)` says the node is where the request leads.
   */
  async function request(
    client: IronicClient,
    ref: string,
    target: string,
    settled: (n: IronicNode) => boolean,
  ): Promise<void> {
    const ctx = Context.current();
    for (let attempt = 0; ; attempt++) {
      ctx.heartbeat({ requesting: target });
      try {
        return await client.setProvisionState(ref, target);
      } catch (err) {
        if (err instanceof IronicApiError && err.status === 400 && settled(await client.getNode(ref))) return;
        if (!(err instanceof IronicApiError && err.status === 409) || attempt >= 30) throw err;
        await ctx.sleep(deps.pollIntervalMs);
      }
    }
  }
  const inOrPast =
    (...states: string[]) =>
    (n: IronicNode) =>
      states.includes(n.provision_state);

  /**
   * From a resting `from`, asks for `target` and waits until the node rests in one of `want`,
   * passing through `passing`. A node already past `from` is only waited for.
   */
  async function drive(
    d: DevicePlan,
    t: { from: string; target: string; passing: string[]; want: string[] },
  ): Promise<void> {
    const client = ironicFor(d);
    const node = await client.getNode(nodeRef(d));
    const settled = inOrPast(...t.passing, ...t.want);
    if (node.provision_state === t.from && !node.target_provision_state)
      await request(client, node.uuid, t.target, settled);
    await waitFor(client, node.uuid, t.want, [t.from, ...t.passing], t.target, {
      from: t.from,
      target: t.target,
      settled,
    });
  }

  async function observe(d: DevicePlan): Promise<JobDeviceObservation> {
    const observation: JobDeviceObservation = { deviceId: d.deviceId };
    if (d.netboxId !== null && deps.netbox) {
      const nb = await deps.netbox.device(d.netboxId);
      const pc = nb.custom_fields.platform_class;
      observation.netbox = {
        status: nb.status.value as NonNullable<JobDeviceObservation["netbox"]>["status"],
        platformClass: typeof pc === "string" ? pc : null,
        tags: nb.tags.map((t) => t.slug),
      };
    }
    const client = d.ironicInstance ? deps.ironic[d.ironicInstance] : undefined;
    const node = client ? await client.findNode(nodeRef(d)) : null;
    if (node && d.ironicInstance) {
      observation.ironic = {
        instance: d.ironicInstance,
        nodeUuid: node.uuid,
        provisionState: node.provision_state,
        targetProvisionState: node.target_provision_state,
        powerState: node.power_state,
        maintenance: node.maintenance,
        lastError: node.last_error,
      };
    }
    return observation;
  }

  return {
    /** The job and its devices as the hub knows them; null when the job is no longer active. */
    async preflight({ jobId, kind }: { jobId: string; kind: WorkflowKind }): Promise<JobPlan | null> {
      return guarded(async () => {
        const job = await deps.hub.getJob(jobId);
        if (!ACTIVE_JOB_STATUSES.includes(job.status) || job.status === "CANCELLING") return null;
        if (job.kind !== kind) throw badInput(`job ${job.name} is a ${job.kind} job, not ${kind}`);
        const { site } = await deps.hub.getSite(job.siteId);
        // A workflow on the wrong task queue (a misconfigured queue shared by two sites, or
        // started by hand) must not touch this site's Ironic and NetBox with another site's job.
        if (site.slug !== deps.site)
          throw badInput(`job ${job.name} is at site ${site.slug}; this worker serves ${deps.site}`);
        const devices = await Promise.all(job.deviceIds.map((id) => deps.hub.getDevice(id)));
        return {
          site: {
            slug: site.slug,
            slurmEnabled: site.slurmEnabled,
            configureDhcp: site.configureDhcp,
            platformClassActivityReady: site.platformClassActivityReady,
          },
          devices: devices.map(planOf),
        };
      });
    },

    /** ENROL precondition: staged in NetBox, with a BMC address and a role. */
    async netboxCheckStaged(d: DevicePlan): Promise<void> {
      return guarded(async () => {
        const nb = await netbox().device(netboxIdOf(d));
        const status = nb.status.value;
        if (status !== "staged") throw badInput(`${d.name} is ${status} in NetBox; enrolment needs it staged`);
        const missing = [
          !nb.oob_ip && !d.bmcAddress ? "an out-of-band (BMC) IP" : null,
          !d.ironicInstance ? "a device role that maps to an Ironic instance" : null,
        ].filter(Boolean);
        if (missing.length) throw badInput(`${d.name} cannot be enrolled: it needs ${missing.join(" and ")} in NetBox`);
        ironicFor(d);
      });
    },

    /** Creates the Ironic node unless one of that name exists, then brings it to `manageable`. */
    async ironicEnroll(d: DevicePlan): Promise<string> {
      return guarded(async () => {
        const client = ironicFor(d);
        let node =
          (d.ironicNodeUuid ? await client.findNode(d.ironicNodeUuid) : null) ?? (await client.findNode(d.name));
        const bmc = bmcDriverInfo(d);
        if (!node) {
          node = await client.createNode({
            name: d.name,
            driver: deps.ironicDriver,
            driver_info: { [bmc.key]: bmc.value },
            ...(d.resourceClass ? { resource_class: d.resourceClass } : {}),
            extra: { fleet_manager_device_id: d.deviceId },
          });
        } else if (node.extra.fleet_manager_device_id && node.extra.fleet_manager_device_id !== d.deviceId) {
          throw badInput(`Ironic node ${node.name} (${node.uuid}) belongs to another Fleet Manager device`);
        }
        if (node.provision_state === "enroll" && !node.target_provision_state) {
          // `manage` verifies the BMC credentials: the address must be there first.
          if (node.driver_info?.[bmc.key] !== bmc.value)
            await client.patchNode(node.uuid, [{ op: "add", path: `/driver_info/${bmc.key}`, value: bmc.value }]);
          await request(
            client,
            node.uuid,
            "manage",
            inOrPast(
              "verifying",
              "manageable",
              "inspecting",
              "inspect wait",
              "cleaning",
              "clean wait",
              "available",
              "active",
            ),
          );
        }
        // A failed verification puts the node back in `enroll` with last_error: resting there is a failure.
        await waitFor(client, node.uuid, ["manageable", "available", "active"], ["verifying"], "manage");
        return node.uuid;
      });
    },

    /** Hardware inspection (once: a node already inspected or already available is left alone). */
    async ironicInspect(d: DevicePlan): Promise<void> {
      return guarded(async () => {
        const client = ironicFor(d);
        const node = await client.getNode(nodeRef(d));
        if (node.provision_state === "manageable" && !node.target_provision_state && !node.inspection_finished_at)
          await request(
            client,
            node.uuid,
            "inspect",
            (n) =>
              ["inspecting", "inspect wait", "available", "active"].includes(n.provision_state) ||
              Boolean(n.inspection_finished_at),
          );
        await waitFor(
          client,
          node.uuid,
          ["manageable", "available", "active"],
          ["inspecting", "inspect wait"],
          "inspect",
        );
      });
    },

    /** Points the node's driver at its BMC and checks that Ironic can reach power and management. */
    async configureBmc(d: DevicePlan): Promise<void> {
      return guarded(async () => {
        const client = ironicFor(d);
        const { key, value } = bmcDriverInfo(d);
        const node = await client.getNode(nodeRef(d));
        if (node.driver_info?.[key] !== value)
          await client.patchNode(node.uuid, [{ op: "add", path: `/driver_info/${key}`, value }]);
        const validation = await client.validateNode(node.uuid);
        const broken = ["power", "management"]
          .filter((i) => validation[i]?.result === false)
          .map((i) => `${i}: ${validation[i]?.reason ?? "invalid"}`);
        if (broken.length) throw badInput(`Ironic cannot use the BMC of ${d.name}: ${broken.join("; ")}`);
      });
    },

    /**
     * A dnsmasq host reservation for the BMC, in the `--dhcp-hostsdir` file format (that of
     * `--dhcp-hostsfile`: the text right of `=` in `--dhcp-host`, i.e. `<mac>,<ip>,<name>`),
     * written atomically; dnsmasq rereads the folder on its own. Same content: no write.
     */
    async configureDhcp(d: DevicePlan): Promise<{ written: boolean }> {
      if (!deps.dhcpHostsDir)
        throw notConfigured("the site enables configureDhcp but this worker has no FM_DHCP_HOSTS_DIR");
      if (!d.bmcMac || !d.bmcAddress)
        throw badInput(`${d.name} needs a BMC MAC address and IP for its DHCP reservation`);
      const file = join(deps.dhcpHostsDir, `${d.name}.conf`);
      const content = `# managed by Fleet Manager: ${d.name} BMC\n${d.bmcMac.toLowerCase()},${d.bmcAddress},${d.name}-bmc\n`;
      if ((await readFile(file, "utf8").catch(() => null)) === content) return { written: false };
      await mkdir(deps.dhcpHostsDir, { recursive: true });
      await writeFile(`${file}.tmp`, content, { mode: 0o644 });
      await rename(`${file}.tmp`, file);
      return { written: true };
    },

    /** manageable → cleaning → available. */
    async ironicProvide(d: DevicePlan): Promise<void> {
      return guarded(() =>
        drive(d, {
          from: "manageable",
          target: "provide",
          passing: ["cleaning", "clean wait"],
          want: ["available", "active"],
        }),
      );
    },

    /** NetBox `active`; `platform_class` when the site's gate is on; existing tags attached. */
    async netboxActivate(d: DevicePlan, o: { platformClass: string | null; tags: string[] }): Promise<void> {
      return guarded(async () => {
        const id = netboxIdOf(d);
        if (o.tags.length) await netbox().addDeviceTags(id, o.tags);
        if (o.platformClass) await netbox().setPlatformClass(id, o.platformClass);
        await netbox().setDeviceStatus(id, "active");
      });
    },

    /** UNENROL: back to `staged` in NetBox. */
    async netboxStage(d: DevicePlan): Promise<void> {
      return guarded(async () => {
        await netbox().setDeviceStatus(netboxIdOf(d), "staged");
      });
    },

    /** Reads the devices back from NetBox and Ironic and records that on the hub device. */
    async recordOnHub(jobId: string, devices: DevicePlan[]): Promise<void> {
      return guarded(async () => {
        const observations = await Promise.all(devices.map(observe));
        await deps.hub.reportJob(jobId, { devices: observations });
      });
    },

    /**
     * Submits the burn-in batch job pinned to the device's SLURM node, under a name unique to
     * this job and device; a job already submitted under that name is reused, not resubmitted.
     */
    async slurmSubmitBurnIn(a: {
      jobId: string;
      jobName: string;
      device: DevicePlan;
      durationMinutes: number;
      partition?: string;
    }): Promise<number> {
      return guarded(async () => {
        const name = `fm-${a.jobName}-${a.device.name}`.slice(0, 200);
        const existing = (await slurm().jobsByName(name))[0];
        if (existing) return existing.jobId;
        const node = a.device.slurmNodeName ?? a.device.name;
        const { jobId } = await slurm().submitJob({
          name,
          nodes: [node],
          ...(a.partition ? { partition: a.partition } : {}),
          timeLimitMinutes: a.durationMinutes + 10,
          comment: `fleet-manager job ${a.jobId}`,
          workingDirectory: "/tmp",
          standardOutput: `/tmp/${name}-%j.out`,
          environment: {
            FM_BURNIN_DURATION_S: String(a.durationMinutes * 60),
            FM_JOB_ID: a.jobId,
            FM_DEVICE: a.device.name,
            PATH: "/usr/local/bin:/usr/bin:/bin",
          },
          script: `#!/bin/bash\n# Fleet Manager burn-in of ${a.device.name} (job ${a.jobName})\n${deps.burnInCommand}\n`,
        });
        // Look-then-submit is two steps: should two attempts ever have raced (one Temporal
        // thought dead), the oldest job of the name wins and the others are cancelled.
        const named = await slurm().jobsByName(name);
        const keep = named[0]?.jobId ?? jobId;
        for (const extra of named.slice(1)) await slurm().cancelJob(extra.jobId);
        return keep;
      });
    },

    /** Waits for a SLURM job to end; cancelling the activity cancels the SLURM job. */
    async slurmWait(a: {
      slurmJobId: number;
      device: string;
    }): Promise<{ device: string; slurmJobId: number; state: string; exitCode: number | null }> {
      const ctx = Context.current();
      try {
        for (;;) {
          const job = await guarded(() => slurm().job(a.slurmJobId));
          // slurmctld forgets ended jobs after MinJobAge (300 s by default); without accounting
          // (slurmdbd) the result is then unknown, and saying so beats waiting forever.
          if (!job)
            throw ApplicationFailure.nonRetryable(
              `SLURM no longer knows job ${a.slurmJobId} (it ended more than MinJobAge ago, while no worker watched): its result is unknown`,
              "SourceRejected",
            );
          ctx.heartbeat({ state: job.state });
          if (isTerminalSlurmState(job.state))
            return { device: a.device, slurmJobId: a.slurmJobId, state: job.state, exitCode: job.exitCode };
          await ctx.sleep(deps.pollIntervalMs);
        }
      } catch (err) {
        // Only a cancellation of the activity itself (its workflow was cancelled or is gone) ends
        // the SLURM job; a worker shutting down, a lost heartbeat, a pause or a reset leave it
        // running for the next attempt to wait on.
        const reason = ctx.cancellationSignal.aborted
          ? (ctx.cancellationSignal.reason as Error | undefined)?.message
          : undefined;
        if (reason === "CANCELLED" || reason === "NOT_FOUND")
          await slurm()
            .cancelJob(a.slurmJobId)
            .catch(() => {});
        throw err;
      }
    },

    async slurmCancel(ids: number[]): Promise<void> {
      await guarded(() => Promise.all(ids.map((id) => slurm().cancelJob(id))));
    },

    /** RELEASE with SLURM: the node is known to SLURM and neither down nor drained. */
    async slurmCheckNode(d: DevicePlan): Promise<string> {
      return guarded(async () => {
        const name = d.slurmNodeName ?? d.name;
        const node = (await slurm().nodes()).find((n) => n.name === name);
        if (!node) throw badInput(`SLURM has no node ${name}`);
        const bad = [node.state, ...node.stateFlags]
          .map((s) => s.toUpperCase())
          .filter((s) => ["DOWN", "DRAIN", "DRAINED", "DRAINING", "FAIL", "NOT_RESPONDING"].includes(s));
        if (bad.length)
          throw badInput(
            `SLURM node ${name} is ${bad.join("+").toLowerCase()}${node.reason ? `: ${node.reason}` : ""}`,
          );
        return node.state;
      });
    },

    async ironicCheck(d: DevicePlan): Promise<string> {
      return guarded(async () => {
        const node = await ironicFor(d).findNode(nodeRef(d));
        if (!node) throw badInput(`Ironic has no node for ${d.name}`);
        return node.provision_state;
      });
    },

    /** active → deleted (cleaning wipes the disks) → available. */
    async ironicTeardown(d: DevicePlan): Promise<void> {
      return guarded(() =>
        drive(d, {
          from: "active",
          target: "deleted",
          passing: ["deleting", "cleaning", "clean wait"],
          want: ["available"],
        }),
      );
    },

    /**
     * Rebuild with the image, once per job: the node's extra.fleet_manager_rebuild records which
     * workflow asked, so a retry after a lost answer waits for that rebuild instead of starting
     * another; a retry after a worker died between the record and the request (the node has
     * not moved since) asks again.
     */
    async ironicRebuild(d: DevicePlan, o: { image: string; marker: string }): Promise<void> {
      return guarded(async () => {
        const client = ironicFor(d);
        const node = await client.getNode(nodeRef(d));
        // The marker holds Ironic's own provision_updated_at from before the request (no clock
        // of ours is compared with Ironic's): if it changed since, the rebuild happened.
        const mark = node.extra.fleet_manager_rebuild as { by?: string; before?: string | null } | undefined;
        const ours = mark?.by === o.marker;
        const moved = ours && node.provision_updated_at !== (mark.before ?? null);
        if (!ours) {
          if (node.provision_state !== "active")
            throw badInput(`${d.name} has no instance to reimage (Ironic ${node.provision_state})`);
          await client.patchNode(node.uuid, [
            { op: "add", path: "/instance_info/image_source", value: o.image },
            {
              op: "add",
              path: "/extra/fleet_manager_rebuild",
              value: { by: o.marker, before: node.provision_updated_at },
            },
          ]);
        }
        if (!moved && node.provision_state === "active" && !node.target_provision_state)
          await request(
            client,
            node.uuid,
            "rebuild",
            (n) => n.provision_state !== "active" || n.target_provision_state !== null,
          );
        await waitFor(
          client,
          node.uuid,
          ["active"],
          ["deploying", "wait call-back", "cleaning", "clean wait"],
          "rebuild",
        );
      });
    },
  };
}
export type Activities = ReturnType<typeof createActivities>;

const BMC_ADDRESS_FIELD: Record<string, string> = {
  redfish: "redfish_address",
  ipmi: "ipmi_address",
  idrac: "redfish_address",
};

/** What a workflow needs of a hub device. */
export function planOf(d: Device): DevicePlan {
  const bmc = d.interfaces.find((i) => i.mgmtOnly && i.macAddress) ?? null;
  return {
    deviceId: d.id,
    name: d.name,
    netboxId: d.netbox.id,
    bmcAddress: d.bmcAddress,
    bmcMac: bmc?.macAddress ?? null,
    ironicInstance: d.ironic.instance ?? (d.role ? ironicInstanceFor(d.role.deviceClass) : null),
    ironicNodeUuid: d.ironic.nodeUuid,
    slurmNodeName: d.slurm.nodeName,
    resourceClass: d.role?.deviceClass ?? null,
  };
}
