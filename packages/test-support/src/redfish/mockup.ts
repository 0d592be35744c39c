/**
 * The DMTF public-rackmount1 mock-up resources (./mockup/, see SOURCES.md there), keyed by their
 * `@odata.id` without a trailing slash, as the Redfish-Mockup-Server serves them.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

const ROOT = join(import.meta.dirname, "mockup");

export const SYSTEM_ID = "437XR1138R2";
export const SYSTEM_PATH = `/redfish/v1/Systems/${SYSTEM_ID}`;

let cached: Map<string, unknown> | undefined;

/** A fresh copy of every resource (callers may change what they are given). */
export function loadMockup(): Map<string, unknown> {
  cached ??= read();
  return new Map([...cached].map(([k, v]) => [k, structuredClone(v)]));
}

function read(): Map<string, unknown> {
  const out = new Map<string, unknown>();
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (name === "index.json") {
        const body = JSON.parse(readFileSync(p, "utf8")) as { "@odata.id": string };
        out.set(body["@odata.id"].replace(/\/+$/, ""), body);
      }
    }
  };
  walk(ROOT);
  return out;
}
