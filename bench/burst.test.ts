import { describe, expect, it } from "vitest";
import { appProgressing, appReady, burstTargets } from "./burst.ts";

// The status a first tick leaves on an App of Flux's shape: the Deployment not yet observed.
const progressing = {
  healthStatus: "Progressing",
  conditions: [
    {
      type: "Ready",
      status: "False",
      reason: "Progressing",
      message: "Deployment podinfo-0app: waiting for the controller to observe generation 1",
    },
  ],
};
const ready = {
  healthStatus: "Healthy",
  conditions: [{ type: "Ready", status: "True", reason: "Succeeded" }],
};
const failed = {
  healthStatus: "Unknown",
  conditions: [{ type: "Ready", status: "False", reason: "HostConflict" }],
};

describe("burst: when another tick pass is needed", () => {
  it("an App whose Deployment is still Progressing waits for another pass", () => {
    expect(appProgressing(progressing)).toBe(true);
    expect(appReady(progressing)).toBe(false);
    // Only the Ready reason says so (health not written yet).
    expect(appProgressing({ conditions: progressing.conditions })).toBe(true);
  });

  it("a Ready App, a failed App and an App never run do not", () => {
    expect(appProgressing(ready)).toBe(false);
    expect(appReady(ready)).toBe(true);
    expect(appProgressing(failed)).toBe(false);
    expect(appReady(failed)).toBe(false);
    expect(appProgressing(undefined)).toBe(false);
  });
});

describe("burst targets", () => {
  const figure = {
    apps: 100,
    shards: 2,
    passes: 2,
    wallMs: 90_000,
    cpuMs: 20_000,
    peakMiB: [150, 180],
    requests: 2000,
    requestsPerS: 2000 / 90,
    throttled: 0,
    ready: 100,
    objects: 400,
    outcomes: {},
    errors: [],
  };
  it("passes wall and requests, misses a shard over 175 MiB", () => {
    expect(burstTargets([figure]).map((t) => t.pass)).toEqual([true, false, true]);
  });
  it("an App not Ready misses the wall target; one 429 misses the requests target", () => {
    const t = burstTargets([{ ...figure, ready: 99, throttled: 1 }]);
    expect(t[0]!.measured).toBe("90.0 s, 99/100 Ready, 400/400 objects owned");
    expect(t.map((x) => x.pass)).toEqual([false, false, false]);
  });
});
