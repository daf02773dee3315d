// One-shot operations (spec.operation): which one is pending, and how its outcome is recorded.
import type { AppSpec, AppStatus, Operation, OperationState } from "../app/index.ts";
import { EventReason } from "../core/index.ts";
import type { RunEvent } from "./events.ts";

/**
 * True when `state` records the end of operation `id`: an operation runs once per id
 * (status.operationState.id), and a Running one is not finished yet.
 */
export function operationFinished(state: OperationState | undefined, id: unknown): boolean {
  return state !== undefined && state.id === id && state.phase !== "Running";
}

/** The operation in spec not yet consumed (see operationFinished), or undefined. */
export function pendingOperation(spec: AppSpec, status: AppStatus): Operation | undefined {
  const op = spec.operation;
  if (!op) return undefined;
  return operationFinished(status.operationState, op.id) ? undefined : op;
}

/**
 * The finished state of `op` (startedAt = finishedAt = now: a run consumes it whole) and the
 * Event that announces it (OperationSucceeded, Normal; OperationFailed, Warning).
 */
export function operationOutcome(
  op: Pick<Operation, "id" | "type" | "revision" | "requestedBy">,
  phase: "Succeeded" | "Failed",
  message: string,
  now: Date,
): { state: OperationState; event: RunEvent } {
  const state: OperationState = {
    id: op.id,
    type: op.type,
    phase,
    message,
    startedAt: now.toISOString(),
    finishedAt: now.toISOString(),
  };
  if (op.revision) state.revision = op.revision;
  if (op.requestedBy) state.requestedBy = op.requestedBy;
  const event: RunEvent =
    phase === "Succeeded"
      ? {
          type: "Normal",
          reason: EventReason.OperationSucceeded,
          message: `${op.type}: ${message}`,
        }
      : { type: "Warning", reason: EventReason.OperationFailed, message: `${op.type}: ${message}` };
  return { state, event };
}
