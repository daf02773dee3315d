// Running Helm hook objects during an apply with Helm's semantics (pkg/action/hooks.go
// execHook): the hooks of one event run in weight order, a group of one weight together (as
// Argo CD runs a wave of hooks); each is deleted first when its policy says
// before-hook-creation, its Jobs and Pods are waited for, and once the event's hooks succeeded
// those with hook-succeeded are deleted (those with hook-failed when one failed).
import { describeRef, type KubeObject, type ObjectRef, refKey, refOf } from "../core/index.ts";
import type { FailedApply } from "../plan/index.ts";
import { type Hook, hookOf, hookRunsAt, type ReleaseAction } from "../render/index.ts";
import type { ClusterPort } from "./ports.ts";

/** Longest wait for one group of hook Jobs or Pods to finish, ms. */
export const HOOK_TIMEOUT_MS = 5 * 60_000;
/** Longest wait for a deleted hook object to be gone, ms. */
const DELETE_TIMEOUT_MS = 60_000;
const POLL_MS = 1_000;

/** Objects split for an apply: plain ones, the hooks of its pre and post events grouped by
 * weight (ascending), and the render's hooks that do not run in it. */
export interface HookPlan {
  plain: KubeObject[];
  pre: KubeObject[][];
  post: KubeObject[][];
  /** Hooks of other events (a pre-install hook on an upgrade): not applied, only read. */
  idle: KubeObject[];
}

/**
 * Splits `objects` by hookOf for `action` (undefined: no hook runs, as for a selfHeal that
 * re-applies drift). A hook listing both events of a phase pair (pre-install,post-install)
 * runs in both, as in Helm. Within a weight, hooks keep the render's order (Helm sorts by
 * weight, then name: hookByWeight).
 */
export function planHooks(
  objects: readonly KubeObject[],
  action: ReleaseAction | undefined,
): HookPlan {
  const plain: KubeObject[] = [];
  const idle: KubeObject[] = [];
  const hooks: Array<{ obj: KubeObject; hook: Hook }> = [];
  for (const obj of objects) {
    const hook = hookOf(obj);
    if (hook === undefined || hook === "skip") plain.push(obj);
    else if (
      action !== undefined &&
      (hookRunsAt(hook, "pre", action) || hookRunsAt(hook, "post", action))
    )
      hooks.push({ obj, hook });
    else idle.push(obj);
  }
  const group = (phase: "pre" | "post") => {
    const at = hooks.filter((h) => action !== undefined && hookRunsAt(h.hook, phase, action));
    const weights = [...new Set(at.map((h) => h.hook.weight))].sort((a, b) => a - b);
    return weights.map((w) =>
      at
        .filter((h) => h.hook.weight === w)
        .sort((a, b) =>
          a.obj.metadata.name < b.obj.metadata.name
            ? -1
            : a.obj.metadata.name > b.obj.metadata.name
              ? 1
              : 0,
        )
        .map((h) => h.obj),
    );
  };
  return { plain, pre: group("pre"), post: group("post"), idle };
}

/** What running the hooks of one event recorded. */
export interface HookRecord {
  /** Hook objects as the API server stored them, by refKey. */
  applied: Map<string, KubeObject>;
  /** Failures by refKey. */
  failed: Map<string, FailedApply>;
  /** Hooks deleted by their policy once run (gone and done): refKeys. */
  deleted: Set<string>;
}

/**
 * Runs the hook groups of one event (`groups`, by ascending weight) as Helm's execHook does:
 * each group is applied (each hook deleted first, and waited gone, when its policies include
 * before-hook-creation; without it a hook that still exists fails, as Helm's create does) and
 * its Jobs (condition Complete or Failed) and Pods (phase Succeeded or Failed) are waited for,
 * up to HOOK_TIMEOUT_MS per group. When every group succeeded, the hooks with hook-succeeded
 * are deleted (last first); when one failed, the failed hooks with hook-failed and the ones that
 * had succeeded with hook-succeeded are. Deleted hooks go to `record.deleted`.
 * @returns a message when a hook failed (the caller stops the apply), else undefined
 */
export async function runHookEvent(
  groups: readonly (readonly KubeObject[])[],
  cluster: ClusterPort,
  sleep: (ms: number) => Promise<void>,
  record: HookRecord,
): Promise<string | undefined> {
  const succeeded: KubeObject[] = [];
  for (const group of groups) {
    const failure = await runHookGroup(group, cluster, sleep, record);
    if (failure) {
      const failed = group.filter((o) => record.failed.has(refKey(refOf(o))));
      await deleteByPolicy(failed, "hook-failed", cluster, sleep, record);
      await deleteByPolicy(succeeded, "hook-succeeded", cluster, sleep, record);
      return failure;
    }
    succeeded.push(...group);
  }
  await deleteByPolicy(succeeded.reverse(), "hook-succeeded", cluster, sleep, record);
  return undefined;
}

/** Deletes the hooks whose policies include `policy`, waiting for each to be gone. A delete
 * that fails is recorded as the hook's failure (the next run sees the object). */
