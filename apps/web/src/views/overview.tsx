/** Fleet overview: devices by operational status per site, each site's sources and silence, open discrepancies. */
import { useQueries, useQuery } from "@tanstack/react-query";
import { OPERATIONAL_STATUSES, type DeviceBriefList, type DiscrepancySummary, type SiteList } from "@fm/domain";
import { api, query } from "../api.ts";
import { Link, useTitle } from "../router.tsx";
import { Badge, ErrorNote, Loading, Section, age, Scroll } from "../ui.tsx";

export function Overview() {
  useTitle("Overview");
  const sites = useQuery({ queryKey: ["sites"], queryFn: () => api<SiteList>("/api/v1/sites?limit=1000") });
  const discrepancies = useQuery({
    queryKey: ["discrepancies-summary"],
    queryFn: () => api<DiscrepancySummary>("/api/v1/discrepancies/summary"),
  });
  const slugs = sites.data?.items.map((s) => s.slug) ?? [];
  // One count per (site, status): the list's exact count with a single brief item.
  const counts = useQueries({
    queries: slugs.flatMap((site) =>
      OPERATIONAL_STATUSES.map((status) => ({
        queryKey: ["device-count", site, status],
        queryFn: () =>
          api<DeviceBriefList>(`/api/v1/devices${query({ site, operationalStatus: status, limit: 1, brief: true })}`),
        select: (d: DeviceBriefList) => d.count,
      })),
    ),
  });
  if (sites.error) return <ErrorNote error={sites.error} />;
  if (!sites.data) return <Loading />;
  const count = (i: number, j: number) => counts[i * OPERATIONAL_STATUSES.length + j]?.data;
  const openBySite = new Map(discrepancies.data?.sites.map((s) => [s.slug, s.total]));

  return (
    <>
      <h1>Fleet overview</h1>
      <Section title="Devices by operational status">
        <Scroll label="Devices by site and status">
          <table>
            <caption className="sr-only">
              Number of devices per site and operational status; each number links to those devices
            </caption>
            <thead>
              <tr>
                <th scope="col">Site</th>
                {OPERATIONAL_STATUSES.map((s) => (
                  <th scope="col" key={s} className="num">
                    {s}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {sites.data.items.map((site, i) => (
                <tr key={site.id}>
                  <th scope="row">{site.name}</th>
                  {OPERATIONAL_STATUSES.map((status, j) => {
                    const n = count(i, j);
                    return (
                      <td key={status} className="num">
                        {n === undefined ? (
                          "…"
                        ) : n === 0 ? (
                          "0"
                        ) : (
                          <Link to={`/ui/devices${query({ site: site.slug, operationalStatus: status })}`}>
                            {n.toLocaleString()}
                          </Link>
                        )}
                      </td>
                    );
                  })}
                </tr>
              ))}
            </tbody>
          </table>
        </Scroll>
      </Section>
      <Section title="Sites and their sources">
        <Scroll label="Sites and their sources">
          <table>
            <thead>
              <tr>
                <th scope="col">Site</th>
                <th scope="col">Reporting</th>
                <th scope="col">Sources (last accepted push)</th>
                <th scope="col" className="num">
                  Open discrepancies
                </th>
              </tr>
            </thead>
            <tbody>
              {sites.data.items.map((site) => {
                const reporting = site.conditions.find((c) => c.type === "Reporting");
                return (
                  <tr key={site.id}>
                    <th scope="row">{site.name}</th>
                    <td>
                      {reporting ? (
                        <Badge
                          value={
                            reporting.status === "True"
                              ? "reporting"
                              : reporting.status === "False"
                                ? "silent"
                                : "unknown"
                          }
                          kind={reporting.status === "True" ? "good" : reporting.status === "False" ? "bad" : "neutral"}
                        />
                      ) : (
                        "—"
                      )}
                      {reporting && reporting.status !== "True" && <div className="muted">{reporting.message}</div>}
                    </td>
                    <td>
                      {site.sources.length === 0
                        ? "no source has pushed yet"
                        : site.sources.map((s) => (
                            <span key={s.source} className={`source ${s.silent ? "silent" : ""}`}>
                              {s.source}: {age(s.silenceSeconds)}
                              {s.silent ? " (silent)" : ""}
                            </span>
                          ))}
                    </td>
                    <td className="num">{discrepancies.data ? (openBySite.get(site.slug) ?? 0) : "…"}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </Scroll>
        {discrepancies.error ? <ErrorNote error={discrepancies.error} /> : null}
        {discrepancies.data && <p>Open discrepancies fleet-wide: {discrepancies.data.total}</p>}
      </Section>
    </>
  );
}
