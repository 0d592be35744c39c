/** NetBox 4.5 response shapes (sources in fixtures/netbox/SOURCES.md), for tests that parse them. */
import { readFileSync, readdirSync } from "node:fs";

export const NETBOX_FIXTURES = new URL("../fixtures/netbox/", import.meta.url);

/** Names of every fixture file. */
export const netboxFixtureNames = (): string[] => readdirSync(NETBOX_FIXTURES).filter((f) => f.endsWith(".json"));

/** One fixture, parsed. */
export const netboxFixture = (name: string): Record<string, unknown> =>
  JSON.parse(readFileSync(new URL(name, NETBOX_FIXTURES), "utf8")) as Record<string, unknown>;
