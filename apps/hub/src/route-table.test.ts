import { readFileSync } from "node:fs";
import { expect, it } from "vitest";
import { END, START, routeTableMarkdown } from "./route-table.ts";

it("the README's table of routes and scopes matches the routes' declarations (npm run docs:routes)", async () => {
  const readme = readFileSync(new URL("../../../README.md", import.meta.url), "utf8");
  const current = readme.slice(readme.indexOf(START), readme.indexOf(END) + END.length);
  const table = await routeTableMarkdown();
  expect(table).toContain("`POST /api/v1/satellites` | `fleet.admin`");
  expect(current).toBe(table);
});
