/**
 * Devices: the hub filters, sorts and pages (keyset `cursor`, or `page=N` to jump), the URL holds
 * every filter, the sort, the page and the chosen columns, so a view can be shared as a link.
 * Rows are the brief representation (names, site, states, the cordon's reason, the last burn-in,
 * Ironic's failure reason), the shape the API offers for tables of many devices. A sortable
 * column's header is a button (Enter or Space): ascending, descending, then back to the hub's
 * default order; the header's aria-sort says which. Operational status and NetBox status filter
 * by several values at once (a device matches any). The list refreshes by itself
 * (LIVE_REFRESH_MS) and says how old it is. An operator selects devices (one by one or the whole
 * page) and cordons, uncordons or creates a job on them together.
 */
import { useLayoutEffect, useState, type FormEvent, type ReactNode } from "react";
import { keepPreviousData, useQueryClient, useMutation, usePrefetchQuery, useQuery } from "@tanstack/react-query";
import {
  DEVICE_BURN_IN_FILTERS,
  DEVICE_CLASSES,
  DEVICE_LIST_MAX_PAGE,
  DEVICE_SORTS,
  DEVICE_SORT_FIELDS,
  NETBOX_DEVICE_STATUSES,
  OPERATIONAL_STATUSES,
  parseDeviceSort,
  type DeviceBrief,
  type DeviceBriefList,
  type DeviceSort,
  type DeviceSortField,
  type SiteList,
} from "@fm/domain";
import { api, query } from "../api.ts";
import { useConfirm } from "../confirm.tsx";
import { LIVE_REFRESH_MS, Updated } from "../live.tsx";
import { Link, navigate, setSearch, useTitle } from "../router.tsx";
import { useSession } from "../session.tsx";
import { Badge, ErrorNote, Loading, Scroll, ago, formatCount } from "../ui.tsx";

/** Filters the hub applies, by their query parameter. */
const FILTERS = [
  "site",
  "operationalStatus",
  "status",
  "deviceClass",
  "cordoned",
  "stale",
  "provisionState",
  "burnIn",
  "name",
] as const;
export const PAGE_SIZE = 100;

/**
 * A column of the table: its header and what a device shows in it. Plain data and one function a
 * cell, drawn by a map: a table library's row and cell objects (TanStack Table built one of each
 * for all 12 columns of 100 rows, visible or not) were a third of the view's first drawing.
 */
interface Column {
  id: string;
  header: string;
  cell(d: DeviceBrief): ReactNode;
  /** A column the person cannot hide (the name). */
  fixed?: true;
}

const COLUMNS: readonly Column[] = [
  { id: "name", header: "Name", cell: (d) => <Link to={`/ui/devices/${d.id}`}>{d.name}</Link>, fixed: true },
  { id: "site", header: "Site", cell: (d) => d.site.slug },
  { id: "serial", header: "Serial", cell: (d) => d.serial ?? "—" },
  {
    id: "operationalStatus",
    header: "Operational status",
    cell: (d) => (
      <>
        <Badge value={d.operationalStatus} />
        {/* A device that failed its burn-in never reads as a plain healthy one. */}
        {d.burnIn?.status === "FAILED" && (
          <>
            {" "}
            <Badge value="burn-in FAILED" kind="bad" />
          </>
        )}
      </>
    ),
  },
  { id: "netboxStatus", header: "NetBox status", cell: (d) => d.netboxStatus },
  { id: "provisionState", header: "Provision state", cell: (d) => d.provisionState ?? "—" },
  { id: "cordoned", header: "Cordoned", cell: (d) => (d.cordoned ? "yes" : "no") },
  {
    id: "cordonReason",
    header: "Cordon reason",
    cell: (d) =>
      d.cordoned ? (
        <span className="reason">
          {d.cordonReason}{" "}
          <span className="muted">
            ({d.cordonedBy ?? "—"}, {ago(d.cordonedAt)})
          </span>
        </span>
      ) : (
        ""
      ),
  },
  { id: "burnIn", header: "Last burn-in", cell: (d) => (d.burnIn ? <Badge value={d.burnIn.status} /> : "—") },
  {
    id: "failureReason",
    header: "Failure reason",
    cell: (d) => <span className="reason">{d.failureReason ?? ""}</span>,
  },
  { id: "stale", header: "Stale", cell: (d) => (d.stale ? "yes" : "no") },
  { id: "updatedAt", header: "Updated", cell: (d) => new Date(d.updatedAt).toLocaleString() },
];
const HIDEABLE = COLUMNS.filter((c) => !c.fixed).map((c) => [c.id, c.header] as const);
const DEFAULT_COLUMNS = ["site", "operationalStatus", "provisionState", "cordonReason", "burnIn", "failureReason"];
/** Filters that take several values, comma-separated in the URL as the hub takes them. */
const MULTI: Record<string, readonly string[]> = {
  operationalStatus: OPERATIONAL_STATUSES,
  status: NETBOX_DEVICE_STATUSES,
};

