/** GET /api/status/: the keys of NetBox's StatusView (SOURCES.md S9; fixture status.json). */

/** The NetBox release this server answers as. */
export const NETBOX_VERSION = "4.5.0";
/** The `API-Version` header: NetBox's major.minor. */
export const API_VERSION = "4.5";
export const PYTHON_VERSION = "3.12.3";

export function statusBody(): Record<string, unknown> {
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
    "netbox-version": NETBOX_VERSION,
    "netbox-full-version": NETBOX_VERSION,
    plugins: {},
    "python-version": PYTHON_VERSION,
    "rq-workers-running": 1,
  };
}
