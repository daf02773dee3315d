// Running Helm hook objects during an apply, as Argo CD runs them (PreSync / PostSync): a
// group of hooks of one weight is applied, recreated first when its delete policy says
// before-hook-creation, and its Jobs and Pods are waited for before the next step.
import { describeRef, type KubeObject, refKey, refOf } from "../core/index.ts";
import type { FailedApply } from "../plan/index.ts";
import { type Hook, hookOf } from "../render/index.ts";
import type { ClusterPort } from "./ports.ts";

/** Longest wait for one group of hook Jobs or Pods to finish, ms. */
export const HOOK_TIMEOUT_MS = 5 * 60_000;
/** Longest wait for a recreated hook's old object to be gone, ms. */
const DELETE_TIMEOUT_MS = 60_000;
const POLL_MS = 1_000;

/** Objects split for a sync: plain ones, and pre and post hooks grouped by weight (ascending). */
export interface HookPlan {
  plain: KubeObject[];
  pre: KubeObject[][];
  post: KubeObject[][];
}

/** Splits `objects` by hookOf; hooks that never run ("skip") were dropped at render. */
export function planHooks(objects: readonly KubeObject[]): HookPlan {
  const plain: KubeObject[] = [];
  const hooks: Array<{ obj: KubeObject; hook: Hook }> = [];
  for (const obj of objects) {
    const hook = hookOf(obj);
    if (hook === undefined || hook === "skip") plain.push(obj);
    else hooks.push({ obj, hook });
  }
  const group = (phase: Hook["phase"]) => {
    const weights = [
      ...new Set(hooks.filter((h) => h.hook.phase === phase).map((h) => h.hook.weight)),
    ];
    return weights
      .sort((a, b) => a - b)
      .map((w) =>
        hooks.filter((h) => h.hook.phase === phase && h.hook.weight === w).map((h) => h.obj),
      );
  };
  return { plain, pre: group("pre"), post: group("post") };
}

/**
 * Applies one group of hooks and waits for its Jobs (condition Complete or Failed) and Pods
 * (phase Succeeded or Failed), up to HOOK_TIMEOUT_MS. Applied objects go to `applied`, failures
 * to `failed` (by refKey).
 * @returns a message when a hook failed (the caller stops the sync), else undefined
 */
export async function runHookGroup(
  group: readonly KubeObject[],
  cluster: ClusterPort,
  sleep: (ms: number) => Promise<void>,
  applied: Map<string, KubeObject>,
  failed: Map<string, FailedApply>,
): Promise<string | undefined> {
  const started: KubeObject[] = [];
  for (const obj of group) {
    const ref = refOf(obj);
    const key = refKey(ref);
    try {
      const hook = hookOf(obj);
      if (hook && hook !== "skip" && hook.recreate && (await cluster.delete(ref)) === "deleted") {
        for (let waited = 0; (await cluster.get(ref)) !== undefined; waited += POLL_MS) {
          if (waited >= DELETE_TIMEOUT_MS)
            throw new Error("the previous hook object is still being deleted");
          await sleep(POLL_MS);
        }
      }
      applied.set(key, await cluster.apply(obj));
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