const isSortField = (id: string): id is DeviceSortField => (DEVICE_SORT_FIELDS as readonly string[]).includes(id);
/** The sort a URL holds; one the hub does not offer is left out rather than sent to a 400. */
const sortOf = (search: URLSearchParams): DeviceSort | undefined => {
  const s = search.get("sort");
  return s && (DEVICE_SORTS as readonly string[]).includes(s) ? (s as DeviceSort) : undefined;
};
/** A header's next sort: ascending, then descending, then the default order. */
const nextSort = (field: DeviceSortField, current: DeviceSort | undefined): DeviceSort | undefined => {
  const now = current && parseDeviceSort(current);
  if (!now || now.field !== field) return field;
  return now.desc ? undefined : (`-${field}` as DeviceSort);
};

/** A performance mark at the view's first render in this document: bench/web.ts times the view from it. */
export const DEVICES_VIEW_MARK = "fm:devices-view";
/** A performance mark once the first page of rows is in the document (React's commit, before the browser lays it out). */
export const DEVICES_ROWS_MARK = "fm:devices-rows";

export function Devices({ search }: { search: URLSearchParams }) {
  useTitle("Devices");
  if (!performance.getEntriesByName(DEVICES_VIEW_MARK).length) performance.mark(DEVICES_VIEW_MARK);
  const { can } = useSession();
  const operator = can("fleet.operate");
  const filters = Object.fromEntries(FILTERS.map((f) => [f, search.get(f) ?? ""])) as Record<
    (typeof FILTERS)[number],
    string
  >;
  const cursor = search.get("cursor") ?? undefined;
  const page = Math.min(DEVICE_LIST_MAX_PAGE, Math.max(1, Math.floor(Number(search.get("page") ?? "1")) || 1));
  const shown = search.get("cols")?.split(",").filter(Boolean) ?? DEFAULT_COLUMNS;
  const sort = sortOf(search);
  const sorted = sort && parseDeviceSort(sort);

  // A cursor pages on; without one, a page number past the first is a jump (page=N).
  const jump = !cursor && page > 1 ? page : undefined;
  const path = `/api/v1/devices${query({ ...filters, sort, cursor, page: jump, limit: PAGE_SIZE, brief: true })}`;
  const listQuery = { queryKey: ["devices", path], queryFn: () => api<DeviceBriefList>(path) };
  // The page's devices are asked for while this first render runs, not after it commits (where
  // useQuery starts): the rows come as soon as the hub answers.
  usePrefetchQuery(listQuery);
  const devices = useQuery({ ...listQuery, placeholderData: keepPreviousData, refetchInterval: LIVE_REFRESH_MS });
  const sites = useQuery({ queryKey: ["sites"], queryFn: () => api<SiteList>("/api/v1/sites?limit=1000") });
  const [selected, setSelected] = useState<ReadonlyMap<string, DeviceBrief>>(new Map());

  const update = (changes: Record<string, string | undefined>, opts: { keepPage?: boolean } = {}) => {
    const next = new URLSearchParams(search);
    for (const [k, v] of Object.entries(changes))
      if (v) next.set(k, v);
      else next.delete(k);
    // A new filter starts from the first page.
    if (!opts.keepPage) {
      next.delete("cursor");
      next.delete("page");
    }
    setSearch(next);
  };
  const goTo = (n: number) => update({ cursor: undefined, page: n > 1 ? String(n) : undefined }, { keepPage: true });

  const items = devices.data?.items ?? [];
  const columns = COLUMNS.filter((c) => c.fixed || shown.includes(c.id));
  /** Selects or leaves out these devices, the rest of the selection as it was. */
  const select = (ds: readonly DeviceBrief[], on: boolean) =>
    setSelected((was) => {
      const next = new Map(was);
      for (const d of ds)
        if (on) next.set(d.id, d);
        else next.delete(d.id);
      return next;
    });
  const pages = devices.data ? Math.max(1, Math.ceil(devices.data.count / PAGE_SIZE)) : 1;
  const drawn = devices.data !== undefined;
  useLayoutEffect(() => {
    if (drawn && !performance.getEntriesByName(DEVICES_ROWS_MARK).length) performance.mark(DEVICES_ROWS_MARK);
  }, [drawn]);
  const allOnPage = items.length > 0 && items.every((d) => selected.has(d.id));

  return (
    <>
      <h1>Devices</h1>
      <Filters filters={filters} sites={sites.data} onChange={update} />
      <ColumnChooser
        shown={shown}
        onChange={(cols) => update({ cols: cols.join(",") || "none" }, { keepPage: true })}
      />
      {operator && <Bulk selected={selected} onDone={() => setSelected(new Map())} />}
      {devices.error ? <ErrorNote error={devices.error} /> : null}
      {!devices.data ? (
        <Loading />
      ) : (
        <>
          <p role="status" data-testid="device-count">
            {formatCount(devices.data.count)} {devices.data.count === 1 ? "device" : "devices"}
            {devices.data.count > PAGE_SIZE ? `, page ${page} of ${formatCount(pages)}` : ""}
          </p>
          <Updated at={devices.dataUpdatedAt} failed={devices.isRefetchError} />
          <Scroll label="Devices">
            <table className="devices" aria-busy={devices.isFetching}>
              <caption className="sr-only">Devices matching the filters</caption>
              <thead>
                <tr>
                  {operator && (
                    <th scope="col">
                      <input
                        type="checkbox"
                        aria-label="Select all on this page"
                        checked={allOnPage}
                        onChange={(e) => select(items, e.target.checked)}
                      />
                    </th>
                  )}
                  {columns.map((c) => {
                    if (!isSortField(c.id))
                      return (
                        <th key={c.id} scope="col">
                          {c.header}
                        </th>
                      );
                    const dir = sorted?.field === c.id ? (sorted.desc ? "descending" : "ascending") : "none";
                    return (
                      <th key={c.id} scope="col" aria-sort={dir}>
                        <button
                          type="button"
                          className="sort"
                          onClick={() => update({ sort: nextSort(c.id as DeviceSortField, sort) })}
                        >
                          {c.header}
                          <span aria-hidden="true" className="sort-mark">
                            {dir === "ascending" ? " ▲" : dir === "descending" ? " ▼" : " ↕"}
                          </span>
                        </button>
                      </th>
                    );
                  })}
                </tr>
              </thead>
              <tbody>
                {items.map((d) => (
                  <tr key={d.id} className={selected.has(d.id) ? "selected" : undefined}>
                    {operator && (
                      <td>
                        <input
                          type="checkbox"
                          aria-label={`Select ${d.name}`}
                          checked={selected.has(d.id)}
                          onChange={(e) => select([d], e.target.checked)}
                        />
                      </td>
                    )}
                    {columns.map((c) => (
                      <td key={c.id}>{c.cell(d)}</td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </Scroll>
          <Pager
            page={page}
            pages={pages}
            atFirst={page === 1 && !cursor}
            nextCursor={devices.data.nextCursor}
            onFirst={() => goTo(1)}
            onNext={(c) => update({ cursor: c, page: String(page + 1) }, { keepPage: true })}
            onPage={goTo}
          />
        </>
      )}
    </>
  );
}

function Pager({
  page,
  pages,
  atFirst,
  nextCursor,
  onFirst,
  onNext,
  onPage,
}: {
  page: number;
  pages: number;
  atFirst: boolean;
  nextCursor: string | null;
  onFirst(): void;
  onNext(cursor: string): void;
  onPage(n: number): void;
}) {
  const last = Math.min(pages, DEVICE_LIST_MAX_PAGE);
  const [asked, setAsked] = useState("");
  return (
    <nav aria-label="Pages" className="pager">
      <button type="button" disabled={atFirst} onClick={onFirst}>
        First page
      </button>
      <button type="button" disabled={!nextCursor} onClick={() => nextCursor && onNext(nextCursor)}>
        Next page
      </button>
      <button type="button" disabled={page >= last} onClick={() => onPage(last)}>
        Last page
      </button>
      <form
        className="inline"
        onSubmit={(e) => {
          e.preventDefault();
          const n = Math.floor(Number(asked));
          if (n >= 1 && n <= last) onPage(n);
        }}
      >
        <label>
          Page
          <input
            type="number"
            min={1}
            max={last}
            value={asked}
            onChange={(e) => setAsked(e.target.value)}
            className="page-number"
          />
        </label>
        <button type="submit">Go</button>
      </form>
    </nav>
  );
}

/** What an operator does to the selected devices together: cordon (with a reason), uncordon, a job. */
function Bulk({ selected, onDone }: { selected: ReadonlyMap<string, DeviceBrief>; onDone(): void }) {
  const queries = useQueryClient();
  const [dialog, confirm] = useConfirm();
  const [reason, setReason] = useState("");
  const devices = [...selected.values()];
  const patch = useMutation({
    mutationFn: async ({ targets, body }: { targets: DeviceBrief[]; body: object }) => {
      // One PATCH a device, each its own transaction on the hub; the first refusal is shown.
      const results = await Promise.allSettled(
        targets.map((d) => api(`/api/v1/devices/${d.id}`, { method: "PATCH", body })),
      );
      const failed = results.flatMap((r, i) =>
        r.status === "rejected" ? [[targets[i]!.name, r.reason] as const] : [],
      );
      if (failed.length)
        throw new Error(
          `${failed.length} of ${targets.length} not changed: ${failed.map(([n, e]) => `${n}: ${(e as Error).message}`).join("; ")}`,
        );
    },
    onSettled: () => {
      void queries.invalidateQueries({ queryKey: ["devices"] });
      void queries.invalidateQueries({ queryKey: ["device"] });
    },
    onSuccess: () => {
      setReason("");
      onDone();
    },
  });
  if (!devices.length) return null;
  const cordoned = devices.filter((d) => d.cordoned);
  const list = (ds: DeviceBrief[], withReason: boolean) => (
    <ul>
      {ds.map((d) => (
        <li key={d.id}>
          {d.name}
          {withReason && d.cordoned
            ? `: “${d.cordonReason ?? ""}” (by ${d.cordonedBy ?? "—"}, ${ago(d.cordonedAt)})`
            : ""}
        </li>
      ))}
    </ul>
  );
  const cordon = async (e: FormEvent) => {
    e.preventDefault();
    const next = reason.trim();
    if (!next) return;
    // As fleetctl without --overwrite: a device already cordoned keeps its reason unless the person agrees.
    if (
      cordoned.length &&
      !(await confirm({
        title: `Replace the cordon reason of ${cordoned.length} device${cordoned.length === 1 ? "" : "s"}?`,
        body: (
          <>
            <p>Already cordoned; “{next}” replaces their reasons:</p>
            {list(cordoned, true)}
          </>
        ),
        confirm: "Replace the reasons",
      }))
    )
      return;
    patch.mutate({ targets: devices, body: { cordoned: true, cordonReason: next } });
  };
  const uncordon = async () => {
    if (!cordoned.length) return;
    const yes = await confirm({
      title: `Uncordon ${cordoned.length} device${cordoned.length === 1 ? "" : "s"}?`,
      body: (
        <>
          <p>These cordons and their reasons are removed:</p>
          {list(cordoned, true)}
        </>
      ),
      confirm: "Uncordon",
      danger: true,
    });
    if (yes) patch.mutate({ targets: cordoned, body: { cordoned: false } });
  };
  return (
    <section className="bulk" aria-label="Selected devices">
      {dialog}
      <p role="status" data-testid="selected-count">
        {devices.length} selected{" "}
        <button type="button" onClick={onDone}>
          Clear selection
        </button>
      </p>
      <form className="inline" onSubmit={(e) => void cordon(e)}>
        <label>
          Cordon reason
          <input required value={reason} onChange={(e) => setReason(e.target.value)} maxLength={1000} />
        </label>
        <button type="submit" disabled={patch.isPending}>
          Cordon selected
        </button>
      </form>
      <button type="button" disabled={patch.isPending || !cordoned.length} onClick={() => void uncordon()}>
        Uncordon selected
      </button>
      <button
        type="button"
        onClick={() => navigate(`/ui/jobs/new${query({ devices: devices.map((d) => d.name).join(",") })}`)}
      >
        Create a job on the selected
      </button>
      {patch.error ? <ErrorNote error={patch.error} /> : null}
    </section>
  );
}

function Filters({
  filters,
  sites,
  onChange,
}: {
  filters: Record<string, string>;
  sites: SiteList | undefined;
  onChange: (c: Record<string, string | undefined>) => void;
}) {
  const [name, setName] = useState(filters.name ?? "");
  const submit = (e: FormEvent) => {
    e.preventDefault();
    onChange({ name: name.trim() || undefined });
  };
  const select = (key: string, label: string, options: readonly string[], labels?: Record<string, string>) => (
    <label>
      {label}
      <select value={filters[key]} onChange={(e) => onChange({ [key]: e.target.value || undefined })}>
        <option value="">any</option>
        {options.map((o) => (
          <option key={o} value={o}>
            {labels?.[o] ?? o}
          </option>
        ))}
      </select>
    </label>
  );
  /** A filter of several values: a checkbox each, the checked ones comma-separated in the URL. */
  const multi = (key: string, label: string) => {
    const on = new Set((filters[key] ?? "").split(",").filter(Boolean));
    return (
      <fieldset className="multi">
        <legend>{label}</legend>
        {MULTI[key]!.map((o) => (
          <label key={o}>
            <input
              type="checkbox"
              checked={on.has(o)}
              onChange={(e) => {
                const next = MULTI[key]!.filter((v) => (v === o ? e.target.checked : on.has(v)));
                onChange({ [key]: next.join(",") || undefined });
              }}
            />
            {o}
          </label>
        ))}
      </fieldset>
    );
  };
  return (
    <div className="filters">
      <form role="search" onSubmit={submit} className="search">
        <label>
          Name contains
          <input type="search" value={name} onChange={(e) => setName(e.target.value)} maxLength={200} />
        </label>
        <button type="submit">Search</button>
      </form>
      {select("site", "Site", sites?.items.map((s) => s.slug) ?? (filters.site ? [filters.site] : []))}
      {multi("operationalStatus", "Operational status")}
      {multi("status", "NetBox status")}
      {select("deviceClass", "Device class", DEVICE_CLASSES)}
      {select("burnIn", "Last burn-in", DEVICE_BURN_IN_FILTERS, { passed: "passed", failed: "failed", none: "never" })}
      {select("cordoned", "Cordoned", ["true", "false"], { true: "yes", false: "no" })}
      {select("stale", "Stale", ["true", "false"], { true: "yes", false: "no" })}
    </div>
  );
}

function ColumnChooser({ shown, onChange }: { shown: string[]; onChange: (cols: string[]) => void }) {
  return (
    <fieldset className="columns">
      <legend>Columns</legend>
      {HIDEABLE.map(([id, label]) => (
        <label key={id}>
          <input
            type="checkbox"
            checked={shown.includes(id)}
            onChange={(e) => onChange(e.target.checked ? [...shown, id] : shown.filter((c) => c !== id))}
          />
          {label}
        </label>
      ))}
    </fieldset>
  );
}
