/**
 * One device: every source's view side by side with when it observed the device, the derived
 * conditions, the history timeline, its jobs (burn-in results among them), and cordon/uncordon.
 * A cordon carries the ETag the page was read with (If-Match): if an agent or another operator
 * changed the device meanwhile, the hub answers 412 and the page says so instead of overwriting.
 */
import { useState, type FormEvent, type ReactNode } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { Device, DeviceHistoryList, JobList } from "@fm/domain";
import { ApiError, api, apiRaw, query } from "../api.ts";
import { useConfirm } from "../confirm.tsx";
import { LIVE_REFRESH_MS, Updated } from "../live.tsx";
import { Link, useTitle } from "../router.tsx";
import { useSession } from "../session.tsx";
import { Badge, ErrorNote, Loading, Section, ago, when, Scroll } from "../ui.tsx";

export function DeviceDetail({ id }: { id: string }) {
  const device = useQuery({
    queryKey: ["device", id],
    queryFn: async () => {
      const { body, etag } = await apiRaw(`/api/v1/devices/${id}`);
      return { device: body as Device, etag };
    },
    refetchInterval: LIVE_REFRESH_MS,
  });
  useTitle(device.data?.device.name ?? "Device");
  if (device.error) return <ErrorNote error={device.error} />;
  if (!device.data) return <Loading />;
  const d = device.data.device;
  return (
    <>
      <p className="crumbs">
        <Link to="/ui/devices">Devices</Link> / {d.site.slug}
      </p>
      <h1>
        {d.name} <Badge value={d.operationalStatus} /> {d.cordoned && <Badge value="cordoned" kind="warn" />}
        {d.stale && <Badge value="stale" kind="warn" />}
      </h1>
      <Updated at={device.dataUpdatedAt} failed={device.isRefetchError} />
      <Cordon device={d} etag={device.data.etag} />
      <Sources d={d} />
      <Section title="Conditions">
        <table>
          <thead>
            <tr>
              <th scope="col">Type</th>
              <th scope="col">Status</th>
              <th scope="col">Reason</th>
              <th scope="col">Message</th>
              <th scope="col">Since</th>
            </tr>
          </thead>
          <tbody>
            {d.conditions.map((c) => (
              <tr key={c.type}>
                <th scope="row">{c.type}</th>
                <td>{c.status}</td>
                <td>{c.reason}</td>
                <td>{c.message}</td>
                <td>{when(c.lastTransitionTime)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </Section>
      <Section title="Burn-in">
        {d.burnIn ? (
          <p data-testid="device-burn-in">
            Last burn-in <Badge value={d.burnIn.status} /> {when(d.burnIn.at)},{" "}
            <Link to={`/ui/jobs/${d.burnIn.jobId}`}>see its job</Link>.
          </p>
        ) : (
          <p>No burn-in has reported a result for this device.</p>
        )}
      </Section>
      <DeviceJobs id={d.id} />
      <History id={d.id} />
    </>
  );
}

/** What a cordon's reason says, who set it and when, as the confirmations quote it. */
export const cordonText = (d: Pick<Device, "cordonReason" | "cordonedBy" | "cordonedAt">) =>
  `“${d.cordonReason ?? ""}” (by ${d.cordonedBy ?? "—"}, ${ago(d.cordonedAt)})`;

function Cordon({ device, etag }: { device: Device; etag: string | null }) {
  const { can } = useSession();
  const queries = useQueryClient();
  const [dialog, confirm] = useConfirm();
  const [reason, setReason] = useState("");
  const patch = useMutation({
    mutationFn: (body: { cordoned: boolean; cordonReason?: string }) =>
      api<Device>(`/api/v1/devices/${device.id}`, { method: "PATCH", body, headers: etag ? { "if-match": etag } : {} }),
    onSuccess: () => {
      setReason("");
      void queries.invalidateQueries({ queryKey: ["device", device.id] });
      void queries.invalidateQueries({ queryKey: ["history", device.id] });
      void queries.invalidateQueries({ queryKey: ["devices"] });
    },
  });
  const conflict = patch.error instanceof ApiError && patch.error.status === 412;
  const status = device.cordoned ? (
    <p data-testid="cordon-status">
      Cordoned by {device.cordonedBy ?? "—"} {ago(device.cordonedAt)} ({device.cordonSource}): {device.cordonReason}
    </p>
  ) : (
    <p data-testid="cordon-status">Not cordoned.</p>
  );
  if (!can("fleet.operate")) return <Section title="Cordon">{status}</Section>;
  // As fleetctl: a cordoned device keeps its reason unless the person agrees to replace it, and
  // an uncordon says which reason it removes. The PATCH carries the ETag the page showed.
  const cordon = async (e: FormEvent) => {
    e.preventDefault();
    const next = reason.trim();
    if (
      device.cordoned &&
      !(await confirm({
        title: `Replace the cordon reason of ${device.name}?`,
        body: (
          <p>
            It is cordoned {cordonText(device)}. The new reason “{next}” replaces it.
          </p>
        ),
        confirm: "Replace the reason",
      }))
    )
      return;
    patch.mutate({ cordoned: true, cordonReason: next });
  };
  const uncordon = async () => {
    const yes = await confirm({
      title: `Uncordon ${device.name}?`,
      body: <p>This removes the cordon {cordonText(device)}; the device can take work again.</p>,
      confirm: "Uncordon",
      danger: true,
    });
    if (yes) patch.mutate({ cordoned: false });
  };
  return (
    <Section title="Cordon">
      {dialog}
      {status}
      <form onSubmit={(e) => void cordon(e)} className="inline">
        <label>
          {device.cordoned ? "New reason" : "Reason"}
          <input required value={reason} onChange={(e) => setReason(e.target.value)} maxLength={1000} />
        </label>
        <button type="submit" className={device.cordoned ? undefined : "primary"} disabled={patch.isPending}>
          {device.cordoned ? "Cordon again" : "Cordon"}
        </button>
        {device.cordoned && (
          <button type="button" className="primary" disabled={patch.isPending} onClick={() => void uncordon()}>
            Uncordon
          </button>
        )}
      </form>
      {conflict ? (
        <div role="alert" className="error">
          This device changed since this page loaded it (an agent or another operator wrote it), so nothing was changed.
          Check its new state, then try again.{" "}
          <button
            type="button"
            onClick={() => {
              patch.reset();
              void queries.invalidateQueries({ queryKey: ["device", device.id] });
            }}
          >
            Reload the device
          </button>
        </div>
      ) : patch.error ? (
        <ErrorNote error={patch.error} />
      ) : null}
    </Section>
  );
}

function Sources({ d }: { d: Device }) {
  const rows: [string, (s: "netbox" | "ironic" | "slurm" | "health") => ReactNode][] = [
    ["Observed", (s) => (d[s].observedAt ? `${ago(d[s].observedAt)} (${when(d[s].observedAt)})` : "never")],
  ];
  const field = (label: string, values: Partial<Record<"netbox" | "ironic" | "slurm" | "health", ReactNode>>) =>
    rows.push([label, (s) => values[s] ?? ""]);
  field("Status", {
    netbox: `${d.netbox.status}${d.netbox.missing ? " (missing from NetBox)" : ""}`,
    ironic: d.ironic.provisionState ?? "—",
    slurm: d.slurm.state ?? "—",
    health: d.health.status ?? "—",
  });
  field("Detail", {
    netbox: d.netbox.id !== null ? `NetBox id ${d.netbox.id}` : "—",
    ironic:
      [
        d.ironic.instance,
        d.ironic.powerState,
        d.ironic.maintenance ? `maintenance: ${d.ironic.maintenanceReason ?? ""}` : null,
      ]
        .filter(Boolean)
        .join(", ") || "—",
    slurm:
      [d.slurm.nodeName, d.slurm.stateFlags.join("+"), d.slurm.reason, d.slurm.partitions.join(" ")]
        .filter(Boolean)
        .join(", ") || "—",
    health: d.health.conditions.map((c) => `${c.name}: ${c.status}`).join(", ") || "—",
  });
  field("Problem", { ironic: d.ironic.lastError ?? d.ironic.fault ?? "" });
  const sources = ["netbox", "ironic", "slurm", "health"] as const;
  return (
    <Section title="Sources">
      <Scroll label="Sources side by side">
        <table className="sources">
          <thead>
            <tr>
              <td />
              {sources.map((s) => (
                <th scope="col" key={s}>
                  {s === "netbox" ? "NetBox" : s === "ironic" ? "Ironic" : s === "slurm" ? "SLURM" : "Health"}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map(([label, cell]) => (
              <tr key={label}>
                <th scope="row">{label}</th>
                {sources.map((s) => (
                  <td key={s}>{cell(s)}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </Scroll>
      <dl className="facts">
        <dt>Serial</dt>
        <dd>{d.serial ?? "—"}</dd>
        <dt>Rack</dt>
        <dd>{d.rack ? `${d.rack.name} U${d.rack.position ?? "?"}` : "—"}</dd>
        <dt>Model</dt>
        <dd>{d.deviceType?.model ?? "—"}</dd>
        <dt>Role</dt>
        <dd>{d.role ? `${d.role.slug} (${d.role.deviceClass})` : "—"}</dd>
        <dt>Notes</dt>
        <dd>{d.notes ?? "—"}</dd>
      </dl>
    </Section>
  );
}

function DeviceJobs({ id }: { id: string }) {
  const jobs = useQuery({
    queryKey: ["jobs", "device", id],
    queryFn: () => api<JobList>(`/api/v1/jobs${query({ device: id, limit: 20, order: "desc" })}`),
  });
  return (
    <Section title="Jobs">
      {jobs.error ? <ErrorNote error={jobs.error} /> : null}
      {jobs.data && jobs.data.items.length === 0 && <p>No jobs on this device.</p>}
      {jobs.data && jobs.data.items.length > 0 && (
        <ul className="plain">
          {jobs.data.items.map((j) => (
            <li key={j.id}>
              <Link to={`/ui/jobs/${j.id}`}>{j.name}</Link> {j.kind} <Badge value={j.status} />{" "}
              {Math.round(j.progress * 100)} %{j.kind === "BURN_IN" && j.error ? ` — ${j.error.message}` : ""}{" "}
              <span className="muted">{when(j.createdAt)}</span>
            </li>
          ))}
        </ul>
      )}
    </Section>
  );
}

function History({ id }: { id: string }) {
  const history = useQuery({
    queryKey: ["history", id],
    queryFn: () => api<DeviceHistoryList>(`/api/v1/devices/${id}/history?limit=100&order=desc`),
  });
  const show = (v: unknown) => (v === null || v === undefined ? "—" : typeof v === "string" ? v : JSON.stringify(v));
  return (
    <Section title="History">
      {history.error ? <ErrorNote error={history.error} /> : null}
      {history.data && (
        <ol className="timeline">
          {history.data.items.map((h) => (
            <li key={h.id}>
              <time dateTime={h.changedAt}>{when(h.changedAt)}</time> <strong>{h.field}</strong> {show(h.oldValue)} →{" "}
              {show(h.newValue)}{" "}
              <span className="muted">
                ({h.source}
                {h.principal ? `, ${h.principal}` : ""})
              </span>
            </li>
          ))}
        </ol>
      )}
    </Section>
  );
}
