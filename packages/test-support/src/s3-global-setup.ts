/** One S3 server per test run (vitest globalSetup), its address provided to the tests as `s3`. */
import type { TestProject } from "vitest/node";
import { startS3 } from "./s3.ts";

export default async function setup(project: TestProject) {
  const s3 = await startS3();
  const { stop, ...endpoint } = s3;
  project.provide("s3", endpoint);
  return stop;
}
