// What a run that applied a revision records: inventory, resource lines, sync status, the
// operation's outcome and Events, from what the apply and prune steps found. Pure.
import {
  ANNOTATION_RECREATE,
  type HealthStatus,
  type Operation,
  type ResourceStatus,
} from "../app/index.ts";
import {
  describeRef,
  EventReason,
  FailureReason,
  type KubeObject,
  type ObjectRef,
  refKey,
  refOf,
} from "../core/index.ts";
import type { RunEvent } from "./events.ts";
import { markFinished } from "./finished.ts";
import { inventoryAfterApply } from "./inventory.ts";
import { operationOutcome } from "./operations.ts";
import type { PruneSkip } from "./prune.ts";
import { resourceStatus, sortResources } from "./resources.ts";
import type { RunOutcome } from "./status.ts";

/** Why one object did not apply. */
export interface FailedApply {
  /** Short (no object dumps): for status.resources, the conditions and the Warning Event. */
  message: string;
  /** Retrying the same render cannot help (a 422 from the API server; readApplyError). */
  terminal: boolean;
}

export interface AppliedInput {
  /** The revision applied and its render (with each object's hash, for the inventory). */
  target: {
    revision: string;
    objects: readonly KubeObject[];
    objectHash: string;
    hashes?: ReadonlyMap<string, string>;
    /** Its pre-delete and post-delete hooks (recorded for the finalizer). */
    deleteHooks?: readonly KubeObject[];
    /** ownedFieldsHash of each object applied, as the API server stored it, by refKey. */
    owned?: ReadonlyMap<string, string>;
  };
  /** What the source names now (differs from target.revision for a Rollback or an Approve). */
  sourceRevision: string;
  /** The objectHash of the source's render, when it rendered. */
  sourceObjectHash?: string | undefined;
  /** Why the gates applied, and the operation consumed, if any. */
  reason: string;
  operation?: Operation | undefined;
  /** status.inventory before the run. */
  previous: readonly ObjectRef[];
  /** Objects as the API server stored them (by refKey), and failures (by refKey). */
  applied: ReadonlyMap<string, KubeObject>;
  failed: ReadonlyMap<string, FailedApply>;
  /** Objects deleted and created again because an immutable field changed (plumb.dev/recreate). */
  recreated?: ReadonlyArray<{ ref: ObjectRef; fields: readonly string[] }>;
  /** Jobs not applied: finished and removed by their TTL (marked `finished` in the inventory). */
  finished?: ReadonlySet<string>;
  /** refKeys of failed objects the API server may have stored all the same. */
  uncertain?: ReadonlySet<string>;
  /**
   * Objects of a later sync wave not applied yet (an earlier wave is not healthy), with why:
   * OutOfSync, not failed; the render is not recorded as applied (no objectHash), so the next
   * run applies again and goes on.
   */
  pending?: ReadonlyMap<string, string>;
  /** What the prune step did: deleted, failed deletes, skips, and objects kept (prune off). */
  prune: {
    deleted: readonly ObjectRef[];
    failed: ReadonlyArray<{ ref: ObjectRef; message: string }>;
    skipped: readonly PruneSkip[];
    /** Stale objects left alone because syncPolicy.prune is false (still live). */
    unpruned: readonly ObjectRef[];
  };
  /**
   * Health of the desired objects by refKey (from the apply responses, and for a failed apply
   * from the object as it is: one that exists is never shown Missing), and the aggregate.
   */
  health: {
    byKey: ReadonlyMap<string, { status: HealthStatus; message?: string }>;
    status: HealthStatus;
    reason: string;
  };
  now: Date;
}

/**
 * The App's health while a prune waits for a rollout: Progressing instead of Healthy (the App
 * has not settled, and a Progressing App is run again soon: followUpSeconds, dueAt), with the
 * first pending prune as the reason. Otherwise `health` as it is.
 */
function pendingHealth(
  health: AppliedInput["health"],
  skipped: readonly PruneSkip[],
): { status: HealthStatus; reason: string } {
  const pending = skipped.find((s) => s.pendingSince !== undefined);
  if (pending === undefined || health.status !== "Healthy") {
    return { status: health.status, reason: health.reason };
  }
  return { status: "Progressing", reason: pending.reason };
}

/**
 * The record of a run that applied `target`:
 * - inventory: see inventoryAfterApply (failed deletes, kept skips and unpruned objects stay),
 *   Jobs its TTL removed marked `finished` (markFinished);
 * - resources: Synced with health for each applied object, Failed with the error and the
 *   object's own health (Missing only when it does not exist) for each failed one, Pruned /
 *   PruneFailed / PruneSkipped / PrunePending (holdInUse) / OutOfSync ("prune is off") for the
 *   stale ones; health Progressing while a prune is pending (pendingHealth);
 * - applied: the revision, and the objectHash only when every object applied (so the next run
 *   applies again); nothing when no object applied at all;
 * - rolledBackFrom: the source revision a Rollback moved away from, and its render's objectHash
 *   (cleared otherwise);
 * - syncStatus: Synced when everything applied and pruned and target is the source's revision;
 * - failure: ApplyFailed (all object errors; Stalled when every one is terminal: the same
 *   render would fail again, so automated sync waits for another render — `failedObjectHash`),
 *   else PruneFailed;
 * - Events: Applied (count), Recreated (each object deleted and created again), Pruned
 *   (names), a Warning ApplyFailed for every failed apply, a Warning PruneSkipped per
 *   prune refused because it would delete others' objects, the operation's outcome.
 */
