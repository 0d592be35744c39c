/**
 * What "live" means in the UI: a live view asks the hub again on an interval (TanStack Query's
 * `refetchInterval: LIVE_REFRESH_MS`) and says how old what it shows is, so a person never
 * mistakes an old page for the fleet as it is.
 */
import { useEffect, useState } from "react";
import { age } from "./ui.tsx";

/** How often a live view asks the hub again, in milliseconds. */
export const LIVE_REFRESH_MS = 10_000;

/** The current time, renewed every `everyMs`, so an age on the page keeps counting. */
export function useNow(everyMs = 1000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), everyMs);
    return () => clearInterval(t);
  }, [everyMs]);
  return now;
}

/**
 * "Updated 4 s ago" for a query's `dataUpdatedAt` (milliseconds since the epoch; 0 before the first
 * answer), and whether the last refresh failed (the page then still shows the older data).
 */
export function Updated({ at, failed }: { at: number; failed?: boolean }) {
  const now = useNow();
  if (!at) return null;
  return (
    <p className={failed ? "updated stale" : "updated"} data-testid="updated">
      Updated {age((now - at) / 1000)}
      {failed ? " · the last refresh failed" : ""}
    </p>
  );
}
