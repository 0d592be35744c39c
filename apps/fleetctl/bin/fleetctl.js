#!/usr/bin/env node
// The `fleetctl` command. In a checkout (the sources beside it): the sources under tsx, so a
// workspace needs no build step and never runs a stale build. Installed from the packed tarball
// (no sources, no tsx): the built CLI in dist/.
import { existsSync } from "node:fs";

if (existsSync(new URL("../src/main.ts", import.meta.url))) {
  const { register } = await import("tsx/esm/api");
  register();
  await import("../src/main.ts");
} else {
  await import("../dist/fleetctl.js");
}
