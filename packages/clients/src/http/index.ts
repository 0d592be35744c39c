/** What every client shares: the retry loop with its verdicts, and errors in words. */
export * from "./http.ts";
