/**
 * The audit log: every change made through the API, newest first, filtered by principal, action or
 * resource. Each entry names who made it (a person's email, a client, a satellite's agent) and what
 * it changed (a device's name linking to its page, a job's, a site's slug), the ids beside.
 */
import { useState, type FormEvent } from "react";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import type { AuditList } from "@fm/domain";
import { api, query } from "../api.ts";
import { Link, setSearch, useTitle } from "../router.tsx";
import { ErrorNote, Loading, when, Scroll, formatCount } from "../ui.tsx";

const FILTERS = ["principal", "action", "resourceType", "resourceId"] as const;

/** The UI's page of each resource type that has one, by the resource's id. */
const RESOURCE_PAGES: Record<string, string> = {
  device: "/ui/devices/",
  device_burn_in_override: "/ui/devices/",
  job: "/ui/jobs/",
};

export function Audit({ search }: { search: URLSearchParams }) {
  useTitle("Audit log");
  const filters = Object.fromEntries(FILTERS.map((f) => [f, search.get(f) ?? ""]));
  const [draft, setDraft] = useState(filters);
  const cursor = search.get("cursor") ?? undefined;
  const path = `/api/v1/audit${query({ ...filters, cursor, limit: 50, order: "desc" })}`;
  const audit = useQuery({
    queryKey: ["audit", path],
    queryFn: () => api<AuditList>(path),
    placeholderData: keepPreviousData,
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const next = new URLSearchParams();
    for (const [k, v] of Object.entries(draft)) if (v?.trim()) next.set(k, v.trim());
    setSearch(next);
  };
  return (
    <>
      <h1>Audit log</h1>
      <form onSubmit={submit} className="filters" role="search">
        {FILTERS.map((f) => (
          <label key={f}>
            {f}
            <input
              value={draft[f] ?? ""}
              onChange={(e) => setDraft({ ...draft, [f]: e.target.value })}
              maxLength={200}
            />
          </label>
        ))}
        <button type="submit">Filter</button>
      </form>
      {audit.error ? <ErrorNote error={audit.error} /> : null}
      {!audit.data ? (
        <Loading />
      ) : (
        <>
          <p role="status">{formatCount(audit.data.count)} entries</p>
          <Scroll label="Audit entries">
            <table>
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">Principal</th>
                  <th scope="col">Action</th>
                  <th scope="col">Resource</th>
                  <th scope="col">Changes</th>
                </tr>
              </thead>
              <tbody>
                {audit.data.items.map((a) => (
                  <tr key={a.id}>
                    <td>{when(a.createdAt)}</td>
                    <td>
                      {a.principalName} <span className="muted">({a.principalKind})</span>
                    </td>
                    <td>{a.action}</td>
                    <td>
                      {a.resourceType}{" "}
                      {a.resourceName === null ? (
                        a.resourceId
                      ) : (
                        <>
                          {RESOURCE_PAGES[a.resourceType] ? (
                            <Link to={`${RESOURCE_PAGES[a.resourceType]}${a.resourceId}`}>{a.resourceName}</Link>
                          ) : (
                            <strong>{a.resourceName}</strong>
                          )}
                          {a.resourceName !== a.resourceId && <div className="muted">{a.resourceId}</div>}
                        </>
                      )}
                    </td>
                    <td>
                      <ul className="plain">
                        {Object.entries(a.diff).map(([field, d]) => (
                          <li key={field}>
                            {field}: {JSON.stringify(d.before)} → {JSON.stringify(d.after)}
                          </li>
                        ))}
                      </ul>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </Scroll>
          {audit.data.nextCursor && (
            <nav aria-label="Pages" className="pager">
              <button
                type="button"
                onClick={() => {
                  const next = new URLSearchParams(search);
                  next.set("cursor", audit.data.nextCursor ?? "");
                  setSearch(next);
                }}
              >
                Next page
              </button>
            </nav>
          )}
        </>
      )}
    </>
  );
}
