// Being deleted: an App prunes its inventory (the same safety rules as a sync), then lets go.
import { FINALIZER } from "../app/index.ts";
import { EventReason, FailureReason, refKey } from "../core/index.ts";
import { type PruneSkip, planPrune, type RunEvent, type RunOutcome } from "../plan/index.ts";
import { guardCascades } from "./cascade.ts";
import type { RunContext } from "./context.ts";
import { type DeleteHooks, runDeleteHooks } from "./delete-hooks.ts";
import { pruneDeparted } from "./destination.ts";
import { removeDnsRecords } from "./dns.ts";
import { listLive } from "./observe.ts";
import { claimedByOthers } from "./ownership.ts";
import { executePrune, finalizerWaits, type PruneOutcome } from "./prune.ts";

/** What the finalize step did: the finalizer is removed (the App goes), or a failure to record. */
export type Finalized = { removed: true } | { removed: false; outcome: RunOutcome };

/**
 * The finalize step of an App being deleted (planFinalize), under its Lease: with `prune`
 * (syncPolicy.prune, the default), prunes every inventory object no other App claims (never a
 * Namespace, PVC or CRD unless opted in, never a Namespace or CRD whose deletion takes others'
 * objects with it: kept with a Warning Event, and the finalizer with it, until it can be
 * pruned), then removes the finalizer; without it only
 * removes the finalizer (Flux's prune: false does the same). A delete that fails keeps the
 * finalizer and returns the failure (PruneFailed, the inventory trimmed to what is left), tried
 * again next run. A 404 is success; deleting in a terminating namespace is too. With prune, the
 * App's DNS records are removed too; a provider error keeps the finalizer the same way. An
 * object another App also renders (a shared Namespace) is kept with a Normal Event naming that
 * App: "kept Namespace team-a: also rendered by team-a/demo-b". Objects on other clusters (a
 * remote destination) are pruned there first; a cluster that cannot be reached keeps the
 * finalizer (DestinationUnreachable, retried with backoff) unless the App is annotated
 * plumb.dev/orphan-unreachable: "true".
 * With prune, the `hooks` of the revision last applied (deleteHooksOf) run first (pre-delete)
 * and last (post-delete), as Helm's uninstall runs them; a hook that fails or does not finish
 * in time, or hooks that could not be rendered, keep the finalizer (HookFailed) — a failed
 * pre-delete hook before anything is pruned.
 */
export async function finalizeApp(
  ctx: RunContext,
  prune: boolean,
  hooks?: DeleteHooks,
): Promise<Finalized> {
  const kept = (
    over: Pick<RunOutcome, "inventory" | "failure" | "events">,
    remaining = departed.remaining,
  ): Finalized => ({
    removed: false,
    outcome: {
      resources: ctx.prev.resources ?? [],
      health: { status: ctx.prev.healthStatus ?? "Unknown", reason: ctx.prev.healthReason ?? "" },
      syncStatus: ctx.prev.syncStatus ?? "Unknown",
      ...over,
      departed: remaining,
    },
  });
  const finalizers = ctx.app.metadata.finalizers ?? [];
  const inventory = prune ? ctx.inventory : [];
  const runHooks = prune ? hooks : undefined;
  if (runHooks && !runHooks.ok) {
    const { failure } = runHooks;
    return kept(
      {
        inventory: [...ctx.inventory],
        failure,
        events: [{ type: "Warning", reason: failure.reason, message: failure.message }],
      },
      [...ctx.departed],
    );
  }
  const preDelete = runHooks && (await runDeleteHooks(ctx, runHooks, "pre"));
  if (preDelete) {
    return kept(
      { inventory: [...ctx.inventory], failure: preDelete.failure, events: [preDelete.event] },
      [...ctx.departed],
    );
  }
  // Objects on other clusters first, through the Secrets status.clusters records.
  const departed = await pruneDeparted(ctx, prune);
  if (departed.failure) {
    const message = `finalizer: ${departed.failure.message}`;
    return kept({
      inventory: [...ctx.inventory],
      failure: { ...departed.failure, message },
      events: [...departed.events, { type: "Warning", reason: departed.failure.reason, message }],
    });
  }
  // What was done or kept there (Pruned, PruneSkipped), where `kubectl describe app` shows it.
  for (const event of departed.events) await emit(ctx, event);
  let done: PruneOutcome = { deleted: [], failed: [] };
  let held: PruneSkip[] = [];
  if (inventory.length > 0) {
    const live = await listLive(inventory, ctx.ref, ctx.cluster);
    const owners = await claimedByOthers(ctx, undefined, inventory.map(refKey));
    const plan = await guardCascades(
      ctx,
      planPrune({
        inventory,
        desired: [],
        live,
        claimedByOthers: new Set(owners.keys()),
        claimants: owners,
        app: ctx.ref,
      }),
    );
    done = await executePrune(ctx, plan);
    held = plan.skip.filter((s) => s.keep);
    // What another App renders too stays (a Normal Event naming it), as does what would take
    // others' objects with it (a Warning): say so where `kubectl describe app` shows it.
    for (const skip of plan.skip.filter((s) => s.claimed || s.warn)) {
      await emit(ctx, {
        type: skip.warn ? "Warning" : "Normal",
        reason: EventReason.PruneSkipped,
        message: skip.reason,
      });
    }
  }
  // Failed deletes, and what the cascade guard kept here or on a former destination, keep the
  // finalizer: tracked until pruned (dropped, nothing would ever prune them).
  const message = finalizerWaits(done, held, departed);
  if (message) {
    const failure = { reason: FailureReason.PruneFailed, message, stalled: false };
    return kept({
      inventory: [...done.failed.map((f) => f.ref), ...held.map((s) => s.ref)],
      failure,
      events: [{ type: "Warning", reason: failure.reason, message }],
    });
  }
  // The App's DNS records go with its objects (and stay with them when prune is off).
  const dnsError = prune ? await removeDnsRecords(ctx) : undefined;
  if (dnsError) {
    const failure = { reason: FailureReason.PruneFailed, message: dnsError, stalled: false };
    return kept({
      inventory: [],
      failure,
      events: [{ type: "Warning", reason: failure.reason, message: dnsError }],
    });
  }
  const postDelete = runHooks && (await runDeleteHooks(ctx, runHooks, "post"));
  if (postDelete) {
    return kept({ inventory: [], failure: postDelete.failure, events: [postDelete.event] });
  }
  await ctx.lease?.ensure();
  await ctx.ports.kube.setFinalizers(
    ctx.app,
    finalizers.filter((f) => f !== FINALIZER),
    ctx.lease ? { signal: ctx.lease.signal } : undefined,
  );
  return { removed: true };
}

/**
 * The App's namespace is being deleted (status.phase Terminating): no Lease can be created
 * there (NamespaceLifecycle admission: 403), by this run or any other, so none can be applying.
 */
export async function terminating(ctx: RunContext): Promise<boolean> {
  const ns = await ctx.ports.kube.get({
    apiVersion: "v1",
    kind: "Namespace",
    name: ctx.ref.namespace,
  });
  return (ns?.["status"] as { phase?: string } | undefined)?.phase === "Terminating";
}

/** One Event on the App, redacted; a failure to emit it is logged, never the run's. */
async function emit(ctx: RunContext, event: RunEvent): Promise<void> {
  await ctx.ports.kube
    .emitEvent(ctx.app, {
      ...event,
      message: ctx.ports.redactor?.redact(event.message) ?? event.message,
    })
    .catch((e) => ctx.ports.log?.({ msg: "event failed", error: String(e) }));
}
