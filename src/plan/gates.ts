// Gates: what a run may do, decided from the spec, the last status and what the source says now.
import type { AppSpec, AppStatus, Operation } from "../app/index.ts";

/** What the source resolved to this run. */
export interface Desired {
  revision: string;
  objectHash: string;
}

export type Decision =
  /** Apply `revision` (which may be other than the source's current one: rollback, approve). */
  | { action: "apply"; revision: string; reason: string; operation?: Operation }
  /** Stage `revision` as Held until approved. */
  | { action: "hold"; revision: string; reason: string }
  /** Restart the workloads (rollout restart), then health as usual. */
  | { action: "restart"; reason: string; operation: Operation }
  /** Apply nothing. `operation`, when set, is consumed as Failed with `reason`. */
  | { action: "none"; reason: string; operation?: Operation; operationFailed?: boolean };

/** The operation in spec not yet consumed (its id differs from status.operationState.id). */
export function pendingOperation(spec: AppSpec, status: AppStatus): Operation | undefined {
  const op = spec.operation;
  if (!op) return undefined;
  return status.operationState?.id === op.id ? undefined : op;
}

/** True when `desired` differs from what was last applied. */
export function outOfSync(status: AppStatus, desired: Desired): boolean {
  return status.revision !== desired.revision || status.objectHash !== desired.objectHash;
}

/**
 * The gates, in order (DESIGN.md step 4):
 * 1. `spec.freeze`: apply nothing; a pending operation fails ("App is frozen").
 * 2. a pending `spec.operation`, consumed once by id: Sync/Deploy apply the source's revision;
 *    Rollback applies a revision from status.previousRevisions (or the current one);
 *    Approve applies status.heldRevision if the operation names it; Restart restarts.
 * 3. `syncPolicy.requiresApproval`: a revision or objectHash not yet applied is Held.
 * 4. `syncPolicy.automated`: apply what differs, except the revision a Rollback moved away
 *    from (Argo CD disables auto-sync on rollback; plumb waits for a newer revision instead).
 * 5. otherwise apply nothing (OutOfSync or Synced, health only).
 */
export function decide(spec: AppSpec, status: AppStatus, desired: Desired): Decision {
  const op = pendingOperation(spec, status);
  if (spec.freeze) {
    return op
      ? {
          action: "none",
          reason: "App is frozen: operations are refused while spec.freeze is true",
          operation: op,
          operationFailed: true,
        }
      : { action: "none", reason: "Frozen" };
  }
  if (op) return decideOperation(op, status, desired);
  const differs = outOfSync(status, desired);
  if (spec.syncPolicy.requiresApproval && differs) {
    if (status.heldRevision === desired.revision && status.heldObjectHash === desired.objectHash) {
      return { action: "none", reason: "AwaitingApproval" };
    }
    return { action: "hold", revision: desired.revision, reason: "RequiresApproval" };
  }
  if (spec.syncPolicy.automated && differs) {
    if (status.rolledBackFrom !== undefined && status.rolledBackFrom === desired.revision) {
      return { action: "none", reason: "RolledBack" };
    }
    return { action: "apply", revision: desired.revision, reason: "Automated" };
  }
  return { action: "none", reason: differs ? "ManualSync" : "UpToDate" };
}

function decideOperation(op: Operation, status: AppStatus, desired: Desired): Decision {
  switch (op.type) {
    case "Sync":
    case "Deploy":
      return { action: "apply", revision: desired.revision, reason: op.type, operation: op };
    case "Restart":
      return { action: "restart", reason: "Restart", operation: op };
    case "Approve": {
      const held = status.heldRevision;
      if (!held) return fail(op, "nothing is held for approval");
      if (op.revision !== undefined && op.revision !== held) {
        return fail(op, `stale approval: ${op.revision} is not the held revision ${held}`);
      }
      return { action: "apply", revision: held, reason: "Approved", operation: op };
    }
    case "Rollback": {
      const target = op.revision ?? status.previousRevisions?.[0]?.revision;
      if (!target) return fail(op, "no previous revision to roll back to");
      const known =
        target === status.revision ||
        (status.previousRevisions ?? []).some((r) => r.revision === target);
      if (!known) return fail(op, `revision ${target} is not in status.previousRevisions`);
      return { action: "apply", revision: target, reason: "Rollback", operation: op };
    }
  }
}

function fail(operation: Operation, reason: string): Decision {
  return { action: "none", reason, operation, operationFailed: true };
}
