/**
 * Jobs: filtered by status, kind and site (in the URL), refreshed every few seconds while any is
 * active; a failed job shows its error (the step and the message) in its row.
 */
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { ACTIVE_JOB_STATUSES, JOB_KINDS, JOB_STATUSES, type JobList } from "@fm/domain";
import { api, query } from "../api.ts";
import { Link, setSearch, useTitle } from "../router.tsx";
import { useSession } from "../session.tsx";
import { Badge, ErrorNote, Loading, when, Scroll, formatCount } from "../ui.tsx";
import { POLL_MS, Progress } from "./job-common.tsx";

export function Jobs({ search }: { search: URLSearchParams }) {
  useTitle("Jobs");
  const { can } = useSession();
  const filters = {
    status: search.get("status") ?? "",
    kind: search.get("kind") ?? "",
    site: search.get("site") ?? "",
  };
  const cursor = search.get("cursor") ?? undefined;
  const path = `/api/v1/jobs${query({ ...filters, cursor, limit: 50, order: "desc" })}`;
  const jobs = useQuery({
    queryKey: ["jobs", path],
    queryFn: () => api<JobList>(path),
    placeholderData: keepPreviousData,
    refetchInterval: (q) => (q.state.data?.items.some((j) => ACTIVE_JOB_STATUSES.includes(j.status)) ? POLL_MS : false),
  });
  const set = (k: string, v: string) => {
    const next = new URLSearchParams(search);
    if (v) next.set(k, v);
    else next.delete(k);
    next.delete("cursor");
    setSearch(next);
  };
  return (
    <>
      <h1>Jobs</h1>
      {can("fleet.operate") && (
        <p>
          <Link to="/ui/jobs/new" className="button primary">
            Create a job
          </Link>
        </p>
      )}
      <div className="filters">
        <label>
          Status
          <select value={filters.status} onChange={(e) => set("status", e.target.value)}>
            <option value="">any</option>
            {JOB_STATUSES.map((s) => (
              <option key={s}>{s}</option>
            ))}
          </select>
        </label>
        <label>
          Kind
          <select value={filters.kind} onChange={(e) => set("kind", e.target.value)}>
            <option value="">any</option>
            {JOB_KINDS.map((s) => (
              <option key={s}>{s}</option>
            ))}
          </select>
        </label>
      </div>
      {jobs.error ? <ErrorNote error={jobs.error} /> : null}
      {!jobs.data ? (
        <Loading />
      ) : (
        <>
          <p role="status">{formatCount(jobs.data.count)} jobs</p>
          <Scroll label="Jobs">
            <table>
              <thead>
                <tr>
                  <th scope="col">Job</th>
                  <th scope="col">Kind</th>
                  <th scope="col">Status</th>
                  <th scope="col">Progress</th>
                  <th scope="col" className="num">
                    Devices
                  </th>
                  <th scope="col">Created by</th>
                  <th scope="col">Created</th>
                  <th scope="col">Error</th>
                </tr>
              </thead>
              <tbody>
                {jobs.data.items.map((j) => (
                  <tr key={j.id}>
                    <td>
                      <Link to={`/ui/jobs/${j.id}`}>{j.name}</Link>
                    </td>
                    <td>{j.kind}</td>
                    <td>
                      <Badge value={j.status} />
                    </td>
                    <td>
                      <Progress value={j.progress} label={`${j.name} progress`} />
                    </td>
                    <td className="num">{j.deviceIds.length}</td>
                    <td>{j.createdBy}</td>
                    <td>{when(j.createdAt)}</td>
                    <td className="reason" data-testid="job-error">
                      {j.error ? `${j.error.step ? `${j.error.step}: ` : ""}${j.error.message}` : ""}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </Scroll>
          {jobs.data.nextCursor && (
            <nav aria-label="Pages" className="pager">
              <button type="button" onClick={() => set("cursor", jobs.data.nextCursor ?? "")}>
                Next page
              </button>
            </nav>
          )}
        </>
      )}
    </>
  );
}
