/**
 * GET /api/status/: the keys of NetBox's StatusView (SOURCES.md S9; fixture status.json), and the
 * NetBox release the server answers as. The release decides a few behaviours that changed
 * between 4.2 and 4.5.3 (authentication, the change-log type filter, undefined custom fields);
 * each place that depends on it says which release changed what.
 */

/** The NetBox release this server answers as unless told otherwise. */
export const NETBOX_VERSION = "4.5.0";
export const PYTHON_VERSION = "3.12.3";

/** A NetBox release as `[major, minor, patch]`. */
export type NetboxRelease = readonly [number, number, number];

export function parseRelease(version: string): NetboxRelease {
  const m = /^(\d+)\.(\d+)(?:\.(\d+))?/.exec(version);
  if (!m) throw new Error(`not a NetBox release: '${version}'`);
  return [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)];
}

/** Is `release` this version or later? */
export function atLeast(release: NetboxRelease, version: string): boolean {
  const other = parseRelease(version);
  for (let k = 0; k < 3; k++) if (release[k] !== other[k]) return release[k]! > other[k]!;
  return true;
}

/** The `API-Version` header: NetBox's major.minor. */
export const apiVersion = (release: NetboxRelease) => `${release[0]}.${release[1]}`;

export function statusBody(version: string): Record<string, unknown> {
  return {
    "django-version": "5.2.8",
    hostname: "netbox-test",
    installed_apps: {
      django_filters: "25.2",
      django_rq: "3.1",
      drf_spectacular: "0.29.0",
      mptt: "0.18.0",
      rest_framework: "3.16.1",
      taggit: "6.1.0",
      timezone_field: "7.1",
    },
    "netbox-version": version,
    "netbox-full-version": version,
    plugins: {},
    "python-version": PYTHON_VERSION,
    "rq-workers-running": 1,
  };
}
