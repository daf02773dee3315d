// The apply step, under the App's Lease: what changed, then (after trackInventory) apply it,
// prune what the last inventory has and the render lacks, and take health from the answers.
import type { HealthStatus } from "../app/index.ts";
import {
  describeRef,
  EventReason,
  FailureReason,
  type KubeObject,
  type ObjectRef,
  refKey,
  refOf,
} from "../core/index.ts";
import { assessSet } from "../health/index.ts";
import {
  type ApplyStep,
  appliedOutcome,
  finishedMessages,
  needsOwners,
  ownedFieldsHash,
  placeInventory,
  type RunOutcome,
  staleRefs,
  unchangedObjects,
} from "../plan/index.ts";
import { applyDesired } from "./apply.ts";
import type { RunContext } from "./context.ts";
import { type DepartedOutcome, pruneDeparted } from "./destination.ts";
import { failedOutcome } from "./failed.ts";
import { checkHosts } from "./hosts.ts";
import { finishedHealth } from "./observe.ts";
import { claimedByOthers } from "./ownership.ts";
import { keepStale, pruneStale } from "./prune.ts";
import type { Desired } from "./source.ts";

/** Health the last run saw, by refKey. */
type KnownHealth = Map<string, { status: HealthStatus; message?: string }>;

/** What the apply step settled before writing to the destination. */
export interface SyncPlan {
  /** Objects left alone: applied in this form, seen live and as desired (their last health). */
  unchanged: KnownHealth;
  /** Other Apps' claims on objects (refKey → Apps), read when the apply needs them. */
  owners: Map<string, string[]>;
  /** What the prune of a former destination did. */
  departed: DepartedOutcome;
  /** What the apply may create: tracked in status first (trackInventory). */
  toApply: ObjectRef[];
}

/**
 * The first part of the apply step: which objects changed (an object in the form last applied
 * and seen live and as desired is left alone; an operation — Sync, Deploy, Rollback, Approve:
 * a person asked — applies the whole render again, as Argo CD's sync does); a host another
 * Ingress serves stops it (HostConflict); a former destination is pruned first (or stops it:
 * DestinationUnreachable). The other Apps' inventories are read only when an object is new to
 * this one, a Namespace, or pruned.
 * @returns what to apply, or the outcome of a step that stopped (nothing applied)
 */
export async function planSync(
  ctx: RunContext,
  target: Desired,
  step: ApplyStep,
): Promise<{ plan: SyncPlan } | { stopped: RunOutcome }> {
  const unchanged: KnownHealth = step.operation
    ? new Map()
    : unchangedObjects(target.objects, target.hashes, {
        inventory: ctx.inventory,
        resources: ctx.prev.resources,
        drift: ctx.prev.drift,
      });
  const changed = target.objects.filter((o) => !unchanged.has(refKey(refOf(o))));
  const hostConflict = await checkHosts(ctx, changed);
  if (hostConflict) {
    return { stopped: await failedOutcome(ctx, hostConflict, { operation: step.operation }) };
  }
  const departed = await pruneDeparted(ctx, step.prune);
  if (departed.failure?.reason === FailureReason.DestinationUnreachable) {
    const outcome = await failedOutcome(ctx, departed.failure, { operation: step.operation });
    return {
      stopped: {
        ...outcome,
        departed: departed.remaining,
        events: [...departed.events, ...outcome.events],
      },
    };
  }
  const stale = staleRefs(ctx.inventory, target.objects.map(refOf));
  // Looked up for the objects this run applies or prunes only (applyDesired, pruneStale).
  const owners = needsOwners(changed, ctx.inventory, stale)
    ? await claimedByOthers(ctx, undefined, [...target.objects.map(refOf), ...stale].map(refKey))
    : new Map<string, string[]>();
  const toApply = changed
    .map(refOf)
    .filter((ref) => ref.kind === "Namespace" || !owners.has(refKey(ref)));
  return { plan: { unchanged, owners, departed, toApply } };
}

/**
 * The rest of the apply step, once what it may create is tracked: apply the render (staged:
 * Namespaces and CRDs first; Helm hooks around the rest; exact ownership), prune — only after
 * this render applied, failed deletes staying in the inventory; nothing when a pre-sync hook
 * stopped the apply — and assess health from the objects the API server returned (objects whose
 * apply failed as they are; objects left alone keep the health the last run saw).
 * @returns the outcome, and the objects whose DNS records follow (none while an Ingress failed
 *   to apply: its records must not go for a passing error)
 */
export async function applyAndPrune(
  ctx: RunContext,
  target: Desired,
  step: ApplyStep,
  sync: SyncPlan,
): Promise<{ outcome: RunOutcome; dns?: readonly KubeObject[] }> {
  const { unchanged, owners, departed } = sync;
  const skip = new Set(unchanged.keys());
  const applied = await applyDesired(ctx, target.objects, owners, step.adopt, target.hashes, skip);
  const desiredRefs = target.objects.map(refOf);
  // A later sync wave still to apply: prune waits for it, as in Argo CD (prune runs last).
  const waiting = applied.pending.size > 0 ? [...applied.pending.values()][0] : undefined;
  const prune =
    applied.halted || waiting
      ? keepStale(ctx, desiredRefs, applied.halted ?? waiting ?? "")
      : await pruneStale(ctx, step.prune, desiredRefs, owners);
  const live = new Map([...applied.existing, ...applied.applied]);
  const known: KnownHealth = new Map([
    ...unchanged,
    ...finishedHealth(finishedMessages(applied.finished, target.objects)),
    ...[...applied.pending].map(
      ([key, message]) => [key, { status: "Progressing" as const, message }] as const,
    ),
  ]);
  const health = assessSet(desiredRefs, live, ctx.now, known, ctx.healthChecks);
  const outcome = appliedOutcome({
    target: { ...target, owned: await ownedHashes(applied.applied) },
    sourceRevision: step.source.revision,
    sourceObjectHash: step.source.objectHash,
    recreated: applied.recreated,
    finished: applied.finished,
    reason: step.reason,
    operation: step.operation,
    previous: ctx.inventory,
    applied: applied.applied,
    failed: applied.failed,
    pending: applied.pending,
    uncertain: applied.uncertain,
    prune,
    health,
    now: ctx.now,
  });
  if (applied.adopted) {
    outcome.events.push({
      type: "Normal",
      reason: EventReason.Adopted,
      message: `took over ${applied.adopted.map(describeRef).join(", ")}`,
    });
  }
  outcome.departed = departed.remaining;
  outcome.events.push(...departed.events);
  if (departed.failure && !outcome.failure) outcome.failure = departed.failure;
  ctx.ports.inventories?.record(
    ctx.app,
    placeInventory(outcome.inventory, ctx.destination?.server, departed.remaining),
  );
  const ingressFailed = target.objects.some(
    (o) => o.kind === "Ingress" && applied.failed.has(refKey(refOf(o))),
  );
  return ingressFailed ? { outcome } : { outcome, dns: target.objects };
}

/**
 * ownedFieldsHash of each object as the API server returned it from plumb's apply, by refKey
 * (status.inventory[].owned): what a later run compares the live object's owned fields with.
 */
export async function ownedHashes(
  stored: ReadonlyMap<string, KubeObject>,
): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const [key, obj] of stored) {
    const hash = await ownedFieldsHash(obj);
    if (hash !== undefined) out.set(key, hash);
  }
  return out;
}
