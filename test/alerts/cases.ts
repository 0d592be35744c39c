/**
 * The cases each alert of infra/alerts/ is tested with: series that must fire and series that
 * must not, and the runbook's incidents replayed as series (2 October VIP flapping, 23 September
 * hub API outage, the 10-hour OpenStack agent restart loop of 16–17 September).
 */
import { H, M, counter, every, restarts, sampled, type AlertCase } from "./promtool.ts";

const HUB = { cluster: "fleet-mgr-glo1" };
const STA1 = { cluster: "fleet-mgr-sys2-sta1" };
const LON14 = { cluster: "fleet-mgr-mgt-sys1-lon14" };
const never = (from: number, to: number, step = M) => every(from, to, step);

const labels = (l: Record<string, string>) =>
  `{${Object.entries(l)
    .map(([k, v]) => `${k}="${v}"`)
    .join(",")}}`;

/** The hub API ingress's request counter for one status, `rps(t)` requests per second. */
function ingress(status: string, end: number, step: number, rps: (t: number) => number) {
  return {
    series: `nginx_ingress_controller_requests${labels({ ...HUB, ingress: "fleet-manager-hub-api", status })}`,
    values: counter(end, step, rps),
  };
}
function agentRestarts(cluster: object, container: string, end: number, step: number, at: number[]) {
  return {
    series: `kube_pod_container_status_restarts_total${labels({ ...cluster, namespace: "fleet-manager", container, pod: `fleet-manager-satellite-${container}-7d9f-abcde` })}`,
    values: restarts(end, step, at),
  };
}
function reflectorAge(cluster: object, store: string, end: number, step: number, age: (t: number) => number) {
  return {
    series: `fleet_manager_reflector_age_seconds${labels({ ...cluster, namespace: "fleet-manager", store })}`,
    values: sampled(end, step, age),
  };
}
function temporalReplicas(cluster: object, end: number, step: number, n: (t: number) => number) {
  return {
    series: `kube_deployment_status_replicas_available${labels({ ...cluster, namespace: "fleet-manager", deployment: "fleet-manager-satellite-temporal-worker" })}`,
    values: sampled(end, step, n),
  };
}
function matrixAge(connector: string, end: number, step: number, age: (t: number) => number) {
  return {
    series: `fleet_manager_matrix_oldest_undelivered_event_age_seconds${labels({ ...HUB, connector })}`,
    values: sampled(end, step, age),
  };
}
const PROBE = { job: "fleet-manager-satellite-hub-probe", instance: "https://api.fleet.nscale.com/healthz" };
function probe(end: number, step: number, ok: (t: number) => number | undefined) {
  return { series: `probe_success${labels(PROBE)}`, values: sampled(end, step, ok) };
}

// ---------------------------------------------------------------------------------------------

const apiErrorRate: AlertCase[] = [
  {
    name: "6% of requests answer 5xx: fires after 10 minutes, not before",
    rules: "sev1",
    step: M,
    series: [ingress("200", 30 * M, M, () => 75.2), ingress("503", 30 * M, M, () => 4.8)],
    expect: [
      { alert: "FleetManagerApiErrorRateHigh", at: [10 * M], firing: [] },
      { alert: "FleetManagerApiErrorRateHigh", at: [11 * M, 30 * M], firing: [HUB] },
    ],
  },
  {
    name: "4% of requests answer 5xx: never fires",
    rules: "sev1",
    step: M,
    series: [ingress("200", 60 * M, M, () => 76.8), ingress("500", 60 * M, M, () => 3.2)],
    expect: [{ alert: "FleetManagerApiErrorRateHigh", at: never(0, 60 * M), firing: [] }],
  },
  {
    name: "10% 5xx for 8 minutes, then none: never fires",
    rules: "sev1",
    step: M,
    series: [
      ingress("200", 40 * M, M, (t) => (t > 10 * M && t <= 18 * M ? 72 : 80)),
      ingress("502", 40 * M, M, (t) => (t > 10 * M && t <= 18 * M ? 8 : 0)),
    ],
    expect: [{ alert: "FleetManagerApiErrorRateHigh", at: never(0, 40 * M), firing: [] }],
  },
];

