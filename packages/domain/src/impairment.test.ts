import { describe, expect, it } from "vitest";
import { planImpairment, type ImpairmentDevice } from "./impairment.ts";

const NOW = new Date("2026-12-03T12:00:00Z");
const ago = (min: number) => new Date(NOW.getTime() - min * 60_000);
const policy = { cordonAfterMs: 10 * 60_000, releaseAfterMs: 30 * 60_000, maxSiteFraction: 0.2 };
const device = (id: string, over: Partial<ImpairmentDevice> = {}): ImpairmentDevice => ({
  id,
  name: `gpu-${id}`,
  healthStatus: "ok",
  healthSince: ago(600),
  failing: [],
  cordoned: false,
  cordonSource: null,
  ...over,
});
const site = (...special: ImpairmentDevice[]) => [
  ...special,
  ...Array.from({ length: 10 - special.length }, (_, n) => device(`ok${n}`)),
];

describe("planImpairment", () => {
  it("cordons a device critical for the whole window, naming its conditions; not one critical for less", () => {
    const plan = planImpairment(
      site(
        device("a", { healthStatus: "critical", healthSince: ago(10), failing: ["GpuXidErrors", "GpuMissing"] }),
        device("b", { healthStatus: "critical", healthSince: ago(9) }),
        device("c", { healthStatus: "warning", healthSince: ago(60) }),
      ),
      policy,
      NOW,
    );
    expect(plan).toEqual({
      cordon: [
        {
          id: "a",
          name: "gpu-a",
          reason: "impairment: GpuXidErrors, GpuMissing critical since 2026-12-03T11:50:00.000Z",
        },
      ],
      release: [],
      held: null,
    });
  });

  it("never takes over or releases an operator's cordon", () => {
    const plan = planImpairment(
      site(
        device("op-critical", {
          healthStatus: "critical",
          healthSince: ago(60),
          cordoned: true,
          cordonSource: "operator",
        }),
        device("op-healthy", { healthStatus: "ok", healthSince: ago(600), cordoned: true, cordonSource: "operator" }),
      ),
      policy,
      NOW,
    );
    expect(plan).toEqual({ cordon: [], release: [], held: null });
  });

  it("releases its own cordon after the device has been ok for the release window, not before", () => {
    const plan = planImpairment(
      site(
        device("healed", { healthSince: ago(30), cordoned: true, cordonSource: "impairment" }),
        device("healing", { healthSince: ago(29), cordoned: true, cordonSource: "impairment" }),
        device("warning", {
          healthStatus: "warning",
          healthSince: ago(60),
          cordoned: true,
          cordonSource: "impairment",
        }),
      ),
      policy,
      NOW,
    );
    expect(plan.release).toEqual([{ id: "healed", name: "gpu-healed" }]);
  });

  it("holds the site instead of cordoning past the limit, counting its cordons already made", () => {
    const critical = (id: string) => device(id, { healthStatus: "critical", healthSince: ago(15) });
    // 10 devices, 20%: 2 impairment cordons at most.
    expect(planImpairment(site(critical("a"), critical("b")), policy, NOW).cordon).toHaveLength(2);
    const plan = planImpairment(
      site(
        critical("a"),
        critical("b"),
        device("held", { healthStatus: "critical", healthSince: ago(60), cordoned: true, cordonSource: "impairment" }),
      ),
      policy,
      NOW,
    );
    expect(plan.cordon).toEqual([]);
    expect(plan.held).toMatchObject({ due: 2, limit: 2 });
    expect(plan.held!.message).toMatch(/3 impairment cordons would exceed 2 \(20% of 10 devices\)/);
  });
});

describe("planImpairment at its edges", () => {
  const at = (ms: number) => new Date(NOW.getTime() - ms);
  it("cordons at the window exactly, not half a second before it", () => {
    const critical = (id: string, ms: number) => device(id, { healthStatus: "critical", healthSince: at(ms) });
    const plan = planImpairment(
      site(critical("on", policy.cordonAfterMs), critical("early", policy.cordonAfterMs - 500)),
      policy,
      NOW,
    );
    expect(plan.cordon.map((c) => c.id)).toEqual(["on"]);
  });
  it("the site limit rounds down: 10 devices at 15 % allow one impairment cordon, not two", () => {
    const two = [0, 1].map((n) => device(`c${n}`, { healthStatus: "critical", healthSince: ago(11) }));
    const plan = planImpairment(site(...two), { ...policy, maxSiteFraction: 0.15 }, NOW);
    expect(plan.cordon).toEqual([]);
    expect(plan.held).toMatchObject({ due: 2, limit: 1 });
  });
  it("a release in the same plan frees its place under the limit for a new cordon", () => {
    // Limit 2 of 10: two impairment cordons, one of them due for release, and one device due.
    const plan = planImpairment(
      site(
        device("held", { healthStatus: "critical", healthSince: ago(60), cordoned: true, cordonSource: "impairment" }),
        device("healed", { healthStatus: "ok", healthSince: ago(31), cordoned: true, cordonSource: "impairment" }),
        device("due", { healthStatus: "critical", healthSince: ago(11) }),
      ),
      policy,
      NOW,
    );
    expect(plan).toMatchObject({ release: [{ id: "healed" }], cordon: [{ id: "due" }], held: null });
  });
});
