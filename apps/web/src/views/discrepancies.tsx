/**
 * Discrepancies fleet-wide: where the sources disagree, with each source's value and since when.
 * Filtered by sites and kinds (several of each) and a name search, all in the URL
 * (`?site=a,b&kind=x,y&name=`), so a filtered view can be shared; the overview's counts link here.
 */
import { useState, type FormEvent } from "react";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { DISCREPANCY_KINDS, type DiscrepancyList, type SiteList } from "@fm/domain";
import { api, query } from "../api.ts";
import { Link, setSearch, useTitle } from "../router.tsx";
import { ErrorNote, Loading, Scroll, ago, when, formatCount } from "../ui.tsx";

export const DISCREPANCY_PAGE_SIZE = 100;

/** The values of a comma-separated query parameter. */
const listOf = (v: string | null) => (v ? v.split(",").filter(Boolean) : []);

/** The view's URL for these filters (the overview links with it). */
export function discrepanciesUrl(filters: { site?: string[]; kind?: string[] }): string {
  return `/ui/discrepancies${query({ site: filters.site?.join(","), kind: filters.kind?.join(",") })}`;
}

export function Discrepancies({ search }: { search: URLSearchParams }) {
  useTitle("Discrepancies");
  const sitesChosen = listOf(search.get("site"));
  const kindsChosen = listOf(search.get("kind"));
  const name = search.get("name") ?? "";
  const [draft, setDraft] = useState(name);
  const cursor = search.get("cursor") ?? undefined;
  const path = `/api/v1/discrepancies${query({
    site: sitesChosen.join(","),
    kind: kindsChosen.join(","),
    name,
    cursor,
    limit: DISCREPANCY_PAGE_SIZE,
  })}`;
  const list = useQuery({
    queryKey: ["discrepancies", path],
    queryFn: () => api<DiscrepancyList>(path),
    placeholderData: keepPreviousData,
  });
  const sites = useQuery({ queryKey: ["sites"], queryFn: () => api<SiteList>("/api/v1/sites?limit=1000") });
  const siteById = new Map(sites.data?.items.map((s) => [s.id, s]));

  /** The URL with `key` set to `values` (removed when empty), from the first page again. */
  const set = (key: string, value: string) => {
    const next = new URLSearchParams(search);
    if (value) next.set(key, value);
    else next.delete(key);
    next.delete("cursor");
    setSearch(next);
  };
  const toggle = (key: "site" | "kind", chosen: string[], value: string, on: boolean) =>
    set(key, (on ? [...chosen, value] : chosen.filter((v) => v !== value)).join(","));
  const submit = (e: FormEvent) => {
    e.preventDefault();
    set("name", draft.trim());
  };

  return (
    <>
      <h1>Discrepancies</h1>
      <p>Devices and items on which the sources disagree, with what each source reports and since when.</p>
      <div className="filters">
        <fieldset>
          <legend>Sites</legend>
          {sites.data?.items.map((s) => (
            <label key={s.id}>
              <input
                type="checkbox"
                checked={sitesChosen.includes(s.slug)}
                onChange={(e) => toggle("site", sitesChosen, s.slug, e.target.checked)}
              />
              {s.slug}
            </label>
          ))}
        </fieldset>
        <fieldset>
          <legend>Kinds</legend>
          {DISCREPANCY_KINDS.map((k) => (
            <label key={k}>
              <input
                type="checkbox"
                checked={kindsChosen.includes(k)}
                onChange={(e) => toggle("kind", kindsChosen, k, e.target.checked)}
              />
              {k}
            </label>
          ))}
        </fieldset>
        <form onSubmit={submit} role="search">
          <label>
            Name contains
            <input value={draft} onChange={(e) => setDraft(e.target.value)} maxLength={200} />
          </label>
          <button type="submit">Search</button>
        </form>
      </div>
      {list.error ? <ErrorNote error={list.error} /> : null}
      {!list.data ? (
        <Loading />
      ) : (
        <>
          <p role="status">{formatCount(list.data.count)} discrepancies</p>
          <Scroll label="Discrepancies">
            <table>
              <thead>
                <tr>
                  <th scope="col">Site</th>
                  <th scope="col">Kind</th>
                  <th scope="col">Device</th>
                  <th scope="col">Since</th>
                  <th scope="col">What each source reports</th>
                </tr>
              </thead>
              <tbody>
                {list.data.items.map((d) => (
                  <tr key={`${d.kind} ${d.id}`}>
                    <td>{siteById.get(d.siteId)?.slug ?? d.siteId}</td>
                    <td>{d.kind}</td>
                    <td>
                      {d.deviceId ? (
                        <Link to={`/ui/devices/${d.deviceId}`}>{d.name}</Link>
                      ) : (
                        <>
                          {d.name} <span className="muted">(no device)</span>
                        </>
                      )}
                    </td>
                    <td title={when(d.since)}>{ago(d.since)}</td>
                    <td>
                      <ul className="plain">
                        {Object.entries(d.observed).map(([field, value]) => (
                          <li key={field}>
                            {field}: {value ?? "—"}
                          </li>
                        ))}
                      </ul>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </Scroll>
          {list.data.items.length === 0 && <p>No open discrepancy matches these filters.</p>}
          {list.data.nextCursor && (
            <nav aria-label="Pages" className="pager">
              <button type="button" onClick={() => set("cursor", list.data.nextCursor ?? "")}>
                Next page
              </button>
            </nav>
          )}
        </>
      )}
    </>
  );
}
