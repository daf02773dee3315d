// Gates: what a run may do, decided from the spec, the last status and what the source says now.
import type { AppSpec, AppStatus, Operation } from "../app/index.ts";
import { FailureReason, GateReason, matchRevision, shortRevision } from "../core/index.ts";
import { pendingOperation } from "./operations.ts";
import type { Failure } from "./status.ts";
import { syncBlocked, type WindowBlock } from "./windows.ts";

/** What the source names now: its revision and the hash of its render. */
export interface SourceHead {
  revision: string;
  objectHash: string;
}

export type Decision =
  /** Apply `revision` (which may be other than the source's current one: rollback, approve). */
  | { action: "apply"; revision: string; reason: GateReason; operation?: Operation }
  /** Stage `revision` as Held until approved. */
  | { action: "hold"; revision: string; reason: GateReason }
  /** Turn the held revision down: it is not held or announced again. */
  | {
      action: "reject";
      revision: string;
      objectHash?: string;
      reason: GateReason;
      operation: Operation;
    }
  /** Restart the workloads (rollout restart), then health as usual. */
  | { action: "restart"; reason: GateReason; operation: Operation }
  /**
   * Apply nothing. `operation`, when set, is refused: consumed as Failed with `message`.
   * `window`, when set, is the sync window that blocks automated sync (and selfHeal) now.
   */
  | {
      action: "none";
      reason: GateReason;
      operation?: Operation;
      message?: string;
      window?: WindowBlock;
    };

/**
 * True when the source's render differs from what was last applied. The rendered objects
 * decide (objectHash), not the commit: in a monorepo a commit that changes another App's path
 * changes nothing here, as Argo CD compares manifests, not revisions.
 */
export function outOfSync(status: AppStatus, head: SourceHead): boolean {
  return status.objectHash !== head.objectHash;
}

/** The render a Rollback moved away from (by objectHash; by revision for older statuses). */
function rolledBackFrom(status: AppStatus, head: SourceHead): boolean {
  if (status.rolledBackFromObjectHash !== undefined) {
    return status.rolledBackFromObjectHash === head.objectHash;
  }
  return status.rolledBackFrom !== undefined && status.rolledBackFrom === head.revision;
}

/**
 * The gates, in order (docs/design.md, "The reconcile"):
 * 1. `spec.freeze`: apply nothing; a pending operation fails ("App is frozen").
 * 2. a pending `spec.operation`, consumed once by id: Sync/Deploy apply the source's revision;
 *    Rollback applies a revision from status.previousRevisions (or the current one);
 *    Approve applies status.heldRevision if the operation names it; Reject turns it down;
 *    Restart restarts.
 * 3. `syncPolicy.requiresApproval`: a render (objectHash) not yet applied is Held, once, unless
 *    that render was rejected (status.rejectedObjectHash) or is the one a Rollback moved away
 *    from (found by a new user's trial: it was held again right after the rollback).
 * 4. `syncPolicy.automated`: apply a render that differs from the applied one, except the render
 *    a Rollback moved away from (Argo CD disables auto-sync on rollback; plumb waits for a new
 *    render instead) and a render whose apply failed terminally (status.failedObjectHash: an
 *    immutable field; Argo CD does not auto-sync a revision whose sync failed either).
 *    And except while `spec.syncWindows` block automated sync (OutsideSyncWindow).
 * 5. otherwise apply nothing (OutOfSync or Synced, health only).
 * A commit whose render equals the applied one is observed, never applied, held or announced.
 * Sync windows (Argo CD's semantics: see windows.ts) also refuse a Sync, Deploy,
 * Rollback or Approve operation unless the blocking windows have manualSync; a Restart is not a
 * sync and passes (as Argo CD's resource actions do). Holding for approval is not a sync either.
 * @param now the run's clock, for the sync windows
 */
