/** The annotating sources, each with its adapter. */
import { BadRequest, type ReflectionSource } from "@fm/domain";
import type { Annotating } from "./adapter.ts";
import { health } from "./health.ts";
import { ironic } from "./ironic.ts";
import { slurm } from "./slurm.ts";

export { DeviceIndex, clearedOf, type Annotating, type Changes, type SourceAdapter } from "./adapter.ts";

/**
 * A push's items with their source's adapter. `items` must be what that source's item schema
 * (`itemSchemaFor`) parsed: the service parses every push before it gets here, so this is the one
 * place an item's type is taken on trust (each adapter is typed by its own item inside its file).
 */
export function annotationsFor(source: ReflectionSource, items: unknown[]): Annotating<unknown> {
  if (source === "ironic-overcloud" || source === "ironic-undercloud") {
    const instance = source === "ironic-overcloud" ? "overcloud" : "undercloud";
    return { source, adapter: ironic(instance), items };
  }
  if (source === "slurm") return { source, adapter: slurm, items };
  if (source === "health") return { source, adapter: health, items };
  throw new BadRequest("source_not_supported", `Source '${source}' has no annotation adapter`);
}
