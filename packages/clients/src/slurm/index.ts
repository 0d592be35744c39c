/** The SLURM (slurmrestd) client: the client, what it takes and returns, its errors, hostlists. */
export * from "./slurm-client.ts";
export * from "./types.ts";
export { SLURM_ERRNO, SlurmApiError, SlurmUnavailableError, type SlurmErrorEntry } from "./errors.ts";
export { expandHostlist } from "./hostlist.ts";
export { canUpdateNode, type SlurmNodeUpdate } from "./versions.ts";
