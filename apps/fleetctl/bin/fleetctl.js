#!/usr/bin/env node
// The `fleetctl` command: the sources under tsx (a workspace checkout needs no build step).
// The built CLI, `npm run build` then `node apps/fleetctl/dist/fleetctl.js`, starts faster.
import { register } from "tsx/esm/api";

register();
await import("../src/main.ts");