async function deleteByPolicy(
  hooks: readonly KubeObject[],
  policy: "hook-succeeded" | "hook-failed",
  cluster: ClusterPort,
  sleep: (ms: number) => Promise<void>,
  record: HookRecord,
): Promise<void> {
  for (const obj of hooks) {
    const hook = hookOf(obj);
    // Helm never deletes a CustomResourceDefinition hook (deleteHookByPolicy): the cascade
    // would take every custom resource of it.
    if (hook === undefined || hook === "skip" || obj.kind === "CustomResourceDefinition") continue;
    if (!hook.policies.has(policy)) continue;
    const ref = refOf(obj);
    try {
      await deleteAndWait(ref, cluster, sleep);
      record.deleted.add(refKey(ref));
    } catch (err) {
      const message = `deleting it (${policy}): ${err instanceof Error ? err.message : String(err)}`;
      if (!record.failed.has(refKey(ref)))
        record.failed.set(refKey(ref), { message, terminal: false });
    }
  }
}

/** Deletes `ref` and waits (polling) until it is gone, up to DELETE_TIMEOUT_MS. */
async function deleteAndWait(
  ref: ObjectRef,
  cluster: ClusterPort,
  sleep: (ms: number) => Promise<void>,
): Promise<void> {
  if ((await cluster.delete(ref)) !== "deleted") return;
  for (let waited = 0; (await cluster.get(ref)) !== undefined; waited += POLL_MS) {
    if (waited >= DELETE_TIMEOUT_MS) throw new Error("the hook object is still being deleted");
    await sleep(POLL_MS);
  }
}

/**
 * Applies one group of hooks and waits for its Jobs and Pods (runHookEvent).
 * @returns a message when a hook failed, else undefined
 */
async function runHookGroup(
  group: readonly KubeObject[],
  cluster: ClusterPort,
  sleep: (ms: number) => Promise<void>,
  record: HookRecord,
): Promise<string | undefined> {
  const { applied, failed } = record;
  const started: KubeObject[] = [];
  for (const obj of group) {
    const ref = refOf(obj);
    const key = refKey(ref);
    try {
      const hook = hookOf(obj);
      if (hook && hook !== "skip") {
        if (hook.policies.has("before-hook-creation")) await deleteAndWait(ref, cluster, sleep);
        else if ((await cluster.get(ref)) !== undefined) {
          throw new Error(
            "it still exists from an earlier run and its helm.sh/hook-delete-policy has no before-hook-creation (Helm's create fails the same way); delete it to run the hook again",
          );
        }
      }
      applied.set(key, await cluster.apply(obj));
      record.deleted.delete(key);
      started.push(obj);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      failed.set(key, { message, terminal: false });
      return `hook ${describeRef(ref)}: ${message}`;
    }
  }
  for (let waited = 0; ; waited += POLL_MS) {
    let running = 0;
    for (const obj of started) {
      const ref = refOf(obj);
      const key = refKey(ref);
      const live = applied.get(key);
      const state = live ? finished(live) : "done";
      if (state === "running") {
        const fresh = await cluster.get(ref);
        if (fresh) applied.set(key, fresh);
        const now = fresh ? finished(fresh) : "done";
        if (now === "running") running++;
        else if (now !== "done") {
          failed.set(key, { message: now, terminal: false });
          return `hook ${describeRef(ref)} failed: ${now}`;
        }
      } else if (state !== "done") {
        failed.set(key, { message: state, terminal: false });
        return `hook ${describeRef(ref)} failed: ${state}`;
      }
    }
    if (running === 0) return undefined;
    if (waited >= HOOK_TIMEOUT_MS) {
      const message = `did not finish within ${HOOK_TIMEOUT_MS / 1000}s`;
      for (const obj of started) {
        if (finished(applied.get(refKey(refOf(obj))) ?? obj) === "running") {
          failed.set(refKey(refOf(obj)), { message, terminal: false });
        }
      }
      return `hooks ${started.map((o) => describeRef(refOf(o))).join(", ")} ${message}`;
    }
    await sleep(POLL_MS);
  }
}

/** "done", "running", or the failure message of a hook Job or Pod; other kinds are done at once. */
function finished(obj: KubeObject): string {
  const status = (obj["status"] ?? {}) as {
    conditions?: Array<{ type?: string; status?: string; message?: string; reason?: string }>;
    phase?: string;
    message?: string;
  };
  if (obj.kind === "Job" && obj.apiVersion === "batch/v1") {
    const cond = (type: string) =>
      status.conditions?.find((c) => c.type === type && c.status === "True");
    if (cond("Complete")) return "done";
    const failedCond = cond("Failed");
    if (failedCond)
      return `Job failed: ${failedCond.reason ?? ""} ${failedCond.message ?? ""}`.trim();
    return "running";
  }
  if (obj.kind === "Pod" && obj.apiVersion === "v1") {
    if (status.phase === "Succeeded") return "done";
    if (status.phase === "Failed")
      return `Pod failed${status.message ? `: ${status.message}` : ""}`;
    return "running";
  }
  return "done";
}
