import { describe, expect, it } from "vitest";
import { STALE_AFTER_MS, staleTestDatabases, templateComment } from "./postgres.ts";

const now = Date.UTC(2026, 11, 3, 12);
const at = (ms: number) => ms.toString(36);
const OURS = "fm_template_aaaaaaaaaaaa";

describe("which test databases a run may drop", () => {
  it("keeps another run's fresh databases, including its template being migrated, and drops left-overs", () => {
    const fresh = now - 60_000;
    const old = now - STALE_AFTER_MS - 60_000;
    const databases = [
      { datname: OURS, comment: templateComment(old) },
      { datname: `fm_t_${at(fresh)}_0123abcd`, comment: null },
      { datname: `fm_t_${at(old)}_0123abcd`, comment: null },
      { datname: `fm_template_bbbbbbbbbbbb_b_${at(fresh)}_4242`, comment: null },
      { datname: `fm_template_bbbbbbbbbbbb_b_${at(old)}_4242`, comment: null },
      { datname: "fm_template_cccccccccccc", comment: templateComment(fresh) },
      { datname: "fm_template_dddddddddddd", comment: templateComment(old) },
      { datname: "fm_template_eeeeeeeeeeee", comment: null },
      { datname: "fm_tenant_data", comment: null },
      { datname: "postgres", comment: null },
    ];
    expect(staleTestDatabases(databases, OURS, now).sort()).toEqual(
      [
        `fm_t_${at(old)}_0123abcd`,
        `fm_template_bbbbbbbbbbbb_b_${at(old)}_4242`,
        "fm_template_dddddddddddd",
        "fm_template_eeeeeeeeeeee",
      ].sort(),
    );
  });
});
