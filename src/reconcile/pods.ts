// Health, in the observe step: a workload that is not progressing is explained by its Pods.
import { groupOf, type KubeObject, type ObjectRef, refKey } from "../core/index.ts";
import {
  aggregateSet,
  explainByPods,
  POD_OWNERS,
  podSelector,
  type SetHealth,
} from "../health/index.ts";
import type { RunContext } from "./context.ts";

/** At most this many workloads have their Pods listed per run (one list request each). */
const MAX_LISTED = 5;

/**
 * `health` with each Progressing or Degraded Deployment, StatefulSet or DaemonSet (apps/v1) of
 * `refs` explained by its Pods when one of them is stuck (ImagePullBackOff, CrashLoopBackOff,
 * Unschedulable...: explainByPods). One Pod list per such workload (by its selector, in its
 * namespace), for at most 5 of them; nothing is listed while every workload is healthy, so a
 * steady run costs no request more. A failed list leaves that workload as it was.
 * @param live the live objects by refKey (the workloads' selectors)
 */
export async function explainProgressing(
  ctx: RunContext,
  refs: readonly ObjectRef[],
  health: SetHealth,
  live: ReadonlyMap<string, KubeObject>,
): Promise<SetHealth> {
  if (health.status === "Healthy") return health;
  const candidates = refs
    .filter((r) => POD_OWNERS.has(r.kind) && groupOf(r.apiVersion) === "apps" && r.namespace)
    .filter((r) => {
      const status = health.byKey.get(refKey(r))?.status;
      return status === "Progressing" || status === "Degraded";
    })
    .slice(0, MAX_LISTED);
  if (candidates.length === 0) return health;
  const byKey = new Map(health.byKey);
  for (const ref of candidates) {
    const workload = live.get(refKey(ref));
    const selector = workload ? podSelector(workload) : undefined;
    const own = byKey.get(refKey(ref));
    if (!selector || !own) continue;
    try {
      const pods = await ctx.cluster.list("v1", "Pod", selector, ref.namespace);
      byKey.set(refKey(ref), explainByPods(own, pods));
    } catch (err) {
      ctx.ports.log?.({ app: ctx.id, msg: "listing pods failed", error: String(err) });
    }
  }
  return aggregateSet(refs, byKey);
}