const apiTrafficAbsent: AlertCase[] = [
  {
    name: "about 80 requests per second: does not fire",
    rules: "sev1",
    step: M,
    series: [ingress("200", 60 * M, M, () => 80)],
    expect: [{ alert: "FleetManagerApiTrafficAbsent", at: never(0, 60 * M), firing: [] }],
  },
  {
    name: "4 requests per second: fires after 15 minutes, not before",
    rules: "sev1",
    step: M,
    series: [ingress("200", 40 * M, M, () => 4)],
    expect: [
      { alert: "FleetManagerApiTrafficAbsent", at: [15 * M], firing: [] },
      { alert: "FleetManagerApiTrafficAbsent", at: [16 * M, 40 * M], firing: [HUB] },
    ],
  },
  {
    name: "6 requests per second: does not fire",
    rules: "sev1",
    step: M,
    series: [ingress("200", 60 * M, M, () => 6)],
    expect: [{ alert: "FleetManagerApiTrafficAbsent", at: never(0, 60 * M), firing: [] }],
  },
  {
    name: "the ingress metric disappears (stale at 10 min): fires 15 minutes later, not before",
    rules: "sev1",
    step: M,
    series: [
      {
        series: `nginx_ingress_controller_requests${labels({ ...HUB, ingress: "fleet-manager-hub-api", status: "200" })}`,
        values: sampled(60 * M, M, (t) => (t < 10 * M ? 4800 * (t / M) : t === 10 * M ? "stale" : undefined)),
      },
    ],
    expect: [
      { alert: "FleetManagerApiTrafficAbsent", at: [24 * M], firing: [] },
      {
        alert: "FleetManagerApiTrafficAbsent",
        at: [25 * M, 60 * M],
        firing: [{ cluster: "fleet-mgr-glo1", ingress: "fleet-manager-hub-api" }],
      },
    ],
  },
];

/** The agent alerts share their shape: restarts in 30 minutes, or the reflector's age. */
function agentStale(alert: string, container: string, store: string): AlertCase[] {
  return [
    {
      name: `${alert}: a healthy agent (age under a minute, no restart) does not fire`,
      rules: "sev1",
      step: M,
      series: [agentRestarts(STA1, container, 2 * H, M, []), reflectorAge(STA1, store, 2 * H, M, (t) => (t % 60) + 1)],
      expect: [{ alert, at: never(0, 2 * H, 5 * M), firing: [] }],
    },
    {
      name: `${alert}: age over 600 s fires at once, 600 s does not`,
      rules: "sev1",
      step: M,
      series: [agentRestarts(STA1, container, 30 * M, M, []), reflectorAge(STA1, store, 30 * M, M, (t) => t)],
      expect: [
        { alert, at: [10 * M], firing: [] },
        { alert, at: [11 * M, 30 * M], firing: [STA1] },
      ],
    },
    {
      name: `${alert}: 3 restarts in 30 minutes fire although the age stays low; 2 do not`,
      rules: "sev1",
      step: M,
      series: [
        agentRestarts(STA1, container, 90 * M, M, [5 * M, 20 * M, 30 * M]),
        agentRestarts(LON14, container, 90 * M, M, [5 * M, 20 * M]),
        reflectorAge(STA1, store, 90 * M, M, () => 30),
        reflectorAge(LON14, store, 90 * M, M, () => 30),
      ],
      expect: [
        { alert, at: [29 * M], firing: [] },
        { alert, at: [30 * M, 34 * M], firing: [STA1] },
        { alert, at: [70 * M, 90 * M], firing: [] },
      ],
    },
  ];
}

