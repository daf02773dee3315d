// A Reject operation: turn the held revision down. Status records it, so the gates
// neither hold nor announce that revision again; nothing is applied.
import { EventReason } from "../core/index.ts";
import {
  type Decision,
  dropPreview,
  observedOutcome,
  operationOutcome,
  type RunOutcome,
} from "../plan/index.ts";
import type { RunContext } from "./context.ts";
import { observe } from "./observe.ts";

/**
 * Consumes a Reject: clears status.heldRevision, sets status.rejectedRevision (and its
 * objectHash), records the operation as Succeeded with its requestedBy and emits a Normal
 * Event "Rejected"; then observes health only (the preview is dropped and nothing is compared
 * with a revision nobody wants). The sync status is OutOfSync: the source names a revision
 * that is not applied.
 */
export async function rejectHeld(
  ctx: RunContext,
  decision: Extract<Decision, { action: "reject" }>,
): Promise<RunOutcome> {
  const { revision, objectHash, operation } = decision;
  const done = operationOutcome(operation, "Succeeded", `rejected revision ${revision}`, ctx.now);
  const seen = await observe(ctx, undefined);
  const outcome = observedOutcome({
    prev: ctx.prev,
    inventory: ctx.inventory,
    desired: undefined,
    comparison: seen.comparison,
    health: seen.health,
    syncStatus: "OutOfSync",
  });
  outcome.resources = dropPreview(outcome.resources, ctx.inventory);
  outcome.held = null;
  outcome.rejected = objectHash === undefined ? { revision } : { revision, objectHash };
  outcome.operationState = done.state;
  outcome.events.push(done.event, {
    type: "Normal",
    reason: EventReason.Rejected,
    message: `revision ${revision} was rejected by ${operation.requestedBy ?? "unknown"}`,
  });
  return outcome;
}
