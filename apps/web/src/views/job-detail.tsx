/** One job: its steps and progress, polled while it is active, and cancel for operators. */
import { useMutation, useQueries, useQuery, useQueryClient } from "@tanstack/react-query";
import { ACTIVE_JOB_STATUSES, type BurnInDeviceResult, type BurnInTestResult, type Device, type Job } from "@fm/domain";
import { api } from "../api.ts";
import { useConfirm } from "../confirm.tsx";
import { Link, useTitle } from "../router.tsx";
import { useSession } from "../session.tsx";
import { Badge, ErrorNote, Loading, Scroll, Section, when, formatCount } from "../ui.tsx";
import { POLL_MS, Progress } from "./job-common.tsx";

export function JobDetail({ id }: { id: string }) {
  const { can } = useSession();
  const queries = useQueryClient();
  const [dialog, confirm] = useConfirm();
  const job = useQuery({
    queryKey: ["job", id],
    queryFn: () => api<Job>(`/api/v1/jobs/${id}`),
    refetchInterval: (q) => (q.state.data && !ACTIVE_JOB_STATUSES.includes(q.state.data.status) ? false : POLL_MS),
  });
  const cancel = useMutation({
    mutationFn: () => api<Job>(`/api/v1/jobs/${id}/cancel`, { method: "POST" }),
    onSuccess: (j) => queries.setQueryData(["job", id], j),
  });
  useTitle(job.data?.name ?? "Job");
  if (job.error) return <ErrorNote error={job.error} />;
  if (!job.data) return <Loading />;
  const j = job.data;
  const active = ACTIVE_JOB_STATUSES.includes(j.status);
  const askCancel = async () => {
    const n = j.deviceIds.length;
    const yes = await confirm({
      title: `Cancel ${j.name}?`,
      body: (
        <p>
          The {j.kind} job on {n} device{n === 1 ? "" : "s"} stops after its current step; what it already did stays
          done. A cancelled job cannot be resumed.
        </p>
      ),
      confirm: "Cancel job",
      danger: true,
    });
    if (yes) cancel.mutate();
  };
  return (
    <>
      {dialog}
      <p className="crumbs">
        <Link to="/ui/jobs">Jobs</Link>
      </p>
      <h1>
        {j.name}{" "}
        <span data-testid="job-status">
          <Badge value={j.status} />
        </span>
      </h1>
      <p>
        {j.kind} on {j.deviceIds.length} device{j.deviceIds.length === 1 ? "" : "s"}, created by {j.createdBy}{" "}
        {when(j.createdAt)}
        {j.finishedAt ? `, finished ${when(j.finishedAt)}` : ""}.
      </p>
      <Progress value={j.progress} label="Job progress" />
      {can("fleet.operate") && active && j.status !== "CANCELLING" && (
        <p>
          <button type="button" className="danger" disabled={cancel.isPending} onClick={() => void askCancel()}>
            Cancel job
          </button>
        </p>
      )}
      {cancel.error ? <ErrorNote error={cancel.error} /> : null}
      {j.error && (
        <p role="alert" className="error">
          {j.error.step ? `${j.error.step}: ` : ""}
          {j.error.message}
        </p>
      )}
      {j.logsUrl && (
        <p>
          <a href={j.logsUrl} rel="noreferrer" target="_blank">
            The job&apos;s logs in the site&apos;s log explorer
          </a>
        </p>
      )}
      {j.signal && (
        <p data-testid="job-signal">
          Operator&apos;s signal: <Badge value={j.signal.outcome} /> by {j.signal.signalledBy}{" "}
          {when(j.signal.signalledAt)}
          {j.signal.note ? ` — ${j.signal.note}` : ""}
        </p>
      )}
      <Section title="Steps">
        {j.steps.length === 0 ? (
          <p>No step has been reported yet.</p>
        ) : (
          <ol className="steps" aria-live="polite">
            {j.steps.map((s) => (
              <li key={s.name}>
                <strong>{s.name}</strong> <Badge value={s.status} />
                {s.progress !== undefined && <Progress value={s.progress} label={`${s.name} progress`} />}
                {s.message && <div className="muted">{s.message}</div>}
              </li>
            ))}
          </ol>
        )}
      </Section>
      {j.burnIn.length > 0 && <BurnInResults results={j.burnIn} />}
      <JobDevices ids={j.deviceIds} />
      <Section title="Parameters">
        <pre>{JSON.stringify(j.params, null, 2)}</pre>
      </Section>
    </>
  );
}

