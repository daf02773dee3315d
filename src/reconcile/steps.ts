// The planned steps of one run (plan/run.ts), carried out in one fixed order, each adding to
// the run's outcome; then the run's one status write and its notifications.
import { describeRef, EventReason, KubeApiError, type KubeObject } from "../core/index.ts";
import {
  abortFailure,
  confirmOwned,
  type ObservedInput,
  observedOutcome,
  operationOutcome,
  type RunOutcome,
  type RunPlan,
} from "../plan/index.ts";
import { restartWorkloads } from "./apply.ts";
import type { RunContext } from "./context.ts";
import type { DeleteHooks } from "./delete-hooks.ts";
import { syncDns } from "./dns.ts";
import { correctDrift, healthAfterCorrection } from "./drift.ts";
import { abortedOutcome, failedOutcome } from "./failed.ts";
import { finalizeApp, terminating } from "./finalize.ts";
import { type HeldLease, isRestart, takeLease } from "./lease.ts";
import { type Observation, observe } from "./observe.ts";
import { type Recorded, type RunLine, recordRun, StatusNotWrittenError } from "./record.ts";
import { announceAndRedeliver } from "./redeliver.ts";
import { rejectHeld } from "./reject.ts";
import type { Desired } from "./source.ts";
import { applyAndPrune, planSync } from "./sync.ts";
import { trackInventory } from "./track.ts";

/** A run made ready for its steps (reconcile.ts): where it is, its plan and its render. */
export interface PreparedRun {
  /** The context reached: the App's, at its destination once connected. */
  ctx: RunContext;
  /** spec.interval, or the default when the spec is invalid. */
  interval: string;
  plan: RunPlan;
  /** The render the plan names (plan.render): the head's, or another revision's. */
  target?: Desired | undefined;
  /** For a finalize: the delete hooks of the revision last applied (deleteHooksOf). */
  deleteHooks?: DeleteHooks | undefined;
}

/** A 409 from the API server: another writer changed the App; the run starts over. */
export function isConflict(e: unknown): boolean {
  return e instanceof KubeApiError && e.status === 409;
}

/**
 * True for an error a run records as its failure (planAbort) rather than passing up: not a
 * reason to start over (a busy, lost or stale Lease, a 409), and not a status write that
 * already failed (StatusNotWrittenError: its Event is emitted).
 */
export function isRecordable(e: unknown): boolean {
  return !isRestart(e) && !isConflict(e) && !(e instanceof StatusNotWrittenError);
}

/** What the steps found so far: a partial outcome, its Events in the order they happened. */
type Draft = Partial<RunOutcome> & Pick<RunOutcome, "events">;

/** `draft` with what a step found: its fields replace the draft's, its Events follow. */
function merge(draft: Draft, found: Partial<RunOutcome>): Draft {
  const next: Draft = { ...draft };
  for (const [key, value] of Object.entries(found)) {
    if (key !== "events" && value !== undefined) (next as Record<string, unknown>)[key] = value;
  }
  next.events = [...draft.events, ...(found.events ?? [])];
  return next;
}

/** A draft every plan completes (a stop, an observation, an apply or a finalize sets these). */
function complete(draft: Draft): RunOutcome {
  const { inventory, resources, health, syncStatus } = draft;
  if (!inventory || !resources || !health || !syncStatus) {
    throw new Error("the run's plan left its outcome incomplete");
  }
  return { ...draft, inventory, resources, health, syncStatus };
}

/**
 * Carries out `run.plan`: its steps in one fixed order, each when the plan has it and each
 * adding to the run's outcome (steps 8–18 below), then the one status write (19) and the
 * notifications (20). When the plan holds the Lease, it is taken before the first write that
 * runs (finalize, restart, apply, heal, DNS) and released after step 20. An error no step
 * expected (a recordable one: isRecordable) is recorded from the context reached; when the
 * status write itself fails for good, that failure is recorded instead, once.
 */
