/** One job: its steps and progress, polled while it is active, and cancel for operators. */
import { useMutation, useQueries, useQuery, useQueryClient } from "@tanstack/react-query";
import { ACTIVE_JOB_STATUSES, type Device, type Job } from "@fm/domain";
import { api } from "../api.ts";
import { Link, useTitle } from "../router.tsx";
import { useSession } from "../session.tsx";
import { Badge, ErrorNote, Loading, Section, when } from "../ui.tsx";
import { POLL_MS } from "./jobs.tsx";

export function Progress({ value, label }: { value: number; label: string }) {
  return (
    <span className="progress">
      <progress max={1} value={value} aria-label={label} /> {Math.round(value * 100)} %
    </span>
  );
}

export function JobDetail({ id }: { id: string }) {
  const { can } = useSession();
  const queries = useQueryClient();
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
  return (
    <>
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
          <button type="button" className="danger" disabled={cancel.isPending} onClick={() => cancel.mutate()}>
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
