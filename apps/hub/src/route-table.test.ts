import { readFileSync } from "node:fs";
import { expect, it } from "vitest";
import { END, ROUTE_TABLE_FILE, START, routeTableMarkdown } from "./route-table.ts";

it("the table of routes and scopes in docs/api.md matches the routes' declarations (npm run docs:routes)", async () => {
  const doc = readFileSync(new URL(`../../../${ROUTE_TABLE_FILE}`, import.meta.url), "utf8");
  const current = doc.slice(doc.indexOf(START), doc.indexOf(END) + END.length);
  const table = await routeTableMarkdown();
  expect(table).toContain("`POST /api/v1/satellites` | `createSatellite` | `fleet.admin`");
  expect(current).toBe(table);
});
