/**
 * Bare-metal deploys for tests (`@fm/test-support/ipa`): a machine behind a test Redfish BMC that
 * PXE-boots an ironic-python-agent stand-in (ipa/machine.ts, ipa/agent.ts, ipa/SOURCES.md).
 */
export * from "./ipa/agent.ts";
export * from "./ipa/disk.ts";
export * from "./ipa/files.ts";
export * from "./ipa/machine.ts";
