/** A Content-Security-Policy header as its directives: `default-src 'none'; …` → {"default-src": ["'none'"], …}. */
export const cspDirectives = (csp: unknown): Record<string, string[]> =>
  Object.fromEntries(
    String(csp ?? "")
      .split(";")
      .map((d) => d.trim().split(/\s+/))
      .filter((d) => d[0])
      .map(([k, ...v]) => [k, v]),
  );
