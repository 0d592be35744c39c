/**
 * The hub's source as a graph of folders: `modules/<m>` for each module, and each top-level folder or
 * file of `src/` (`db`, `lib`, `changes`, `plugins`, `app`, …) for the rest. An edge a → b is a
 * relative import (type-only included: it couples the two just as much) from a non-test file in a
 * to a file in b. Tests are left out: a test may reach across to drive what it tests, and the
 * harness in `testing/` starts the whole app. Cycles are the strongly connected components
 * (Tarjan's algorithm), each given with the imports that close it.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import ts from "typescript";

/** Source text by path relative to the root (`modules/devices/service.ts`). */
export type Sources = Map<string, string>;

export interface FolderCycle {
  folders: string[];
  /** `from.ts -> to.ts` for each import between two folders of the cycle. */
  imports: string[];
}

const isTest = (path: string) => /\.test\.tsx?$/.test(path);

export function readSources(root: string): Sources {
  const sources: Sources = new Map();
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== "generated") walk(path);
      } else if (/\.tsx?$/.test(entry.name) && !isTest(entry.name))
        sources.set(relative(root, path).split(sep).join("/"), readFileSync(path, "utf8"));
    }
  };
  walk(root);
  return sources;
}

export function folderOf(path: string): string {
  const parts = path.split("/");
  return parts[0] === "modules" && parts.length > 2 ? `modules/${parts[1]}` : parts[0]!.replace(/\.tsx?$/, "");
}

/** Folder -> folder -> the imports that make the edge. */
export function folderEdges(sources: Sources): Map<string, Map<string, string[]>> {
  const edges = new Map<string, Map<string, string[]>>();
  for (const [path, text] of sources) {
    if (isTest(path)) continue;
    for (const { fileName } of ts.preProcessFile(text, true, true).importedFiles) {
      if (!fileName.startsWith(".")) continue;
      const target = relative("/", resolve("/", dirname(path), fileName));
      const [from, to] = [folderOf(path), folderOf(target)];
      if (from === to || to === "generated") continue;
      const out = edges.get(from) ?? new Map<string, string[]>();
      out.set(to, [...(out.get(to) ?? []), `${path} -> ${target}`]);
      edges.set(from, out);
    }
  }
  return edges;
}

export function folderCycles(sources: Sources): FolderCycle[] {
  const edges = folderEdges(sources);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: FolderCycle[] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v)?.keys() ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length < 2) return;
    const folders = component.sort();
    const imports = folders.flatMap((a) =>
      [...(edges.get(a) ?? [])].filter(([b]) => folders.includes(b)).flatMap(([, paths]) => paths),
    );
    cycles.push({ folders, imports: imports.sort() });
  };
  for (const v of [...edges.keys()].sort()) if (!index.has(v)) visit(v);
  return cycles;
}
