import { describe, expect, it } from "vitest";
import type { KubeObject } from "../core/index.ts";
import { dropSkippedHooks, hookOf } from "./hooks.ts";

const obj = (annotations?: Record<string, string>): KubeObject => ({
  apiVersion: "batch/v1",
  kind: "Job",
  metadata: { name: "j", ...(annotations ? { annotations } : {}) },
});

describe("hookOf (Argo CD's mapping of Helm hooks)", () => {
  it("plain objects and crd-install are not hooks", () => {
    expect(hookOf(obj())).toBeUndefined();
    expect(hookOf(obj({ other: "x" }))).toBeUndefined();
    expect(hookOf(obj({ "helm.sh/hook": "crd-install" }))).toBeUndefined();
    expect(hookOf(obj({ "helm.sh/hook": " , " }))).toBeUndefined();
  });

  it("pre-install and pre-upgrade run before the rest, post-* after, with weight and policy", () => {
    expect(hookOf(obj({ "helm.sh/hook": "pre-install,pre-upgrade" }))).toEqual({
      phase: "pre",
      weight: 0,
      recreate: true,
    });
    expect(
      hookOf(
        obj({
          "helm.sh/hook": "post-upgrade, post-install",
          "helm.sh/hook-weight": "-5",
          "helm.sh/hook-delete-policy": "hook-succeeded",
        }),
      ),
    ).toEqual({ phase: "post", weight: -5, recreate: false });
    expect(
      hookOf(
        obj({
          "helm.sh/hook": "pre-upgrade",
          "helm.sh/hook-weight": "x",
          "helm.sh/hook-delete-policy": "hook-succeeded,before-hook-creation",
        }),
      ),
    ).toEqual({ phase: "pre", weight: 0, recreate: true });
    // An object that is both pre and post is run once, before.
    expect(hookOf(obj({ "helm.sh/hook": "post-install,pre-install" }))).toMatchObject({
      phase: "pre",
    });
  });

  it("test, delete and rollback hooks never run", () => {
    for (const h of ["test", "test-success", "test-failure", "pre-delete", "post-rollback"]) {
      expect(hookOf(obj({ "helm.sh/hook": h }))).toBe("skip");
    }
    const kept = dropSkippedHooks([
      { object: obj({ "helm.sh/hook": "test" }), origin: "a:1" },
      { object: obj({ "helm.sh/hook": "pre-install" }), origin: "b:1" },
      { object: obj(), origin: "c:1" },
    ]);
    expect(kept.map((k) => k.origin)).toEqual(["b:1", "c:1"]);
  });
});
