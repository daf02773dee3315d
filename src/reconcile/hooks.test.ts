import { describe, expect, it } from "vitest";
import { createFakeKube } from "../../test/support/fake-kube.ts";
import { type KubeObject, refKey, refOf } from "../core/index.ts";
import { applyStaged, waveGate } from "./apply.ts";
import { type HookRecord, planHooks, runHookEvent } from "./hooks.ts";

const job = (name: string, hook: string, extra: Record<string, string> = {}): KubeObject => ({
  apiVersion: "batch/v1",
  kind: "Job",
  metadata: { name, namespace: "team-a", annotations: { "helm.sh/hook": hook, ...extra } },
});
const cm: KubeObject = {
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name: "web", namespace: "team-a" },
};
const names = (groups: KubeObject[][]) => groups.map((g) => g.map((o) => o.metadata.name));

/** A fake API server whose Jobs finish as soon as they are applied: Complete, or Failed when
 * their name is in `failing`. */
function finishingKube(failing: ReadonlySet<string> = new Set()) {
  const kube = createFakeKube();
  const apply = kube.apply.bind(kube);
  const creations: string[] = [];
  kube.apply = async (obj, opts) => {
    const stored = await apply(obj, opts);
    if (obj.kind !== "Job") return stored;
    creations.push(obj.metadata.name);
    const type = failing.has(obj.metadata.name) ? "Failed" : "Complete";
    const done = { ...stored, status: { conditions: [{ type, status: "True", reason: "X" }] } };
    kube.objects.set(refKey(refOf(obj)), done);
    return done;
  };
  return { kube, creations };
}
const record = (): HookRecord => ({ applied: new Map(), failed: new Map(), deleted: new Set() });
const sleep = async () => {};

describe("planHooks: which hooks an install and an upgrade run (Helm's events)", () => {
  const objects = [
    cm,
    job("install", "pre-install"),
    job("upgrade", "pre-upgrade", { "helm.sh/hook-weight": "-1" }),
    job("both", "pre-install,pre-upgrade"),
    job("after", "post-install,post-upgrade"),
    job("post-up", "post-upgrade"),
  ];

  it("an install runs pre-install and post-install hooks; the upgrade ones stay idle", () => {
    const plan = planHooks(objects, "install");
    expect(plan.plain).toEqual([cm]);
    expect(names(plan.pre)).toEqual([["both", "install"]]);
    expect(names(plan.post)).toEqual([["after"]]);
    expect(plan.idle.map((o) => o.metadata.name)).toEqual(["upgrade", "post-up"]);
  });

  it("an upgrade runs pre-upgrade (by weight) and post-upgrade hooks; pre-install stays idle", () => {
    const plan = planHooks(objects, "upgrade");
    expect(names(plan.pre)).toEqual([["upgrade"], ["both"]]);
    expect(names(plan.post)).toEqual([["after", "post-up"]]);
    expect(plan.idle.map((o) => o.metadata.name)).toEqual(["install"]);
  });

  it("without an action (a selfHeal) no hook runs", () => {
    const plan = planHooks(objects, undefined);
    expect(plan.pre).toEqual([]);
    expect(plan.post).toEqual([]);
    expect(plan.idle).toHaveLength(5);
  });
});

describe("runHookEvent: Helm's delete policies", () => {
  it("hook-succeeded deletes the hook once the event succeeded; the default keeps it", async () => {
    const { kube, creations } = finishingKube();
    const migrate = job("migrate", "pre-upgrade", {
      "helm.sh/hook-delete-policy": "hook-succeeded",
    });
    const keep = job("keep", "pre-upgrade", { "helm.sh/hook-weight": "1" });
    const deletes: string[] = [];
    const del = kube.delete.bind(kube);
    kube.delete = async (ref) => {
      deletes.push(ref.name);
      return del(ref);
    };
    const rec = record();
    expect(await runHookEvent([[migrate], [keep]], kube, sleep, rec)).toBeUndefined();
    expect(creations).toEqual(["migrate", "keep"]);
    expect([...rec.deleted]).toEqual([refKey(refOf(migrate))]);
    expect(kube.objects.has(refKey(refOf(migrate)))).toBe(false);
    expect(kube.objects.has(refKey(refOf(keep)))).toBe(true);
    // The next upgrade creates both again: migrate is gone, keep is deleted first (default
    // before-hook-creation).
    const again = record();
    expect(await runHookEvent([[migrate], [keep]], kube, sleep, again)).toBeUndefined();
    expect(creations).toEqual(["migrate", "keep", "migrate", "keep"]);
    // Deleted: keep before each creation (the first finds none), migrate once it ran.
    expect(deletes).toEqual(["keep", "migrate", "keep", "migrate"]);
  });

  it("hook-failed deletes the failed hook, and the ones that succeeded go by hook-succeeded", async () => {
    const { kube } = finishingKube(new Set(["bad"]));
    const ok = job("ok", "pre-install", { "helm.sh/hook-delete-policy": "hook-succeeded" });
    const bad = job("bad", "pre-install", {
      "helm.sh/hook-weight": "2",
      "helm.sh/hook-delete-policy": "hook-failed",
    });
    const rec = record();
    const failure = await runHookEvent([[ok], [bad]], kube, sleep, rec);
    expect(failure).toBe("hook Job team-a/bad failed: Job failed: X");
    expect(rec.failed.get(refKey(refOf(bad)))).toEqual({
      message: "Job failed: X",
      terminal: false,
    });
    expect([...rec.deleted].sort()).toEqual([refKey(refOf(bad)), refKey(refOf(ok))].sort());
    expect(kube.objects.size).toBe(0);
  });

  it("a failed hook without hook-failed stays for its logs", async () => {
    const { kube } = finishingKube(new Set(["bad"]));
    const bad = job("bad", "pre-install", { "helm.sh/hook-delete-policy": "hook-succeeded" });
    const rec = record();
    expect(await runHookEvent([[bad]], kube, sleep, rec)).toBe(
      "hook Job team-a/bad failed: Job failed: X",
    );
    expect(rec.deleted.size).toBe(0);
    expect(kube.objects.has(refKey(refOf(bad)))).toBe(true);
  });

  it("a hook still there whose policies lack before-hook-creation fails, as Helm's create does", async () => {
    const { kube, creations } = finishingKube();
    const once = job("once", "pre-upgrade", { "helm.sh/hook-delete-policy": "hook-failed" });
    await runHookEvent([[once]], kube, sleep, record());
    const rec = record();
    const failure = await runHookEvent([[once]], kube, sleep, rec);
    expect(failure).toBe(
      "hook Job team-a/once: it still exists from an earlier run and its helm.sh/hook-delete-policy has no before-hook-creation (Helm's create fails the same way); delete it to run the hook again",
    );
    expect(creations).toEqual(["once"]);
  });
});

