import { describe, expect, it } from "vitest";
import type { KubeObject } from "../core/index.ts";
import {
  dropSkippedHooks,
  hookOf,
  hookRunsAt,
  isDeleteHook,
  isDeleteOnlyHook,
  syncWaveOf,
} from "./hooks.ts";

const obj = (annotations?: Record<string, string>): KubeObject => ({
  apiVersion: "batch/v1",
  kind: "Job",
  metadata: { name: "j", ...(annotations ? { annotations } : {}) },
});

describe("hookOf (Helm's hook events and delete policies)", () => {
  it("plain objects and crd-install are not hooks", () => {
    expect(hookOf(obj())).toBeUndefined();
    expect(hookOf(obj({ other: "x" }))).toBeUndefined();
    expect(hookOf(obj({ "helm.sh/hook": "crd-install" }))).toBeUndefined();
    expect(hookOf(obj({ "helm.sh/hook": " , " }))).toBeUndefined();
  });

  it("reads the events, the weight and the policies; no policy is before-hook-creation", () => {
    expect(hookOf(obj({ "helm.sh/hook": "pre-install,pre-upgrade" }))).toEqual({
      events: new Set(["pre-install", "pre-upgrade"]),
      weight: 0,
      policies: new Set(["before-hook-creation"]),
    });
    expect(
      hookOf(
        obj({
          "helm.sh/hook": "post-upgrade, post-install",
          "helm.sh/hook-weight": "-5",
          "helm.sh/hook-delete-policy": "hook-succeeded",
        }),
      ),
    ).toEqual({
      events: new Set(["post-upgrade", "post-install"]),
      weight: -5,
      policies: new Set(["hook-succeeded"]),
    });
    expect(
      hookOf(
        obj({
          "helm.sh/hook": "pre-upgrade,test",
          "helm.sh/hook-weight": "x",
          "helm.sh/hook-delete-policy": "hook-failed, before-hook-creation",
        }),
      ),
    ).toEqual({
      events: new Set(["pre-upgrade"]),
      weight: 0,
      policies: new Set(["hook-failed", "before-hook-creation"]),
    });
  });

  it("install hooks run on install, upgrade hooks on upgrade, one listing both on both", () => {
    const install = hookOf(obj({ "helm.sh/hook": "pre-install" }));
    const both = hookOf(obj({ "helm.sh/hook": "pre-install,pre-upgrade" }));
    const post = hookOf(obj({ "helm.sh/hook": "post-upgrade" }));
    if (!install || install === "skip" || !both || both === "skip" || !post || post === "skip")
      throw new Error("not hooks");
    expect(hookRunsAt(install, "pre", "install")).toBe(true);
    expect(hookRunsAt(install, "pre", "upgrade")).toBe(false);
    expect(hookRunsAt(both, "pre", "install")).toBe(true);
    expect(hookRunsAt(both, "pre", "upgrade")).toBe(true);
    expect(hookRunsAt(post, "post", "upgrade")).toBe(true);
    expect(hookRunsAt(post, "pre", "upgrade")).toBe(false);
    expect(hookRunsAt(post, "post", "install")).toBe(false);
  });

  it("test and rollback hooks never run; delete hooks are kept for the finalizer", () => {
    for (const h of ["test", "test-success", "test-failure", "post-rollback", "pre-rollback"]) {
      expect(hookOf(obj({ "helm.sh/hook": h }))).toBe("skip");
    }
    const kept = dropSkippedHooks([
      { object: obj({ "helm.sh/hook": "test" }), origin: "a:1" },
      { object: obj({ "helm.sh/hook": "pre-install" }), origin: "b:1" },
      { object: obj({ "helm.sh/hook": "pre-delete" }), origin: "d:1" },
      { object: obj(), origin: "c:1" },
    ]);
    expect(kept.map((k) => k.origin)).toEqual(["b:1", "d:1", "c:1"]);
    expect(isDeleteOnlyHook(obj({ "helm.sh/hook": "pre-delete,post-delete" }))).toBe(true);
    expect(isDeleteOnlyHook(obj({ "helm.sh/hook": "pre-delete,pre-install" }))).toBe(false);
    expect(isDeleteHook(obj({ "helm.sh/hook": "pre-delete,pre-install" }))).toBe(true);
    expect(isDeleteHook(obj({ "helm.sh/hook": "pre-install" }))).toBe(false);
    expect(isDeleteHook(obj())).toBe(false);
  });
});

describe("syncWaveOf (Argo CD's sync wave)", () => {
  it("reads argocd.argoproj.io/sync-wave, then plumb.dev/sync-wave; 0 otherwise", () => {
    expect(syncWaveOf(obj())).toBe(0);
    expect(syncWaveOf(obj({ "argocd.argoproj.io/sync-wave": "-2" }))).toBe(-2);
    expect(syncWaveOf(obj({ "plumb.dev/sync-wave": "3" }))).toBe(3);
    expect(
      syncWaveOf(obj({ "argocd.argoproj.io/sync-wave": "1", "plumb.dev/sync-wave": "3" })),
    ).toBe(1);
    expect(syncWaveOf(obj({ "plumb.dev/sync-wave": "one" }))).toBe(0);
    expect(syncWaveOf(obj({ "plumb.dev/sync-wave": "1.5" }))).toBe(0);
    expect(syncWaveOf(obj({ "plumb.dev/sync-wave": "+4" }))).toBe(4);
    // strconv.Atoi refuses these, so Argo CD reads 0.
    expect(syncWaveOf(obj({ "plumb.dev/sync-wave": " 2" }))).toBe(0);
    expect(syncWaveOf(obj({ "plumb.dev/sync-wave": "0x10" }))).toBe(0);
  });
});