const temporalWorkerDown: AlertCase[] = [
  {
    name: "no available replica for 10 minutes fires; 9 minutes does not; one replica never",
    rules: "sev1",
    step: M,
    series: [
      temporalReplicas(STA1, 60 * M, M, (t) => (t >= 5 * M ? 0 : 1)),
      temporalReplicas(LON14, 60 * M, M, (t) => (t >= 5 * M && t < 14 * M ? 0 : 1)),
      temporalReplicas(HUB, 60 * M, M, () => 2),
    ],
    expect: [
      { alert: "FleetManagerTemporalWorkerDown", at: [14 * M], firing: [] },
      { alert: "FleetManagerTemporalWorkerDown", at: [15 * M, 60 * M], firing: [STA1] },
    ],
  },
];

const matrixFeedStalled: AlertCase[] = [
  {
    name: "an event stuck since the start: over 15 minutes at 15 min, fires 10 minutes later; a 14-minute backlog never",
    rules: "sev1",
    step: M,
    series: [matrixAge("matrix-prod", 60 * M, M, (t) => t), matrixAge("matrix-wdc1-prod", 60 * M, M, () => 14 * M)],
    expect: [
      { alert: "FleetManagerMatrixFeedStalled", at: [25 * M], firing: [] },
      { alert: "FleetManagerMatrixFeedStalled", at: [26 * M, 60 * M], firing: [{ ...HUB, connector: "matrix-prod" }] },
    ],
  },
];

// ---------------------------------------------------------------------------------------------
// Satellite alerts: the probe every 15 s, the rules every 30 s.

const S = 15;
const hubUnreachable: AlertCase[] = [
  {
    name: "every probe succeeds: does not fire",
    rules: "satellite",
    step: S,
    series: [probe(30 * M, S, () => 1)],
    expect: [{ alert: "FleetManagerHubApiUnreachable", at: never(0, 30 * M, 30), firing: [] }],
  },
  {
    name: "a total outage of 60 s never fires",
    rules: "satellite",
    step: S,
    series: [probe(30 * M, S, (t) => (t >= 10 * M && t < 11 * M ? 0 : 1))],
    expect: [{ alert: "FleetManagerHubApiUnreachable", at: never(0, 30 * M, 30), firing: [] }],
  },
  {
    name: "a total outage of 90 s fires only after it ended, and clears within a minute",
    rules: "satellite",
    step: S,
    series: [probe(30 * M, S, (t) => (t >= 10 * M && t < 10 * M + 90 ? 0 : 1))],
    expect: [
      { alert: "FleetManagerHubApiUnreachable", at: never(0, 15 * M, 30), firing: [] },
      { alert: "FleetManagerHubApiUnreachable", at: [15 * M + 30], firing: [PROBE] },
      { alert: "FleetManagerHubApiUnreachable", at: never(16 * M, 30 * M, 30), firing: [] },
    ],
  },
  {
    name: "the hub down (probe_success 0, scraped cleanly): fires after 5 minutes pending",
    rules: "satellite",
    step: S,
    series: [probe(30 * M, S, (t) => (t >= 10 * M ? 0 : 1))],
    expect: [
      { alert: "FleetManagerHubApiUnreachable", at: [15 * M], firing: [] },
      { alert: "FleetManagerHubApiUnreachable", at: [15 * M + 30, 30 * M], firing: [PROBE] },
      { alert: "FleetManagerHubProbeMissing", at: never(0, 30 * M, 30), firing: [] },
    ],
  },
];