export function appliedOutcome(input: AppliedInput): RunOutcome {
  const desiredRefs = input.target.objects.map(refOf);
  const resources: ResourceStatus[] = [];
  const events: RunEvent[] = [];
  const failures: string[] = [];
  for (const ref of desiredRefs) {
    const key = refKey(ref);
    const error = input.failed.get(key);
    const waiting = input.pending?.get(key);
    if (error === undefined && waiting !== undefined) {
      resources.push(resourceStatus(ref, "OutOfSync", input.health.byKey.get(key), waiting));
    } else if (error === undefined) {
      resources.push(resourceStatus(ref, "Synced", input.health.byKey.get(key)));
    } else {
      failures.push(`${describeRef(ref)}: ${error.message}`);
      const health = input.health.byKey.get(key) ?? { status: "Missing" as const };
      resources.push(resourceStatus(ref, "Failed", health, error.message));
    }
  }
  for (const ref of input.prune.deleted) resources.push(resourceStatus(ref, "Pruned", undefined));
  const pruneErrors = input.prune.failed.map((f) => `${describeRef(f.ref)}: ${f.message}`);
  for (const f of input.prune.failed) {
    resources.push(resourceStatus(f.ref, "PruneFailed", undefined, f.message));
  }
  for (const skip of input.prune.skipped) {
    const status = skip.pendingSince !== undefined ? "PrunePending" : "PruneSkipped";
    resources.push(resourceStatus(skip.ref, status, undefined, skip.reason));
  }
  for (const ref of input.prune.unpruned) {
    resources.push(resourceStatus(ref, "OutOfSync", undefined, "not in the source; prune is off"));
  }
  const owned = inventoryAfterApply({
    previous: input.previous,
    desired: desiredRefs,
    // Not applied yet is, for the inventory, as not applied: the earlier form's hash stays.
    failed: new Set([...input.failed.keys(), ...(input.pending?.keys() ?? [])]),
    ...(input.uncertain ? { uncertain: input.uncertain } : {}),
    kept: [
      ...input.prune.failed.map((f) => f.ref),
      ...input.prune.skipped
        .filter((s) => s.keep)
        .map((s) =>
          s.pendingSince !== undefined ? { ...s.ref, prunePending: s.pendingSince } : s.ref,
        ),
      ...input.prune.unpruned,
    ],
    hashes: input.target.hashes,
    owned: input.target.owned,
  });
  const inventory = markFinished(owned, input.finished ?? new Set());

  if (input.applied.size > 0) {
    events.push({
      type: "Normal",
      reason: EventReason.Applied,
      message: `applied revision ${input.target.revision}: ${input.applied.size} object(s)`,
    });
  }
  for (const r of input.recreated ?? []) {
    events.push({
      type: "Normal",
      reason: EventReason.Recreated,
      message: `recreated ${describeRef(r.ref)}: ${r.fields.join(", ")} cannot change in place (${ANNOTATION_RECREATE}: "true")`,
    });
  }
  if (input.prune.deleted.length > 0) {
    events.push({
      type: "Normal",
      reason: EventReason.Pruned,
      message: `pruned ${input.prune.deleted.map(describeRef).join(", ")}`,
    });
  }
  for (const skip of input.prune.skipped.filter((s) => s.warn)) {
    events.push({ type: "Warning", reason: EventReason.PruneSkipped, message: skip.reason });
  }
  const failed = failures.length > 0 || pruneErrors.length > 0;
  const pending = (input.pending?.size ?? 0) > 0;
  const rolledBack = input.reason === "Rollback" && input.target.revision !== input.sourceRevision;
  const out: RunOutcome = {
    inventory,
    resources: sortResources(resources),
    health: pendingHealth(input.health, input.prune.skipped),
    syncStatus:
      !failed && !pending && input.target.revision === input.sourceRevision
        ? "Synced"
        : "OutOfSync",
    events,
    rolledBackFrom: rolledBack ? input.sourceRevision : null,
    rolledBackFromObjectHash: rolledBack ? (input.sourceObjectHash ?? null) : null,
  };
  // A partial apply records the revision but not the hash, so the next run applies again
  // (a CRD installed since, a namespace created since) instead of calling the set applied.
  if (input.applied.size > 0 || failures.length === 0) {
    if (input.target.deleteHooks) out.deleteHooks = input.target.deleteHooks.map(refOf);
    out.applied =
      failures.length > 0 || pending
        ? { revision: input.target.revision }
        : { revision: input.target.revision, objectHash: input.target.objectHash };
  }
  if (failures.length === 0) out.failedObjectHash = null;
  if (failures.length > 0) {
    const stalled = [...input.failed.values()].every((f) => f.terminal);
    out.failure = {
      reason: FailureReason.ApplyFailed,
      message: failures.join("; "),
      stalled,
    };
    events.push({
      type: "Warning",
      reason: FailureReason.ApplyFailed,
      message: out.failure.message,
    });
    if (stalled) out.failedObjectHash = input.target.objectHash;
  } else if (pruneErrors.length > 0) {
    out.failure = {
      reason: FailureReason.PruneFailed,
      message: pruneErrors.join("; "),
      stalled: false,
    };
  }
  if (input.operation) {
    const message = failed
      ? [...failures, ...pruneErrors].join("; ")
      : pending
        ? `applied ${input.target.revision} in part: ${[...(input.pending?.values() ?? [])][0]}`
        : `applied ${input.target.revision}`;
    const done = operationOutcome(
      input.operation,
      failed ? "Failed" : "Succeeded",
      message,
      input.now,
    );
    out.operationState = done.state;
    events.push(done.event);
  }
  return out;
}
