// A Reject operation: turn the held revision down. Status records it, so the gates
// neither hold nor announce that revision again; nothing is applied.
import type { ResourceStatus } from "../app/index.ts";
import { EventReason } from "../core/index.ts";
import { dropPreview, operationOutcome, type RunOutcome, type RunPlan } from "../plan/index.ts";
import type { RunContext } from "./context.ts";

/**
 * The reject step, after the run observed health only (nothing is compared with a revision
 * nobody wants): clears status.heldRevision, sets status.rejectedRevision (and its
 * objectHash), records the operation as Succeeded with its requestedBy and emits a Normal
 * Event "Rejected"; the approval preview is dropped from `resources` (the observed lines).
 * The inventory stays as stored.
 */
export function rejectHeld(
  ctx: RunContext,
  reject: NonNullable<RunPlan["reject"]>,
  resources: readonly ResourceStatus[],
): Partial<RunOutcome> {
  const { revision, objectHash, operation } = reject;
  const done = operationOutcome(operation, "Succeeded", `rejected revision ${revision}`, ctx.now);
  return {
    inventory: [...ctx.inventory],
    resources: dropPreview([...resources], ctx.inventory),
    held: null,
    rejected: objectHash === undefined ? { revision } : { revision, objectHash },
    operationState: done.state,
    events: [
      done.event,
      {
        type: "Normal",
        reason: EventReason.Rejected,
        message: `revision ${revision} was rejected by ${operation.requestedBy ?? "unknown"}`,
      },
    ],
  };
}
