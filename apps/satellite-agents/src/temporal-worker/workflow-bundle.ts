/**
 * Where the worker's workflow code comes from. The built worker (`npm run build`) ships the job
 * workflows already bundled for Temporal's sandbox, beside it in dist/; from source, the SDK
 * bundles ./workflows/ with webpack when the worker starts.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** The file name of the prebuilt workflow bundle in the built output (written by scripts/build.ts). */
export const WORKFLOW_BUNDLE_FILE = "workflow-bundle.js";

/** The module the worker bundles into Temporal's workflow sandbox when it runs from source. */
export const workflowsPath = fileURLToPath(new URL("./workflows/index.ts", import.meta.url));

/** Worker options naming the workflow code: the prebuilt bundle beside this module, else the sources. */
export function workflowCode(): { workflowBundle: { codePath: string } } | { workflowsPath: string } {
  const prebuilt = fileURLToPath(new URL(`./${WORKFLOW_BUNDLE_FILE}`, import.meta.url));
  return existsSync(prebuilt) ? { workflowBundle: { codePath: prebuilt } } : { workflowsPath };
}
