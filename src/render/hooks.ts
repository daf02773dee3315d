// Helm hooks (the helm.sh/hook annotation) mapped onto a sync as Argo CD maps them: pre-install
// and pre-upgrade run before the rest, post-install and post-upgrade after it; test, delete and
// rollback hooks never run. Pure. https://argo-cd.readthedocs.io/en/stable/user-guide/helm/#helm-hooks
import type { KubeObject } from "../core/index.ts";
import type { ParsedObject } from "./manifests.ts";

export const HOOK_ANNOTATION = "helm.sh/hook";
export const HOOK_WEIGHT_ANNOTATION = "helm.sh/hook-weight";
export const HOOK_DELETE_POLICY_ANNOTATION = "helm.sh/hook-delete-policy";

const PRE = new Set(["pre-install", "pre-upgrade"]);
const POST = new Set(["post-install", "post-upgrade"]);

/** How a hook object takes part in a sync. */
export interface Hook {
  phase: "pre" | "post";
  /** helm.sh/hook-weight (default 0): lower weights run first. */
  weight: number;
  /**
   * Delete the live object before applying it (before-hook-creation: Helm's and Argo CD's
   * default when no policy is given), so a Job runs again on every sync.
   */
  recreate: boolean;
}

/**
 * The hook role of an object: a Hook (pre or post phase), "skip" for hooks that never run in a
 * sync (test, test-success, test-failure, pre/post-delete, pre/post-rollback), or undefined for
 * a plain object (no annotation, or only crd-install, which Argo CD applies as a normal object).
 */
export function hookOf(object: KubeObject): Hook | "skip" | undefined {
  const annotations = object.metadata.annotations ?? {};
  const value = annotations[HOOK_ANNOTATION];
  if (value === undefined) return undefined;
  const events = value
    .split(",")
    .map((e) => e.trim())
    .filter((e) => e !== "");
  if (events.length === 0 || events.every((e) => e === "crd-install")) return undefined;
  const phase = events.some((e) => PRE.has(e))
    ? "pre"
    : events.some((e) => POST.has(e))
      ? "post"
      : undefined;
  if (!phase) return "skip";
  const weight = Number.parseInt(annotations[HOOK_WEIGHT_ANNOTATION] ?? "0", 10);
  const policies = (annotations[HOOK_DELETE_POLICY_ANNOTATION] ?? "")
    .split(",")
    .map((p) => p.trim())
    .filter((p) => p !== "");
  return {
    phase,
    weight: Number.isFinite(weight) ? weight : 0,
    recreate: policies.length === 0 || policies.includes("before-hook-creation"),
  };
}

/** Drops objects whose hooks never run in a sync (Helm test hooks and the like). */
export function dropSkippedHooks(objects: readonly ParsedObject[]): ParsedObject[] {
  return objects.filter((p) => hookOf(p.object) !== "skip");
}