const hubProbeMissing: AlertCase[] = [
  {
    name: "the probe stops reporting at 1 h (exporter gone or scrape failing): fires after 15 minutes, clears a day later",
    rules: "satellite",
    step: M,
    series: [
      probe(26 * H, M, (t) => (t < H ? 1 : undefined)),
      {
        series: `up${labels({ job: PROBE.job, instance: PROBE.instance })}`,
        values: sampled(26 * H, M, (t) => (t < H ? 1 : 0)),
      },
    ],
    expect: [
      { alert: "FleetManagerHubProbeMissing", at: [H + 14 * M], firing: [] },
      { alert: "FleetManagerHubProbeMissing", at: [H + 16 * M, 12 * H, H + 23 * H + 58 * M], firing: [PROBE] },
      { alert: "FleetManagerHubProbeMissing", at: [H + 24 * H + M, 26 * H], firing: [] },
      // Missing samples are not failed probes: the unreachable alert cannot fire, hence this one.
      { alert: "FleetManagerHubApiUnreachable", at: [H + 16 * M, 12 * H], firing: [] },
    ],
  },
  {
    name: "a probe that never reported does not fire",
    rules: "satellite",
    step: M,
    series: [
      { series: `up${labels({ job: PROBE.job, instance: PROBE.instance })}`, values: sampled(2 * H, M, () => 0) },
    ],
    expect: [{ alert: "FleetManagerHubProbeMissing", at: never(0, 2 * H, 10 * M), firing: [] }],
  },
];

// ---------------------------------------------------------------------------------------------
// The runbook's incidents.

/**
 * 2 October 2026: the load-balancer VIP up for about 25 s and down for about 25 s, probed every
 * 15 s. The flapping starts at 10 min; the runbook: the alert fires about 6½ minutes later.
 */
const FLAP_START = 10 * M;
const october2: AlertCase = {
  name: "2 October: the VIP flapping 25 s up / 25 s down fires about 6½ minutes after the flapping starts",
  rules: "satellite",
  step: S,
  series: [probe(40 * M, S, (t) => (t < FLAP_START ? 1 : (t - FLAP_START) % 50 < 25 ? 1 : 0))],
  expect: [
    { alert: "FleetManagerHubApiUnreachable", at: never(0, FLAP_START + 6 * M, 30), firing: [] },
    { alert: "FleetManagerHubApiUnreachable", at: [FLAP_START + 6 * M + 30, 40 * M], firing: [PROBE] },
    { alert: "FleetManagerHubProbeMissing", at: never(0, 40 * M, 30), firing: [] },
  ],
};

/**
 * 23 September 2026: the hub API answers 503 from 20 min to 80 min. Callers keep calling (about
 * 40 requests per second: agents retrying, the UI), so traffic is not absent. The workflow
 * agent, which reads jobs from the hub, gives up and restarts every 5 minutes, each restart
 * resetting its age (which never crosses 600 s). The OpenStack agent keeps listing Ironic: its
 * age stays under a minute and it does not restart. The Matrix connector, reading from the hub,
 * cannot deliver: its oldest event ages from 20 min. The Temporal worker stays up.
 */
