// Helm hooks (the helm.sh/hook annotation) with Helm's semantics: install hooks run when the
// release is first applied, upgrade hooks on every later apply, delete hooks when the App is
// deleted; delete policies as Helm reads them. Sync waves order the rest. Pure.
// Helm: pkg/release/v1/hook.go (events, policies), pkg/action/hooks.go (execHook).
import type { KubeObject } from "../core/index.ts";
import type { ParsedObject } from "./manifests.ts";

export const HOOK_ANNOTATION = "helm.sh/hook";
export const HOOK_WEIGHT_ANNOTATION = "helm.sh/hook-weight";
export const HOOK_DELETE_POLICY_ANNOTATION = "helm.sh/hook-delete-policy";
/** Argo CD's sync wave (gitops-engine pkg/sync/common/types.go AnnotationSyncWave). */
export const SYNC_WAVE_ANNOTATION = "argocd.argoproj.io/sync-wave";
/** plumb's alias of the sync wave; Argo CD's annotation wins when both are set. */
export const PLUMB_SYNC_WAVE_ANNOTATION = "plumb.dev/sync-wave";

/**
 * What an apply is to the release, in Helm's terms: `install` when the App has never applied
 * (an empty inventory), `upgrade` after that, `delete` when the App is being deleted.
 */
export type ReleaseAction = "install" | "upgrade" | "delete";

/** The delete policies Helm defines (pkg/release/v1/hook.go HookDeletePolicy). */
export type HookDeletePolicy = "before-hook-creation" | "hook-succeeded" | "hook-failed";

const RUNNABLE = new Set([
  "pre-install",
  "post-install",
  "pre-upgrade",
  "post-upgrade",
  "pre-delete",
  "post-delete",
]);
const POLICIES = new Set<string>(["before-hook-creation", "hook-succeeded", "hook-failed"]);

/** How a hook object takes part in an apply. */
export interface Hook {
  /** The events it runs on (pre-install, post-upgrade, pre-delete, …), as listed. */
  events: ReadonlySet<string>;
  /** helm.sh/hook-weight (default 0): lower weights run first. */
  weight: number;
  /**
   * helm.sh/hook-delete-policy. With none given, before-hook-creation: Helm v3's default
   * (pkg/action/hooks.go hookSetDeletePolicy), so a Job runs again each time its event comes.
   */
  policies: ReadonlySet<HookDeletePolicy>;
}

/**
 * The hook role of an object: a Hook, "skip" for hooks plumb never runs (only test,
 * test-success, test-failure, pre/post-rollback events: there is no `helm test` or `helm
 * rollback` here), or undefined for a plain object (no annotation, or only crd-install, which
 * Argo CD applies as a normal object).
 */
export function hookOf(object: KubeObject): Hook | "skip" | undefined {
  const annotations = object.metadata.annotations ?? {};
  const value = annotations[HOOK_ANNOTATION];
  if (value === undefined) return undefined;
  const events = list(value);
  if (events.length === 0 || events.every((e) => e === "crd-install")) return undefined;
  const runs = events.filter((e) => RUNNABLE.has(e));
  if (runs.length === 0) return "skip";
  const weight = Number.parseInt(annotations[HOOK_WEIGHT_ANNOTATION] ?? "0", 10);
  const given = list(annotations[HOOK_DELETE_POLICY_ANNOTATION] ?? "").filter((p) =>
    POLICIES.has(p),
  ) as HookDeletePolicy[];
  return {
    events: new Set(runs),
    weight: Number.isFinite(weight) ? weight : 0,
    policies: new Set(given.length > 0 ? given : ["before-hook-creation"]),
  };
}

/** Whether `hook` runs in the `phase` of `action` (e.g. pre of upgrade: pre-upgrade). */
export function hookRunsAt(hook: Hook, phase: "pre" | "post", action: ReleaseAction): boolean {
  return hook.events.has(`${phase}-${action}`);
}

/**
 * A hook that runs only when the App is deleted (pre-delete, post-delete and nothing of install
 * or upgrade): never applied by a sync, so not part of the desired set; kept for the finalizer.
 */
export function isDeleteOnlyHook(object: KubeObject): boolean {
  const hook = hookOf(object);
  if (hook === undefined || hook === "skip") return false;
  return [...hook.events].every((e) => e === "pre-delete" || e === "post-delete");
}

/** Whether the object runs as a delete hook (it lists pre-delete or post-delete). */
export function isDeleteHook(object: KubeObject): boolean {
  const hook = hookOf(object);
  return (
    hook !== undefined &&
    hook !== "skip" &&
    (hook.events.has("pre-delete") || hook.events.has("post-delete"))
  );
}

/**
 * The sync wave of a plain object: argocd.argoproj.io/sync-wave, else plumb.dev/sync-wave, a
 * decimal integer as Go's strconv.Atoi reads it (default 0, and 0 for a value that is not
 * one: Argo CD then falls back to the Helm hook weight, which a plain object does not have).
 * gitops-engine pkg/sync/syncwaves/waves.go Wave.
 */
export function syncWaveOf(object: KubeObject): number {
  const annotations = object.metadata.annotations ?? {};
  const value = annotations[SYNC_WAVE_ANNOTATION] ?? annotations[PLUMB_SYNC_WAVE_ANNOTATION];
  if (value === undefined || !/^[+-]?\d+$/.test(value)) return 0;
  const wave = Number.parseInt(value, 10);
  return Number.isSafeInteger(wave) ? wave : 0;
}

/** Drops objects whose hooks never run (Helm test and rollback hooks). */
export function dropSkippedHooks(objects: readonly ParsedObject[]): ParsedObject[] {
  return objects.filter((p) => hookOf(p.object) !== "skip");
}

function list(value: string): string[] {
  return value
    .split(",")
    .map((e) => e.trim())
    .filter((e) => e !== "");
}