export function decide(spec: AppSpec, status: AppStatus, head: SourceHead, now: Date): Decision {
  const op = pendingOperation(spec, status);
  if (spec.freeze) {
    return op
      ? refuse(op, "App is frozen: operations are refused while spec.freeze is true")
      : { action: "none", reason: GateReason.Frozen };
  }
  if (op) {
    const decision = decideOperation(op, status, head);
    const block =
      decision.action === "apply" ? syncBlocked(spec.syncWindows, true, now) : undefined;
    return block ? refuse(op, block.message) : decision;
  }
  const differs = outOfSync(status, head);
  if (spec.syncPolicy.requiresApproval && differs) {
    if (status.heldObjectHash === head.objectHash) {
      return { action: "none", reason: GateReason.AwaitingApproval };
    }
    if (rejected(status, head)) return { action: "none", reason: GateReason.Rejected };
    // The render a Rollback moved away from is not offered for approval again (as automated
    // sync does not re-apply it): a new render is.
    if (rolledBackFrom(status, head)) return { action: "none", reason: GateReason.RolledBack };
    return { action: "hold", revision: head.revision, reason: GateReason.RequiresApproval };
  }
  const window = spec.syncPolicy.automated ? syncBlocked(spec.syncWindows, false, now) : undefined;
  const blocked = window ? { window } : {};
  if (spec.syncPolicy.automated && differs) {
    if (rolledBackFrom(status, head)) {
      return { action: "none", reason: GateReason.RolledBack, ...blocked };
    }
    if (status.failedObjectHash === head.objectHash) {
      return { action: "none", reason: GateReason.ApplyStalled, ...blocked };
    }
    if (window) return { action: "none", reason: GateReason.OutsideSyncWindow, window };
    return { action: "apply", revision: head.revision, reason: GateReason.Automated };
  }
  return {
    action: "none",
    reason: differs ? GateReason.ManualSync : GateReason.UpToDate,
    ...blocked,
  };
}

function decideOperation(op: Operation, status: AppStatus, head: SourceHead): Decision {
  switch (op.type) {
    case "Sync":
    case "Deploy":
      return {
        action: "apply",
        revision: head.revision,
        reason: GateReason[op.type],
        operation: op,
      };
    case "Restart":
      return { action: "restart", reason: GateReason.Restart, operation: op };
    case "Approve": {
      const held = status.heldRevision;
      if (!held) return refuse(op, "nothing is held for approval");
      if (!namesHeld(op.revision, held)) {
        return refuse(
          op,
          `stale approval: ${op.revision} is not the held revision ${shortRevision(held)}`,
        );
      }
      const approved = { ...op, revision: held };
      return { action: "apply", revision: held, reason: GateReason.Approved, operation: approved };
    }
    case "Reject": {
      const held = status.heldRevision;
      if (!held) return refuse(op, "nothing is held to reject");
      if (!namesHeld(op.revision, held)) {
        return refuse(
          op,
          `stale rejection: ${op.revision} is not the held revision ${shortRevision(held)}`,
        );
      }
      const decision: Decision = {
        action: "reject",
        revision: held,
        reason: GateReason.Rejected,
        operation: { ...op, revision: held },
      };
      if (status.heldObjectHash !== undefined) decision.objectHash = status.heldObjectHash;
      return decision;
    }
    case "Rollback": {
      const given = op.revision ?? status.previousRevisions?.[0]?.revision;
      if (!given) return refuse(op, "no previous revision to roll back to");
      const known = [
        ...(status.revision ? [status.revision] : []),
        ...(status.previousRevisions ?? []).map((r) => r.revision),
      ];
      const named = matchRevision(given, known, "status.previousRevisions");
      if ("error" in named) return refuse(op, named.error);
      const target = named.revision;
      const operation = { ...op, revision: target };
      return { action: "apply", revision: target, reason: GateReason.Rollback, operation };
    }
  }
}

/**
 * Whether an Approve or Reject names the held revision: no revision given, or the revision, its
 * short form or an unambiguous prefix of 7+ hex characters (Slack and kubectl show 7).
 */
function namesHeld(given: string | undefined, held: string): boolean {
  return given === undefined || !("error" in matchRevision(given, [held]));
}

/** The source names exactly what a Reject turned down (same revision and rendered set). */
/** The render a Reject turned down (by objectHash: another commit rendering it is rejected too). */
function rejected(status: AppStatus, head: SourceHead): boolean {
  if (status.rejectedObjectHash !== undefined) return status.rejectedObjectHash === head.objectHash;
  return status.rejectedRevision === head.revision;
}

function refuse(operation: Operation, message: string): Decision {
  return { action: "none", reason: GateReason.OperationRefused, operation, message };
}

/**
 * The empty-render rule (Argo CD's allowEmpty): a render with no objects while the App owns
 * some would prune everything; refuse it (RenderFailed, not Stalled) unless
 * syncPolicy.allowEmpty. Undefined when the render may proceed.
 */
export function refuseEmptyRender(
  spec: AppSpec,
  rendered: number,
  owned: number,
  revision: string,
): Failure | undefined {
  if (rendered > 0 || owned === 0 || spec.syncPolicy.allowEmpty) return undefined;
  return {
    reason: FailureReason.RenderFailed,
    message: `revision ${revision} renders no objects; refusing to prune all ${owned} (set spec.syncPolicy.allowEmpty to allow it)`,
    stalled: false,
  };
}
