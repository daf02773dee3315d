// Prune execution, shared by the apply step and the finalizer: delete what the plan says,
// keep what could not be deleted.
import { ANNOTATION_PRUNE } from "../app/index.ts";
import {
  describeRef,
  EventReason,
  type KubeObject,
  type ObjectRef,
  refKey,
} from "../core/index.ts";
import {
  holdInUse,
  type InUse,
  type PrunePlan,
  type PruneSkip,
  planPrune,
  staleRefs,
  USED_BY_PODS,
} from "../plan/index.ts";
import { guardCascades } from "./cascade.ts";
import type { RunContext } from "./context.ts";
import { isRestart } from "./lease.ts";
import { listLive } from "./observe.ts";

export interface PruneOutcome {
  /** Deleted (or already gone). */
  deleted: ObjectRef[];
  /** Deletes that failed, with the API server's message; they stay in the inventory. */
  failed: Array<{ ref: ObjectRef; message: string }>;
}

/** Deletes each object of `plan.delete` (background propagation), one at a time. */
export async function executePrune(ctx: RunContext, plan: PrunePlan): Promise<PruneOutcome> {
  const out: PruneOutcome = { deleted: [], failed: [] };
  for (const ref of plan.delete) {
    try {
      await ctx.cluster.delete(ref);
      out.deleted.push(ref);
    } catch (e) {
      if (isRestart(e)) throw e;
      out.failed.push({ ref, message: e instanceof Error ? e.message : String(e) });
    }
  }
  return out;
}

/** "Deployment a/b: message; ..." for a Failure or an operation outcome. */
export function pruneErrors(outcome: PruneOutcome): string[] {
  return outcome.failed.map((f) => `${describeRef(f.ref)}: ${f.message}`);
}

/**
 * Why a finalizer keeps its App, or undefined when nothing does: deletes that failed, and
 * Namespaces or CRDs the cascade guard kept (`kept`, and the PruneSkipped Events of a former
 * destination whose objects remain) — "finalizer could not prune: ...; finalizer waits to
 * prune: Namespace x is not pruned: deleting it would delete ... (...the way out)".
 */
export function finalizerWaits(
  done: PruneOutcome,
  kept: readonly PruneSkip[],
  departed: {
    remaining: readonly unknown[];
    events: readonly { reason: string; message: string }[];
  },
): string | undefined {
  const waits = kept.map((s) => s.reason);
  if (departed.remaining.length > 0) {
    const there = departed.events.filter((e) => e.reason === EventReason.PruneSkipped);
    waits.push(
      ...(there.length > 0 ? there.map((e) => e.message) : ["objects on a former destination"]),
    );
  }
  const parts: string[] = [];
  if (done.failed.length > 0)
    parts.push(`finalizer could not prune: ${pruneErrors(done).join("; ")}`);
  if (waits.length > 0) {
    parts.push(
      `finalizer waits to prune: ${waits.join("; ")} (tried again on every run; remove its ${ANNOTATION_PRUNE} annotation, or set syncPolicy.prune: false, to leave it and let the App go)`,
    );
  }
  return parts.length > 0 ? parts.join("; ") : undefined;
}

/** What the apply step's prune did to the objects the last inventory has and the desired set lacks. */
export interface StaleOutcome extends PruneOutcome {
  skipped: PruneSkip[];
  /** Stale objects still live and left alone because syncPolicy.prune is false. */
  unpruned: ObjectRef[];
}

/**
 * Prunes what the last inventory has and `desired` lacks (planPrune's rules: never what another
 * App owns, never what is no longer labelled as ours, never a Namespace, PVC or CRD unless
 * annotated; then guardCascades: never a Namespace or CRD whose deletion takes others' objects
 * with it; then holdInUse: never a ConfigMap, Secret, PVC or ServiceAccount that live Pods, or a
 * ReplicaSet that may still make them, use — kept, pending, until the rollout has finished).
 * With `prune` false (syncPolicy.prune) nothing is deleted and the live ones are reported.
 * Reads: one list per kind of the stale objects; the Pods and ReplicaSets of each namespace
 * holding such an object planned for deletion (inUseIn).
 */
export async function pruneStale(
  ctx: RunContext,
  prune: boolean,
  desired: readonly ObjectRef[],
  owners: ReadonlyMap<string, readonly string[]>,
): Promise<StaleOutcome> {
  const out: StaleOutcome = { deleted: [], failed: [], skipped: [], unpruned: [] };
  const candidates = staleRefs(ctx.inventory, desired);
  if (candidates.length === 0) return out;
  const live = await listLive(candidates, ctx.ref, ctx.cluster);
  if (!prune) {
    out.unpruned = candidates.filter((r) => live.has(refKey(r)));
    return out;
  }
  const guarded = await guardCascades(
    ctx,
    planPrune({
      inventory: candidates,
      desired,
      live,
      claimedByOthers: new Set(owners.keys()),
      claimants: owners,
      app: ctx.ref,
    }),
  );
  const since = new Map(
    ctx.inventory.flatMap((e) => (e.prunePending ? [[refKey(e), e.prunePending] as const] : [])),
  );
  const plan = holdInUse(guarded, await inUseIn(ctx, guarded.delete), since, ctx.now);
  return { ...(await executePrune(ctx, plan)), skipped: plan.skip, unpruned: [] };
}

/**
 * The Pods and ReplicaSets (any labels: a workload another tool made counts too) of every
 * namespace where `refs` has an object Pods can use (USED_BY_PODS); nothing is read when there
 * is none. A namespace whose lists fail is reported in `unknown`, so nothing there is pruned.
 */
async function inUseIn(ctx: RunContext, refs: readonly ObjectRef[]): Promise<InUse> {
  const namespaces = new Set(
    refs.filter((r) => USED_BY_PODS.has(r.kind) && r.namespace).map((r) => r.namespace as string),
  );
  const out = { pods: [] as KubeObject[], replicaSets: [] as KubeObject[] };
  const unknown = new Map<string, string>();
  for (const ns of namespaces) {
    try {
      const [pods, replicaSets] = await Promise.all([
        ctx.cluster.list("v1", "Pod", "", ns),
        ctx.cluster.list("apps/v1", "ReplicaSet", "", ns),
      ]);
      out.pods.push(...pods);
      out.replicaSets.push(...replicaSets);
    } catch (e) {
      if (isRestart(e)) throw e;
      unknown.set(ns, e instanceof Error ? e.message : String(e));
    }
  }
  return { ...out, unknown };
}

/**
 * The prune when a pre-sync hook stopped the apply: nothing is pruned, and every stale
 * object stays in the inventory with the reason.
 */
export function keepStale(
  ctx: RunContext,
  desired: readonly ObjectRef[],
  reason: string,
): StaleOutcome {
  const skipped = staleRefs(ctx.inventory, desired).map((ref) => ({
    ref,
    reason: `not pruned: ${reason}`,
    keep: true,
  }));
  return { deleted: [], failed: [], skipped, unpruned: [] };
}
