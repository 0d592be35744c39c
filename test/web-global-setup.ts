/**
 * The browser tests need the built UI the hub serves: built here once per run unless
 * apps/web/dist is newer than its sources (a few seconds to check, about 20 s to build).
 */
import { ensureWebBuilt } from "../scripts/build-web.ts";

export default async function setup(): Promise<void> {
  await ensureWebBuilt();
}
