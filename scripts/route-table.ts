// `npm run docs:routes`: rewrites the README's generated table of routes and scopes.
import { readFileSync, writeFileSync } from "node:fs";
import { END, START, routeTableMarkdown } from "../apps/hub/src/route-table.ts";

const readme = readFileSync("README.md", "utf8");
const table = await routeTableMarkdown();
const start = readme.indexOf(START);
const end = readme.indexOf(END);
if (start < 0 || end < 0) throw new Error("README.md has no routes table markers");
writeFileSync("README.md", readme.slice(0, start) + table + readme.slice(end + END.length));
console.log("README.md routes table updated");
process.exit(0);