export async function carryOut(run: PreparedRun): Promise<RunLine> {
  const { plan, interval, target } = run;
  let ctx = run.ctx;
  let held: HeldLease | undefined;
  let leased = false;
  /**
   * Before a write: the Lease, when the plan holds one and this is the first write, and the
   * proof that the App is unchanged since the run read it (takeLease, 2) — left to the caller
   * when `lazy` (the apply step, whose inventory tracking write may give that proof).
   */
  const writing = async (lazy = false): Promise<void> => {
    if (!plan.lease) return;
    if (leased) {
      if (!lazy) await held?.verify();
      return;
    }
    leased = true;
    try {
      held = await takeLease(ctx, { lazy });
      ctx = held.ctx;
    } catch (e) {
      // In a terminating namespace no Lease can be created, by this run or any other, so none
      // can be applying: the finalizer goes on without it.
      if (
        plan.finalize &&
        e instanceof KubeApiError &&
        e.status === 403 &&
        (await terminating(ctx))
      ) {
        return;
      }
      throw e;
    }
  };
  try {
    let draft: Draft = { events: [] };
    let outcome: RunOutcome;
    try {
      // The render the observation compares with and heal and DNS work on, when there is one.
      const desired = plan.render === "none" ? undefined : target;
      let dnsObjects: readonly KubeObject[] | undefined = desired?.objects;

      // 8. Stop at a failure: nothing applied or pruned; health observed anew (or, for an
      //    error no step expected, the stored status).
      if (plan.stop) {
        const { stop } = plan;
        draft = merge(
          draft,
          stop.stored
            ? abortedOutcome(ctx, stop.failure)
            : await failedOutcome(ctx, stop.failure, {
                operation: stop.operation,
                outOfSync: stop.outOfSync,
              }),
        );
      }

      // 9. Finalize an App being deleted: prune its inventory, then remove the finalizer.
      if (plan.finalize) {
        await writing();
        const done = await finalizeApp(ctx, plan.finalize.prune, run.deleteHooks);
        if (done.removed) return { app: ctx.id, outcome: "Finalized" };
        draft = merge(draft, done.outcome);
      }

      // 10. Restart the inventory's workloads (a Restart operation).
      if (plan.restart) {
        await writing();
        draft = merge(draft, await restart(ctx, plan.restart.operation));
      }

      // 11. Observe: list the live objects, assess their health, compare with the render. A
      //     held render is a preview, not drift.
      let seen: { observation: Observation; input: ObservedInput } | undefined;
      if (plan.observe) {
        const observation = await observe(ctx, desired, plan.observe.held);
        const input: ObservedInput = {
          prev: ctx.prev,
          inventory: observation.inventory,
          desired,
          comparison: observation.comparison,
          health: observation.health,
          syncStatus: plan.observe.syncStatus,
        };
        seen = { observation, input };
        draft = merge(draft, observedOutcome(input));
      }

      // 12. Hold: stage the render for approval.
      if (plan.hold) {
        const { revision, objectHash } = plan.hold;
        draft = merge(draft, {
          held: { revision, objectHash },
          events: [
            {
              type: "Normal",
              reason: EventReason.Held,
              message: `revision ${revision} is waiting for approval`,
            },
          ],
        });
      }

      // 13. Reject: turn the held revision down.
      if (plan.reject) draft = merge(draft, rejectHeld(ctx, plan.reject, draft.resources ?? []));

      // 14. Refuse: an operation the gates refused is consumed as Failed.
      if (plan.refuse) {
        const { operation, message } = plan.refuse;
        const done = operationOutcome(operation, "Failed", message, ctx.now);
        draft = merge(draft, { operationState: done.state, events: [done.event] });
      }

      // 15. Apply: what changed (or stop: a host conflict, an unreachable former destination),
      //     tracked in status first (trackInventory, whose conditional write also proves the App
      //     unchanged under the Lease), applied, then prune and health.
      if (plan.apply && desired) {
        // Pruning a former destination writes before anything is tracked: the proof first.
        await writing(ctx.departed.length === 0);
        const sync = await planSync(ctx, desired, plan.apply);
        dnsObjects = undefined;
        if ("stopped" in sync) draft = merge(draft, sync.stopped);
        else {
          ctx = await trackInventory(ctx, sync.plan.toApply);
          // A re-read of the App only when the tracking write did not prove it unchanged.
          await held?.verify();
          const synced = await applyAndPrune(ctx, desired, plan.apply, sync.plan);
          draft = merge(draft, synced.outcome);
          dnsObjects = synced.dns;
        }
      }

      // 16. Heal: selfHeal re-applies what step 11 found drifted — while a sync window holds
      //     automated sync back, the window is recorded instead.
      const drift = seen?.observation.comparison.drift ?? [];
      if (plan.heal && seen && desired && drift.length > 0) {
        if (plan.heal.blockedBy) draft = merge(draft, { syncWindow: plan.heal.blockedBy });
        else {
          await writing();
          const { applied, stored, event } = await correctDrift(ctx, desired, drift);
          // What the correction stored is what the next run compares the owned fields with.
          const inventory = await confirmOwned(seen.observation.inventory, applied, stored);
          // Health from what exists after the correction: the objects it stored are live.
          const { assessed, health: observed } = seen.observation;
          const health = healthAfterCorrection(assessed, observed, stored, ctx.now);
          draft = merge(
            draft,
            observedOutcome({
              ...seen.input,
              inventory,
              prev: ctx.prev,
              corrected: { applied, event, health },
            }),
          );
        }
      }

      // 17. The sync window that held automated sync back (status.nextSyncWindow).
      if (plan.syncWindow) draft = merge(draft, { syncWindow: plan.syncWindow });

      // 18. DNS: the records of the render's Ingress hosts (not while an Ingress failed to
      //     apply).
      if (plan.dns && dnsObjects) {
        await writing();
        const dns = await syncDns(ctx, dnsObjects);
        if (dns) draft = merge(draft, { dns: dns.condition, events: dns.events });
      }
      outcome = complete(draft);
    } catch (e) {
      if (!isRecordable(e)) throw e;
      outcome = abortedOutcome(ctx, abortFailure(e));
    }

    // 19. Record: compose status, write it once (writeStatusChecked), emit the run's Events. A
    //     status write that fails for good is recorded as the run's failure instead, once.
    let recorded: Recorded | undefined;
    for (let attempt = 1; !recorded; attempt++) {
      try {
        recorded = await recordRun(ctx, interval, { ...outcome, ...plan.found });
      } catch (e) {
        if (attempt > 1 || !isRecordable(e)) throw e;
        outcome = abortedOutcome(ctx, abortFailure(e));
      }
    }

    // 20. Notify: the transitions to each target, after what earlier runs could not send.
    if (plan.notify) await announceAndRedeliver(ctx, recorded.app, recorded.transitions);
    return recorded.line;
  } finally {
    await held?.release();
  }
}

/** The restart step: annotate the inventory's workloads (rollout restart); the operation's outcome. */
async function restart(
  ctx: RunContext,
  operation: NonNullable<RunPlan["restart"]>["operation"],
): Promise<Partial<RunOutcome>> {
  const { restarted, failed } = await restartWorkloads(ctx.inventory, ctx.cluster, ctx.now);
  const message =
    failed.size > 0
      ? [...failed.values()].join("; ")
      : `restarted ${restarted.map(describeRef).join(", ") || "nothing"}`;
  const done = operationOutcome(
    operation,
    failed.size > 0 ? "Failed" : "Succeeded",
    message,
    ctx.now,
  );
  return { operationState: done.state, events: [done.event] };
}
