/** What the jobs list and one job's page share: the poll interval while jobs are active, the progress bar. */

/** How often an active job (or a list holding one) is read again. */
export const POLL_MS = 2000;

export function Progress({ value, label }: { value: number; label: string }) {
  return (
    <span className="progress">
      <progress max={1} value={value} aria-label={label} /> {Math.round(value * 100)} %
    </span>
  );
}
