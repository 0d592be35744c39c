/**
 * Idempotent writes: each reads first and sends nothing when NetBox already has the value, so a
 * repeat neither bumps last_updated nor adds a change record. Read and write are not atomic;
 * the PATCH carries the whole new value, so it may be retried.
 */
import { NetboxMissingTagsError, NetboxUndefinedCustomFieldError } from "./errors.ts";
import type { NetboxClient } from "./netbox-client.ts";
import { NetboxDeviceSchema, NetboxInterfaceSchema, type NetboxDevice, type NetboxInterface } from "./schemas.ts";

export interface NetboxWriteResult<T> {
  /** False when NetBox already had the value: nothing was sent and no change was logged. */
  changed: boolean;
  object: T;
}

export async function setDeviceStatus(
  client: NetboxClient,
  id: number,
  status: string,
): Promise<NetboxWriteResult<NetboxDevice>> {
  const device = await client.device(id);
  if (device.status.value === status) return { changed: false, object: device };
  return { changed: true, object: await client.patch("dcim/devices", id, NetboxDeviceSchema, { status }) };
}

export async function setPlatformClass(
  client: NetboxClient,
  id: number,
  value: string | null,
): Promise<NetboxWriteResult<NetboxDevice>> {
  const device = await client.device(id);
  // NetBox lists every custom field defined for the object type (null when unset). One it does
  // not list is undefined: NetBox >= 4.4.10 would drop it from the PATCH and answer 200 (4.2
  // answered 400), so it is refused here, by name.
  if (!("platform_class" in device.custom_fields))
    throw new NetboxUndefinedCustomFieldError("platform_class", "dcim.device");
  if (device.custom_fields.platform_class === value) return { changed: false, object: device };
  // A PATCH of custom_fields merges into the stored ones: other custom fields are kept.
  const object = await client.patch("dcim/devices", id, NetboxDeviceSchema, {
    custom_fields: { platform_class: value },
  });
  // Deleted between the read and the PATCH: NetBox answered 200 without storing it.
  if (object.custom_fields.platform_class !== value)
    throw new NetboxUndefinedCustomFieldError("platform_class", "dcim.device");
  return { changed: true, object };
}

export async function addDeviceTags(
  client: NetboxClient,
  id: number,
  tags: ReadonlyArray<string | number>,
): Promise<NetboxWriteResult<NetboxDevice>> {
  const slugs = [...new Set(tags.filter((t): t is string => typeof t === "string"))];
  const ids = [...new Set(tags.filter((t): t is number => typeof t === "number"))];
  const [bySlug, byId] = await Promise.all([
    slugs.length ? client.tags({ slug: slugs }) : [],
    ids.length ? client.tags({ id: ids }) : [],
  ]);
  const missing = [
    ...slugs.filter((s) => !bySlug.some((t) => t.slug === s)),
    ...ids.filter((i) => !byId.some((t) => t.id === i)),
  ];
  if (missing.length) throw new NetboxMissingTagsError(missing);
  const device = await client.device(id);
  const current = device.tags.map((t) => t.id);
  const wanted = [...new Set([...bySlug, ...byId].map((t) => t.id))];
  const added = wanted.filter((t) => !current.includes(t));
  if (!added.length) return { changed: false, object: device };
  return {
    changed: true,
    object: await client.patch("dcim/devices", id, NetboxDeviceSchema, { tags: [...current, ...added] }),
  };
}

export async function setInterfaceLabel(
  client: NetboxClient,
  id: number,
  label: string,
): Promise<NetboxWriteResult<NetboxInterface>> {
  const iface = await client.interface(id);
  if (iface.label === label) return { changed: false, object: iface };
  return { changed: true, object: await client.patch("dcim/interfaces", id, NetboxInterfaceSchema, { label }) };
}
