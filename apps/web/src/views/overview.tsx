/**
 * Fleet overview: devices by operational status per site, each site's sources and silence, open
 * discrepancies (each count linking to the discrepancies view filtered to it). Live: every part is
 * asked again each LIVE_REFRESH_MS, and the page says how old what it shows is.
 */
import { useQuery } from "@tanstack/react-query";
import {
  DISCREPANCY_KINDS,
  OPERATIONAL_STATUSES,
  type DeviceCounts,
  type DiscrepancySummary,
  type SiteList,
} from "@fm/domain";
import { api, query } from "../api.ts";
import { LIVE_REFRESH_MS, Updated } from "../live.tsx";
import { Link, useTitle } from "../router.tsx";
import { ErrorNote, Loading, Section, age, Scroll, formatCount } from "../ui.tsx";
import { discrepanciesUrl } from "./discrepancies.tsx";
import { SiteReporting } from "./satellites.tsx";

export function Overview() {
  useTitle("Overview");
  const sites = useQuery({
    queryKey: ["sites"],
    queryFn: () => api<SiteList>("/api/v1/sites?limit=1000"),
    refetchInterval: LIVE_REFRESH_MS,
  });
  const discrepancies = useQuery({
    queryKey: ["discrepancies-summary"],
    queryFn: () => api<DiscrepancySummary>("/api/v1/discrepancies/summary"),
    refetchInterval: LIVE_REFRESH_MS,
  });
  // Every (site, status) count in one request, each the number the devices list shows for it.
  const counts = useQuery({
    queryKey: ["device-counts", "site,operationalStatus"],
    queryFn: () => api<DeviceCounts>(`/api/v1/devices/counts${query({ groupBy: "site,operationalStatus" })}`),
    select: (d) => new Map(d.groups.map((g) => [`${g.site!.id} ${g.operationalStatus!}`, g.count])),
    refetchInterval: LIVE_REFRESH_MS,
  });
  if (sites.error) return <ErrorNote error={sites.error} />;
  if (!sites.data) return <Loading />;
  const count = (siteId: string, status: string) =>
    counts.data ? (counts.data.get(`${siteId} ${status}`) ?? 0) : undefined;
  const openBySite = new Map(discrepancies.data?.sites.map((s) => [s.slug, s]));
  // The oldest of the three answers on screen: what the page shows is at least this fresh.
  const updatedAt = Math.min(
    ...[sites.dataUpdatedAt, counts.dataUpdatedAt, discrepancies.dataUpdatedAt].filter((t) => t > 0),
  );

  return (
    <>
      <h1>Fleet overview</h1>
      <Updated at={updatedAt} failed={sites.isRefetchError || counts.isRefetchError || discrepancies.isRefetchError} />
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
              {sites.data.items.map((site) => (
                <tr key={site.id}>
                  <th scope="row">{site.name}</th>
                  {OPERATIONAL_STATUSES.map((status) => {
                    const n = count(site.id, status);
                    return (
                      <td key={status} className="num">
                        {n === undefined ? (
                          "…"
                        ) : n === 0 ? (
                          "0"
                        ) : (
                          <Link to={`/ui/devices${query({ site: site.slug, operationalStatus: status })}`}>
                            {formatCount(n)}
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
        {counts.error ? <ErrorNote error={counts.error} /> : null}
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
                const open = openBySite.get(site.slug);
                return (
                  <tr key={site.id}>
                    <th scope="row">{site.name}</th>
                    <td>
                      <SiteReporting site={site} />
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
                    <td className="num">
                      {!discrepancies.data ? (
                        "…"
                      ) : !open ? (
                        "0"
                      ) : (
                        <>
                          <Link
                            to={discrepanciesUrl({ site: [site.slug] })}
                            aria-label={`${open.total} open discrepancies at ${site.slug}`}
                          >
                            {formatCount(open.total)}
                          </Link>
                          <ul className="plain">
                            {DISCREPANCY_KINDS.filter((k) => open.byKind[k]).map((k) => (
                              <li key={k}>
                                <Link to={discrepanciesUrl({ site: [site.slug], kind: [k] })}>
                                  {k}: {formatCount(open.byKind[k]!)}
                                </Link>
                              </li>
                            ))}
                          </ul>
                        </>
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </Scroll>
        {discrepancies.error ? <ErrorNote error={discrepancies.error} /> : null}
        {discrepancies.data && (
          <p>
            Open discrepancies fleet-wide:{" "}
            <Link to={discrepanciesUrl({})}>{formatCount(discrepancies.data.total)}</Link>
          </p>
        )}
      </Section>
    </>
  );
}
