/**
 * Reads the hub's inventory snapshot (NDJSON) as it streams: each line parsed and validated
 * with the domain's schema as it arrives, so a reader holds one line at a time however large
 * the fleet. A stream that stops early (hub restart, proxy timeout) must not pass for a small
 * inventory: it is complete only when its `end` line arrives and counts what came before.
 */
import { InventorySnapshotLineSchema, type InventorySnapshotLine } from "@fm/domain";
import { describeParseError } from "../http/http.ts";

/** The snapshot stream stopped before its `end` line, or `end` counts other than what arrived. */
export class SnapshotTruncatedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SnapshotTruncatedError";
  }
}

export interface SnapshotStreamOptions {
  url: URL;
  fetch: typeof fetch;
  token: (() => Promise<string | undefined>) | undefined;
  onUnauthorized: (() => void) | undefined;
  signal: AbortSignal | undefined;
  /** The hub's refusal (4xx/5xx) as the client's error. */
  fail: (res: Response, text: string) => Error;
  unavailable: (cause: unknown) => Error;
}

async function open(o: SnapshotStreamOptions): Promise<Response> {
  for (let reauthenticated = false; ; reauthenticated = true) {
    const token = await o.token?.();
    let res: Response;
    try {
      res = await o.fetch(o.url, {
        headers: { accept: "application/x-ndjson", ...(token ? { authorization: `Bearer ${token}` } : {}) },
        ...(o.signal ? { signal: o.signal } : {}),
      });
    } catch (err) {
      if (o.signal?.aborted) throw err;
      throw o.unavailable(err);
    }
    if (res.ok && res.body) return res;
    const text = await res.text();
    // Once: a second 401 with a fresh token is a real refusal.
    if (res.status === 401 && o.onUnauthorized && !reauthenticated) {
      o.onUnauthorized();
      continue;
    }
    throw o.fail(res, text);
  }
}

function parseLine(text: string, n: number): InventorySnapshotLine {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new SnapshotTruncatedError(`snapshot line ${n} is not JSON (${describeParseError(err)})`);
  }
  const parsed = InventorySnapshotLineSchema.safeParse(doc);
  if (!parsed.success) throw new Error(`snapshot line ${n} does not match the contract: ${parsed.error.message}`);
  return parsed.data;
}

export async function* readSnapshotStream(o: SnapshotStreamOptions): AsyncGenerator<InventorySnapshotLine> {
  const res = await open(o);
  const decoder = new TextDecoder();
  let buffered = "";
  let n = 0;
  let resources = 0;
  let ended = false;
  const take = (text: string): InventorySnapshotLine | undefined => {
    if (text.trim() === "") return undefined;
    n++;
    if (ended) throw new SnapshotTruncatedError(`snapshot line ${n} follows the end line`);
    const line = parseLine(text, n);
    if (n === 1 && line.kind !== "snapshot")
      throw new SnapshotTruncatedError("snapshot does not start with its position");
    if (n > 1 && line.kind === "snapshot") throw new SnapshotTruncatedError(`snapshot line ${n} repeats the header`);
    if (line.kind === "end") {
      if (line.count !== resources)
        throw new SnapshotTruncatedError(`snapshot end counts ${line.count} resources but ${resources} arrived`);
      ended = true;
    } else if (line.kind !== "snapshot") resources++;
    return line;
  };
  try {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      buffered += decoder.decode(chunk, { stream: true });
      let nl: number;
      while ((nl = buffered.indexOf("\n")) >= 0) {
        const line = take(buffered.slice(0, nl));
        buffered = buffered.slice(nl + 1);
        if (line) yield line;
      }
    }
  } catch (err) {
    if (err instanceof SnapshotTruncatedError || o.signal?.aborted) throw err;
    if (err instanceof Error && err.message.startsWith("snapshot line")) throw err;
    throw new SnapshotTruncatedError(`snapshot stream broke after ${n} lines: ${(err as Error).message}`);
  }
  const last = take(buffered + decoder.decode());
  if (last) yield last;
  if (!ended) throw new SnapshotTruncatedError(`snapshot stream ended after ${n} lines without its end line`);
}
