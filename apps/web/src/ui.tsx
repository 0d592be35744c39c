/** Small pieces every view uses. */
import { Component, useState, useSyncExternalStore, type ReactNode } from "react";
import { ApiError, hubReachable, onReachabilityChange, probeHub } from "./api.ts";

export function ErrorNote({ error, message }: { error?: unknown; message?: string }) {
  const text =
    message ??
    (error instanceof ApiError
      ? `${error.detail}${error.code ? ` (${error.code})` : ""}`
      : error instanceof Error
        ? error.message
        : String(error));
  return (
    <p role="alert" className="error">
      {text}
    </p>
  );
}

/**
 * Shown while the hub cannot be reached: says so, and offers to try now. It goes away by itself
 * when the hub answers again (the UI keeps asking every few seconds).
 */
export function HubBanner() {
  const reachable = useSyncExternalStore(onReachabilityChange, hubReachable);
  const [trying, setTrying] = useState(false);
  if (reachable) return null;
  return (
    <div role="alert" className="hub-banner" data-testid="hub-banner">
      <span>The hub cannot be reached. The page shows what it last loaded; it tries again every few seconds.</span>
      <button
        type="button"
        disabled={trying}
        onClick={() => {
          setTrying(true);
          void probeHub().finally(() => setTrying(false));
        }}
      >
        {trying ? "Retrying…" : "Retry"}
      </button>
    </div>
  );
}

/** "Loading…", or, while the hub cannot be reached, that the page waits for it (the banner says why). */
export function Loading() {
  const reachable = useSyncExternalStore(onReachabilityChange, hubReachable);
  return <p aria-busy="true">{reachable ? "Loading…" : "Waiting for the hub to answer."}</p>;
}

/**
 * 50,000: a count with its digits grouped by three, as the en-US locale writes it, without Intl.
 * A page's first Intl call (`toLocaleString`) loads the locale's data: about 80 ms of a fresh tab's
 * main thread here, most of the devices view's first drawing (CPU profile, docs/benchmarks.md).
 */
export const formatCount = (n: number): string =>
  Number.isInteger(n) ? String(n).replace(/\B(?=(\d{3})+$)/g, ",") : String(n);

export const when = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString() : "—");

/** "5 min ago" for ages the eye compares. */
export function ago(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return "never";
  return age((now - Date.parse(iso)) / 1000);
}
export function age(seconds: number): string {
  if (seconds < 90) return `${Math.max(0, Math.round(seconds))} s ago`;
  if (seconds < 5400) return `${Math.round(seconds / 60)} min ago`;
  if (seconds < 172_800) return `${Math.round(seconds / 3600)} h ago`;
  return `${Math.round(seconds / 86_400)} d ago`;
}

export function Badge({ value, kind }: { value: string; kind?: "good" | "bad" | "warn" | "neutral" }) {
  return <span className={`badge ${kind ?? badgeKind(value)}`}>{value}</span>;
}
const GOOD = /^(AVAILABLE|ALLOCATED|SUCCEEDED|True|ok|active|False-ok)$/;
const BAD = /^(FAILED|FAULT|ERROR|critical|offline|CANCELLED)$/;
const badgeKind = (v: string) => (GOOD.test(v) ? "good" : BAD.test(v) ? "bad" : "neutral");

export function Section({ title, children, id }: { title: string; children: ReactNode; id?: string }) {
  const headingId = `${id ?? title.toLowerCase().replace(/\W+/g, "-")}-h`;
  return (
    <section aria-labelledby={headingId}>
      <h2 id={headingId}>{title}</h2>
      {children}
    </section>
  );
}

/**
 * A wide table's box, scrolling sideways on a narrow window. Focusable, so a keyboard can scroll
 * it too (WCAG 2.1.1), and named for what it holds.
 */
export function Scroll({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="scroll" tabIndex={0} role="region" aria-label={label}>
      {children}
    </div>
  );
}

/**
 * Catches what a view throws while rendering, so one broken page shows its error and a way on
 * instead of blanking the whole app. Keyed by the path where it wraps a view, so navigating
 * elsewhere renders afresh.
 */
export class ErrorBoundary extends Component<{ children: ReactNode }, { error: unknown }> {
  override state: { error: unknown } = { error: undefined };
  static getDerivedStateFromError(error: unknown) {
    return { error: error ?? new Error("The page failed to render") };
  }
  override render() {
    if (this.state.error === undefined) return this.props.children;
    return (
      <section className="stack">
        <h1>This page failed</h1>
        <ErrorNote error={this.state.error} />
        <p>
          <a href="/ui/">Go to the overview</a>
        </p>
      </section>
    );
  }
}