/** The job's devices by name (a job holds at most 100), each linking to its page. */
function JobDevices({ ids }: { ids: string[] }) {
  const devices = useQueries({
    queries: ids.map((id) => ({
      queryKey: ["device-name", id],
      queryFn: () => api<Device>(`/api/v1/devices/${id}`),
      select: (d: Device) => `${d.name} (${d.operationalStatus})`,
      staleTime: 60_000,
    })),
  });
  return (
    <Section title="Devices">
      <ul className="plain">
        {ids.map((id, i) => (
          <li key={id}>
            <Link to={`/ui/devices/${id}`}>{devices[i]?.data ?? id}</Link>
          </li>
        ))}
      </ul>
    </Section>
  );
}

/** An artifact as a link where a browser can open it (http/https); an s3:// location as text to copy. */
function Artifact({ name, url, bytes }: { name: string; url: string; bytes: number }) {
  const label = `${name} (${formatCount(bytes)} bytes)`;
  return /^https?:\/\//.test(url) ? (
    <a href={url} rel="noreferrer">
      {label}
    </a>
  ) : (
    <span>
      {label}: <code>{url}</code>
    </span>
  );
}

/** What a test printed as figures: per GPU, bus bandwidth, Xid errors and the tool's reasons. */
function Figures({ t }: { t: BurnInTestResult }) {
  const f = t.figures;
  const gpu = (g: BurnInTestResult["figures"]["gpus"][number]) =>
    [
      `GPU ${g.index}`,
      g.tflops !== undefined ? `${g.tflops} TFLOPS` : undefined,
      g.temperatureMaxC !== undefined ? `max ${g.temperatureMaxC} °C` : undefined,
      g.throttled ? "throttled" : undefined,
    ]
      .filter(Boolean)
      .join(", ");
  return (
    <>
      {f.gpus.length > 0 && <div>{f.gpus.map(gpu).join("; ")}</div>}
      {f.busBandwidthGBps !== undefined && <div>Bus bandwidth {f.busBandwidthGBps} GB/s</div>}
      {f.xids.map((x) => (
        <div key={`${x.pciAddress}-${x.code}-${x.message}`} className="error">
          Xid {x.code} on {x.pciAddress}: {x.message}
        </div>
      ))}
      {f.reasons.map((r) => (
        <div key={r}>{r}</div>
      ))}
    </>
  );
}

/** A burn-in's outcome per device and test: status, exit code, figures and the artifacts kept. */
function BurnInResults({ results }: { results: BurnInDeviceResult[] }) {
  const names = useQueries({
    queries: results.map((r) => ({
      queryKey: ["device-name", r.deviceId],
      queryFn: () => api<Device>(`/api/v1/devices/${r.deviceId}`),
      select: (d: Device) => `${d.name} (${d.operationalStatus})`,
      staleTime: 60_000,
    })),
  });
  return (
    <Section title="Burn-in results">
      {results.map((r, i) => (
        <div key={r.deviceId} className="stack">
          <h3>
            <Link to={`/ui/devices/${r.deviceId}`}>{names[i]?.data ?? r.deviceId}</Link> <Badge value={r.status} />
          </h3>
          <Scroll label={`Burn-in tests of ${names[i]?.data ?? r.deviceId}`}>
            <table>
              <thead>
                <tr>
                  <th scope="col">Test</th>
                  <th scope="col">Result</th>
                  <th scope="col">Exit code</th>
                  <th scope="col">Figures</th>
                  <th scope="col">Artifacts</th>
                </tr>
              </thead>
              <tbody>
                {r.tests.map((t) => (
                  <tr key={t.test}>
                    <th scope="row">{t.test}</th>
                    <td>
                      <Badge value={t.passed ? "PASSED" : "FAILED"} />
                      {t.message && <div>{t.message}</div>}
                    </td>
                    <td>{t.exitCode ?? "—"}</td>
                    <td>
                      <Figures t={t} />
                    </td>
                    <td>
                      <ul className="plain">
                        {t.artifacts.map((a) => (
                          <li key={a.name}>
                            <Artifact {...a} />
                          </li>
                        ))}
                      </ul>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </Scroll>
        </div>
      ))}
    </Section>
  );
}