describe("applyStaged: hooks by release action", () => {
  it("an upgrade leaves a pre-install hook alone: read, live or done", async () => {
    const { kube, creations } = finishingKube();
    const install = job("install", "pre-install", {
      "helm.sh/hook-delete-policy": "hook-succeeded",
    });
    const kept = job("kept", "pre-install");
    const upgrade = job("upgrade", "pre-upgrade");
    const first = await applyStaged(
      [cm, install, kept, upgrade],
      kube,
      sleep,
      undefined,
      "install",
    );
    expect(creations).toEqual(["install", "kept"]);
    expect([...first.finished].sort()).toEqual([refKey(refOf(install)), refKey(refOf(upgrade))]);
    const second = await applyStaged(
      [cm, install, kept, upgrade],
      kube,
      sleep,
      undefined,
      "upgrade",
    );
    expect(creations).toEqual(["install", "kept", "upgrade"]);
    expect([...second.finished]).toEqual([refKey(refOf(install))]);
    expect([...second.existing.keys()]).toEqual([refKey(refOf(kept))]);
    expect([...second.failed]).toEqual([]);
  });
});

describe("applyStaged: sync waves", () => {
  const wave = (o: KubeObject, w: string, key = "argocd.argoproj.io/sync-wave"): KubeObject => ({
    ...o,
    metadata: { ...o.metadata, annotations: { [key]: w } },
  });
  const first = wave({ ...cm, metadata: { ...cm.metadata, name: "first" } }, "-1");
  const db = wave(
    { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "db", namespace: "team-a" } },
    "0",
    "plumb.dev/sync-wave",
  );
  const last = wave({ ...cm, metadata: { ...cm.metadata, name: "last" } }, "3");
  const now = new Date("2026-12-01T00:00:00Z");

  it("applies a wave once the one before is healthy, and leaves the later ones pending", async () => {
    const { kube } = finishingKube();
    const objects = [last, db, first];
    const out = await applyStaged(
      objects,
      kube,
      sleep,
      undefined,
      "install",
      waveGate(kube, now, objects),
    );
    // The new Deployment has no status yet (Progressing): wave 3 waits.
    expect([...out.applied.keys()]).toEqual([refKey(refOf(first)), refKey(refOf(db))]);
    expect([...out.pending]).toEqual([
      [
        refKey(refOf(last)),
        "not applied yet: waiting for sync wave 0 to be healthy (Deployment team-a/db Progressing)",
      ],
    ]);
    expect([...out.failed]).toEqual([]);
  });

  it("goes on from a wave left alone (not applied this run) once it is healthy", async () => {
    const { kube } = finishingKube();
    const available = {
      ...db,
      metadata: { ...db.metadata, generation: 1 },
      spec: { replicas: 1 },
      status: {
        observedGeneration: 1,
        replicas: 1,
        updatedReplicas: 1,
        readyReplicas: 1,
        availableReplicas: 1,
        conditions: [{ type: "Available", status: "True" }],
      },
    };
    kube.objects.set(refKey(refOf(db)), available);
    kube.objects.set(refKey(refOf(first)), first);
    // Only wave 3 changed; wave 0 is read and found healthy.
    const out = await applyStaged(
      [last],
      kube,
      sleep,
      undefined,
      "upgrade",
      waveGate(kube, now, [first, db, last]),
    );
    expect([...out.applied.keys()]).toEqual([refKey(refOf(last))]);
    expect(out.pending.size).toBe(0);
  });
});
