/**
 * No import cycle between the hub's folders (testing/folder-graph.ts builds the graph): each module,
 * and each shared layer, can be read knowing only what it imports. The check is shown failing on a
 * seeded import that closes a loop.
 */
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { folderCycles, folderEdges, readSources } from "./testing/folder-graph.ts";

const HUB_SRC = fileURLToPath(new URL(".", import.meta.url));

describe("the hub's folders", () => {
  const sources = readSources(HUB_SRC);

  it("import each other without a cycle", () => {
    expect(folderCycles(sources)).toEqual([]);
  });

  it("are read from the real source: the modules, the layers below them, and the imports between", () => {
    const edges = folderEdges(sources);
    expect(edges.get("modules/devices")?.has("modules/discrepancies")).toBe(true);
    expect(edges.get("modules/sites")?.has("changes")).toBe(true);
    expect(edges.get("changes")?.has("db")).toBe(true);
    expect([...(edges.get("changes")?.keys() ?? [])].filter((f) => f.startsWith("modules/"))).toEqual([]);
  });

  it("report a seeded import that closes a loop, with the imports that close it", () => {
    const seeded = new Map(sources);
    seeded.set(
      "modules/discrepancies/seeded.ts",
      'import type { DeviceService } from "../devices/service.ts";\nexport type X = DeviceService;',
    );
    const [cycle, ...others] = folderCycles(seeded);
    expect(others).toEqual([]);
    expect(cycle!.folders).toEqual(["modules/devices", "modules/discrepancies"]);
    expect(cycle!.imports).toContain("modules/discrepancies/seeded.ts -> modules/devices/service.ts");
    expect(cycle!.imports).toContain("modules/devices/service.ts -> modules/discrepancies/public.ts");
  });

  it("report a cycle through a shared layer, as the recorder's import of the feed module was", () => {
    const seeded = new Map(sources);
    seeded.set("changes/seeded.ts", 'export { feedRepo } from "../modules/feed/repo.ts";');
    expect(folderCycles(seeded).map((c) => c.folders)).toContainEqual(
      expect.arrayContaining(["changes", "modules/feed"]),
    );
  });
});
