// `npm run docs:routes`: rewrites the generated table of routes and scopes in docs/api.md.
import { readFileSync, writeFileSync } from "node:fs";
import { END, ROUTE_TABLE_FILE, START, routeTableMarkdown } from "../apps/hub/src/route-table.ts";

const doc = readFileSync(ROUTE_TABLE_FILE, "utf8");
const table = await routeTableMarkdown();
const start = doc.indexOf(START);
const end = doc.indexOf(END);
if (start < 0 || end < 0) throw new Error(`${ROUTE_TABLE_FILE} has no routes table markers`);
writeFileSync(ROUTE_TABLE_FILE, doc.slice(0, start) + table + doc.slice(end + END.length));
console.log(`${ROUTE_TABLE_FILE}: routes table updated`);
process.exit(0);