const OUT_FROM = 20 * M;
const OUT_TO = 80 * M;
const down = (t: number) => t > OUT_FROM && t <= OUT_TO;
const wfRestarts = every(OUT_FROM + 4 * M, OUT_TO, 5 * M);
const september23: AlertCase = {
  name: "23 September hub API outage: API error-rate, workflow-agent and Matrix alerts fire; OpenStack, traffic and Temporal do not",
  rules: "sev1",
  step: M,
  series: [
    ingress("200", 2 * H, M, (t) => (down(t) ? 0 : 80)),
    ingress("503", 2 * H, M, (t) => (down(t) ? 40 : 0)),
    agentRestarts(STA1, "workflow-agent", 2 * H, M, wfRestarts),
    reflectorAge(STA1, "workflow", 2 * H, M, (t) => {
      if (!down(t)) return 20;
      const last = Math.max(OUT_FROM, ...wfRestarts.filter((r) => r <= t));
      return t - last;
    }),
    agentRestarts(STA1, "openstack-agent", 2 * H, M, []),
    reflectorAge(STA1, "ironic-nodes-overcloud", 2 * H, M, (t) => t % 60),
    temporalReplicas(STA1, 2 * H, M, () => 1),
    matrixAge("matrix-prod", 2 * H, M, (t) => (down(t) ? t - OUT_FROM : 0)),
  ],
  expect: [
    { alert: "FleetManagerApiErrorRateHigh", at: [OUT_FROM + 5 * M], firing: [] },
    { alert: "FleetManagerApiErrorRateHigh", at: [OUT_FROM + 12 * M, OUT_TO], firing: [HUB] },
    { alert: "FleetManagerApiErrorRateHigh", at: [OUT_TO + 10 * M], firing: [] },
    { alert: "FleetManagerWorkflowAgentStale", at: [OUT_FROM + 12 * M], firing: [] },
    { alert: "FleetManagerWorkflowAgentStale", at: [OUT_FROM + 14 * M, OUT_TO], firing: [STA1] },
    { alert: "FleetManagerMatrixFeedStalled", at: [OUT_FROM + 25 * M], firing: [] },
    {
      alert: "FleetManagerMatrixFeedStalled",
      at: [OUT_FROM + 26 * M, OUT_TO],
      firing: [{ ...HUB, connector: "matrix-prod" }],
    },
    { alert: "FleetManagerOpenStackStateStale", at: never(0, 2 * H), firing: [] },
    { alert: "FleetManagerApiTrafficAbsent", at: never(0, 2 * H), firing: [] },
    { alert: "FleetManagerTemporalWorkerDown", at: never(0, 2 * H), firing: [] },
  ],
};

/**
 * 16–17 September 2026, sys2-sta1: the OpenStack agent restart-looped for 10 hours, restarting
 * every 9 minutes. Each restart reset its age, which never crossed 600 s; the alert fires on
 * the restarts, and clears once a 30-minute window holds fewer than 3.
 */
const LOOP_FROM = H;
const LOOP_TO = 11 * H;
const loopRestarts = every(LOOP_FROM, LOOP_TO, 9 * M);
const september16: AlertCase = {
  name: "the 10-hour OpenStack agent restart loop fires on 3 restarts in 30 minutes although its age stays under 600 s",
  rules: "sev1",
  step: M,
  series: [
    agentRestarts(STA1, "openstack-agent", 13 * H, M, loopRestarts),
    reflectorAge(STA1, "ironic-nodes-overcloud", 13 * H, M, (t) => {
      const last = Math.max(0, ...loopRestarts.filter((r) => r <= t));
      return last ? Math.min(t - last, 9 * M) : t % 60;
    }),
  ],
  expect: [
    { alert: "FleetManagerOpenStackStateStale", at: [LOOP_FROM + 10 * M], firing: [] },
    { alert: "FleetManagerOpenStackStateStale", at: every(LOOP_FROM + 30 * M, LOOP_TO, H), firing: [STA1] },
    { alert: "FleetManagerOpenStackStateStale", at: [LOOP_TO + 40 * M, 13 * H], firing: [] },
  ],
};

export const CASES: Record<string, AlertCase[]> = {
  FleetManagerApiErrorRateHigh: [...apiErrorRate, september23],
  FleetManagerApiTrafficAbsent: [...apiTrafficAbsent, september23],
  FleetManagerOpenStackStateStale: [
    ...agentStale("FleetManagerOpenStackStateStale", "openstack-agent", "ironic-nodes-overcloud"),
    september16,
    september23,
  ],
  FleetManagerWorkflowAgentStale: [
    ...agentStale("FleetManagerWorkflowAgentStale", "workflow-agent", "workflow"),
    september23,
  ],
  FleetManagerTemporalWorkerDown: [...temporalWorkerDown, september23],
  FleetManagerMatrixFeedStalled: [...matrixFeedStalled, september23],
  FleetManagerHubApiUnreachable: [...hubUnreachable, october2],
  FleetManagerHubProbeMissing: [...hubProbeMissing, october2],
};
