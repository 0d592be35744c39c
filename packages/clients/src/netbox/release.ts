/** NetBox releases, as /api/status/ names them ("4.5.3", "4.5.0-Docker-3.4.2"). */

/** Is `version` this release or later? An unparsable version counts as the newest. */
export function netboxReleaseAtLeast(version: string, release: string): boolean {
  const parse = (v: string) =>
    /^(\d+)\.(\d+)(?:\.(\d+))?/
      .exec(v)
      ?.slice(1, 4)
      .map((x) => Number(x ?? 0));
  const a = parse(version);
  const b = parse(release)!;
  if (!a) return true;
  for (let k = 0; k < 3; k++) if (a[k] !== b[k]) return a[k]! > b[k]!;
  return true;
}
