import { describe, expect, it } from "vitest";
import type { InventoryEntry } from "../app/index.ts";
import { type KubeObject, refKey, refOf } from "../core/index.ts";
import { finishedJobs, hasTtl, markFinished, unchangedTtlJobs } from "./finished.ts";

const job = (name: string, ttl?: number): KubeObject => ({
  apiVersion: "batch/v1",
  kind: "Job",
  metadata: { name, namespace: "team-a" },
  spec: { ...(ttl === undefined ? {} : { ttlSecondsAfterFinished: ttl }), template: {} },
});
const migrate = job("migrate", 0);
const once = job("once");
const cm: KubeObject = {
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name: "c", namespace: "team-a" },
};
const hook = (o: KubeObject, policy: string): KubeObject => ({
  ...o,
  metadata: {
    ...o.metadata,
    annotations: { "helm.sh/hook": "pre-upgrade", "helm.sh/hook-delete-policy": policy },
  },
});
const migration = hook(once, "hook-succeeded");
const hookCm = hook(cm, "hook-succeeded");
const key = (o: KubeObject) => refKey(refOf(o));
const entry = (o: KubeObject, hash?: string, finished?: boolean): InventoryEntry => ({
  ...refOf(o),
  ...(hash ? { hash } : {}),
  ...(finished ? { finished } : {}),
});
const hashes = (...pairs: Array<[KubeObject, string]>) =>
  new Map(pairs.map(([o, h]) => [key(o), h]));
const live = (...objects: KubeObject[]) => new Map(objects.map((o) => [key(o), o]));
const render = (objects: KubeObject[], h: Map<string, string>) => ({ objects, hashes: h });

describe("hasTtl", () => {
  it("is a batch Job with ttlSecondsAfterFinished, zero included", () => {
    expect([migrate, job("x", 60), once, cm].map(hasTtl)).toEqual([true, true, false, false]);
  });
});

describe("finishedJobs", () => {
  it.each<
    [
      string,
      InventoryEntry[],
      Map<string, KubeObject>,
      ReturnType<typeof render> | undefined,
      KubeObject[],
    ]
  >([
    [
      "a TTL Job applied in its rendered form and gone: finished",
      [entry(migrate, "j1")],
      live(),
      render([migrate], hashes([migrate, "j1"])),
      [migrate],
    ],
    [
      "still live: not finished",
      [entry(migrate, "j1")],
      live(migrate),
      render([migrate], hashes([migrate, "j1"])),
      [],
    ],
    [
      "its rendered form changed: not finished (the new Job is due)",
      [entry(migrate, "j1", true)],
      live(),
      render([migrate], hashes([migrate, "j2"])),
      [],
    ],
    [
      "a Job without a TTL that is gone was deleted: not finished",
      [entry(once, "o1")],
      live(),
      render([once], hashes([once, "o1"])),
      [],
    ],
    [
      "an entry without a hash (never applied by this version): not finished",
      [entry(migrate)],
      live(),
      render([migrate], hashes([migrate, "j1"])),
      [],
    ],
    [
      "the fast path: what an earlier run marked, if still gone",
      [entry(migrate, "j1", true)],
      live(),
      undefined,
      [migrate],
    ],
    ["the fast path: unmarked stays unknown", [entry(migrate, "j1")], live(), undefined, []],
    [
      "the fast path: any kind an earlier run marked (a hook ConfigMap deleted once run)",
      [entry(cm, "c1", true)],
      live(),
      undefined,
      [cm],
    ],
    [
      "not a Job, not a hook, gone: deleted, not finished",
      [entry(cm, "c1")],
      live(),
      render([cm], hashes([cm, "c1"])),
      [],
    ],
    [
      "a hook applied in its rendered form and gone (its delete policy): finished, any kind",
      [entry(migration, "m1"), entry(hookCm, "c1")],
      live(),
      render([migration, hookCm], hashes([migration, "m1"], [hookCm, "c1"])),
      [migration, hookCm],
    ],
    [
      "a hook whose rendered form changed: not finished",
      [entry(migration, "m1", true)],
      live(),
      render([migration], hashes([migration, "m2"])),
      [],
    ],
  ])("%s", (_name, inventory, liveObjects, rendered, expected) => {
    expect(finishedJobs(inventory, liveObjects, rendered)).toEqual(new Set(expected.map(key)));
  });
});

describe("unchangedTtlJobs", () => {
  it("names the TTL Jobs whose rendered form is the one applied", () => {
    const inventory = [entry(migrate, "j1"), entry(once, "o1"), entry(job("new", 5), "n0")];
    const objects = [migrate, once, job("new", 5), job("fresh", 5)];
    const h = hashes([migrate, "j1"], [once, "o1"], [job("new", 5), "n1"], [job("fresh", 5), "f1"]);
    expect(unchangedTtlJobs(objects, inventory, h)).toEqual(new Set([key(migrate)]));
    expect(unchangedTtlJobs(objects, inventory, undefined)).toEqual(new Set());
  });

  it("leaves out hooks: a hook runs whenever its event comes, whatever its form", () => {
    const ttlHook = hook(migrate, "before-hook-creation");
    expect(unchangedTtlJobs([ttlHook], [entry(ttlHook, "j1")], hashes([ttlHook, "j1"]))).toEqual(
      new Set(),
    );
  });
});

describe("markFinished", () => {
  it("marks exactly the given entries", () => {
    expect(
      markFinished([entry(migrate, "j1"), entry(once, "o1", true)], new Set([key(migrate)])),
    ).toEqual([entry(migrate, "j1", true), entry(once, "o1")]);
  });
});
