/**
 * What an annotating source (Ironic, SLURM, health) tells the reflection: which device columns it
 * writes, how an item of its push finds its device, and what the item makes of that device's
 * fields. One file per source beside this one; `annotationsFor` pairs a source with its items.
 */
import type { ReflectionSource } from "@fm/domain";
import type { BulkColumn, DeviceService } from "../../devices/public.ts";
import type { AnnotatedDevice } from "../repo.ts";

/** A device's new fields, as the device writer applies them. */
export type Changes = Parameters<DeviceService["apply"]>[3];

export interface SourceAdapter<Item> {
  /** Every device column this source writes (its fields, and its observed-at). */
  columns: readonly BulkColumn[];
  /** The item as the push result names it when it matches no device. */
  key(item: Item): string;
  match(item: Item, devices: DeviceIndex): AnnotatedDevice | undefined;
  /** The device's new fields; `device` and `observedAt` for fields that depend on what it was. */
  changes(item: Item, device: AnnotatedDevice, observedAt: Date): Changes;
  /** Whether the source listed the device before (a device it no longer lists is then cleared). */
  observedBefore(d: AnnotatedDevice): boolean;
  observedField: "ironicObservedAt" | "slurmObservedAt" | "healthObservedAt";
  /** The Ironic node UUID an item carries: unique in the fleet, so another site may hold it. */
  nodeUuid?(item: Item): string;
  /**
   * Whether a push decides the discrepancies of devices the source has never reported (Ironic:
   * a NetBox-active device without an Ironic node), whatever path brought those devices in.
   */
  judgesUnreported?: true;
}

/** A site's devices by every key a source matches on. */
export class DeviceIndex {
  readonly byName = new Map<string, AnnotatedDevice>();
  readonly byNode = new Map<string, AnnotatedDevice>();
  readonly bySerial = new Map<string, AnnotatedDevice>();
  readonly bySlurm = new Map<string, AnnotatedDevice>();
  constructor(readonly all: AnnotatedDevice[]) {
    for (const d of all) {
      this.byName.set(d.name, d);
      if (d.ironicNodeUuid) this.byNode.set(d.ironicNodeUuid, d);
      if (d.serial) this.bySerial.set(d.serial, d);
      if (d.slurmNodeName) this.bySlurm.set(d.slurmNodeName, d);
    }
  }
}

/** A source's fields as they are once it no longer lists the device: unset (empty lists). */
export const clearedOf = (columns: readonly BulkColumn[]): Changes =>
  Object.fromEntries(columns.map((c) => [c.field, c.type.endsWith("[]") ? [] : null]));

/** An adapter with the items of one push, typed alike (each source's items differ). */
export interface Annotating<Item = unknown> {
  source: Exclude<ReflectionSource, "netbox">;
  adapter: SourceAdapter<Item>;
  items: Item[];
}
