/**
 * Devices: the hub filters, sorts and pages (keyset, `cursor`), the URL holds every filter, the
 * sort, the page's cursor and the chosen columns, so a view can be shared as a link. Rows are
 * the brief representation (names, site, states), the shape the API offers for tables of many
 * devices. A sortable column's header is a button (Enter or Space): ascending, descending, then
 * back to the hub's default order; the header's aria-sort says which.
 */
import { useMemo, useState, type FormEvent } from "react";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import {
  flexRender,
  getCoreRowModel,
  useReactTable,
  type ColumnDef,
  type VisibilityState,
} from "@tanstack/react-table";
import {
  DEVICE_CLASSES,
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
import { Link, setSearch, useTitle } from "../router.tsx";
import { Badge, ErrorNote, Loading, Scroll } from "../ui.tsx";

/** Filters the hub applies, by their query parameter. */
const FILTERS = [
  "site",
  "operationalStatus",
  "status",
  "deviceClass",
  "cordoned",
  "stale",
  "provisionState",
  "name",
] as const;
export const PAGE_SIZE = 100;

const COLUMNS: ColumnDef<DeviceBrief>[] = [
  {
    id: "name",
    header: "Name",
    cell: ({ row }) => <Link to={`/ui/devices/${row.original.id}`}>{row.original.name}</Link>,
    enableHiding: false,
  },
  { id: "site", header: "Site", accessorFn: (d) => d.site.slug },
  { id: "serial", header: "Serial", accessorFn: (d) => d.serial ?? "—" },
  {
    id: "operationalStatus",
    header: "Operational status",
    cell: ({ row }) => <Badge value={row.original.operationalStatus} />,
  },
  { id: "netboxStatus", header: "NetBox status", accessorFn: (d) => d.netboxStatus },
  { id: "provisionState", header: "Provision state", accessorFn: (d) => d.provisionState ?? "—" },
  { id: "cordoned", header: "Cordoned", accessorFn: (d) => (d.cordoned ? "yes" : "no") },
  { id: "stale", header: "Stale", accessorFn: (d) => (d.stale ? "yes" : "no") },
  { id: "updatedAt", header: "Updated", accessorFn: (d) => new Date(d.updatedAt).toLocaleString() },
];
const HIDEABLE = COLUMNS.filter((c) => c.enableHiding !== false).map((c) => [c.id!, String(c.header)] as const);
const DEFAULT_COLUMNS = ["site", "operationalStatus", "netboxStatus", "provisionState", "cordoned"];

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

export function Devices({ search }: { search: URLSearchParams }) {
  useTitle("Devices");
  const filters = Object.fromEntries(FILTERS.map((f) => [f, search.get(f) ?? ""])) as Record<
    (typeof FILTERS)[number],
    string
  >;
  const cursor = search.get("cursor") ?? undefined;
  const page = Number(search.get("page") ?? "1") || 1;
  const shown = search.get("cols")?.split(",").filter(Boolean) ?? DEFAULT_COLUMNS;
  const sort = sortOf(search);
  const sorted = sort && parseDeviceSort(sort);

  const sites = useQuery({ queryKey: ["sites"], queryFn: () => api<SiteList>("/api/v1/sites?limit=1000") });
  const path = `/api/v1/devices${query({ ...filters, sort, cursor, limit: PAGE_SIZE, brief: true })}`;
  const devices = useQuery({
    queryKey: ["devices", path],
    queryFn: () => api<DeviceBriefList>(path),
    placeholderData: keepPreviousData,
  });

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

  const shownKey = shown.join(",");
  const columnVisibility = useMemo<VisibilityState>(
    () => Object.fromEntries(HIDEABLE.map(([id]) => [id, shownKey.split(",").includes(id)])),
    [shownKey],
  );
  const table = useReactTable({
    data: devices.data?.items ?? [],
    columns: COLUMNS,
    state: { columnVisibility },
    getCoreRowModel: getCoreRowModel(),
    getRowId: (d) => d.id,
  });

  return (
    <>
      <h1>Devices</h1>
      <Filters filters={filters} sites={sites.data} onChange={update} />
      <ColumnChooser
        shown={shown}
        onChange={(cols) => update({ cols: cols.join(",") || "none" }, { keepPage: true })}
      />
      {devices.error ? <ErrorNote error={devices.error} /> : null}
      {!devices.data ? (
        <Loading />
      ) : (
        <>
          <p role="status" data-testid="device-count">
            {devices.data.count.toLocaleString()} {devices.data.count === 1 ? "device" : "devices"}
            {devices.data.count > PAGE_SIZE
              ? `, page ${page} of ${Math.ceil(devices.data.count / PAGE_SIZE).toLocaleString()}`
              : ""}
          </p>
          <Scroll label="Devices">
            <table className="devices" aria-busy={devices.isFetching}>
              <caption className="sr-only">Devices matching the filters</caption>
              <thead>
                {table.getHeaderGroups().map((g) => (
                  <tr key={g.id}>
                    {g.headers.map((h) => {
                      const label = flexRender(h.column.columnDef.header, h.getContext());
                      if (!isSortField(h.id))
                        return (
                          <th key={h.id} scope="col">
                            {label}
                          </th>
                        );
                      const dir = sorted?.field === h.id ? (sorted.desc ? "descending" : "ascending") : "none";
                      return (
                        <th key={h.id} scope="col" aria-sort={dir}>
                          <button
                            type="button"
                            className="sort"
                            onClick={() => update({ sort: nextSort(h.id as DeviceSortField, sort) })}
                          >
                            {label}
                            <span aria-hidden="true" className="sort-mark">
                              {dir === "ascending" ? " ▲" : dir === "descending" ? " ▼" : " ↕"}
                            </span>
                          </button>
                        </th>
                      );
                    })}
                  </tr>
                ))}
              </thead>
              <tbody>
                {table.getRowModel().rows.map((row) => (
                  <tr key={row.id}>
                    {row.getVisibleCells().map((cell) => (
                      <td key={cell.id}>{flexRender(cell.column.columnDef.cell, cell.getContext())}</td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </Scroll>
          <nav aria-label="Pages" className="pager">
            <button
              type="button"
              disabled={!cursor}
              onClick={() => update({ cursor: undefined, page: undefined }, { keepPage: true })}
            >
              First page
            </button>
            <button
              type="button"
              disabled={!devices.data.nextCursor}
              onClick={() =>
                update({ cursor: devices.data.nextCursor ?? undefined, page: String(page + 1) }, { keepPage: true })
              }
            >
              Next page
            </button>
          </nav>
        </>
      )}
    </>
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
      {select("operationalStatus", "Operational status", OPERATIONAL_STATUSES)}
      {select("status", "NetBox status", NETBOX_DEVICE_STATUSES)}
      {select("deviceClass", "Device class", DEVICE_CLASSES)}
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
