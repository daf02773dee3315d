// A step failed: keep the inventory and resources, record the failure, keep watching health.
import type { Operation } from "../app/index.ts";
import { FailureReason, refKey } from "../core/index.ts";
import { assessSet } from "../health/index.ts";
import {
  type Failure,
  operationOutcome,
  type RunEvent,
  type RunOutcome,
  resourceStatus,
  splitInventory,
} from "../plan/index.ts";
import type { RunContext } from "./context.ts";
import { listLive } from "./observe.ts";

/**
 * The outcome of a run that stops at `failure`: nothing applied or pruned; the inventory and
 * resource lines kept; health observed anew while the source or render is broken (one list
 * per kind of the inventory; not for an invalid spec). A pending `operation` fails with the
 * failure's message. A Warning Event names the failure.
 * @param opts.outOfSync the source names a revision other than the applied one
 */
export async function failedOutcome(
  ctx: RunContext,
  failure: Failure,
  opts: { operation?: Operation | undefined; outOfSync?: boolean | undefined } = {},
): Promise<RunOutcome> {
  const events: RunEvent[] = [];
  const out: RunOutcome = {
    inventory: [...ctx.inventory],
    resources: ctx.prev.resources ?? [],
    health: { status: ctx.prev.healthStatus ?? "Unknown", reason: ctx.prev.healthReason ?? "" },
    syncStatus: opts.outOfSync ? "OutOfSync" : (ctx.prev.syncStatus ?? "Unknown"),
    failure,
    events,
  };
  if (opts.operation) {
    const done = operationOutcome(opts.operation, "Failed", failure.message, ctx.now);
    out.operationState = done.state;
    events.push(done.event);
  }
  events.push({ type: "Warning", reason: failure.reason, message: failure.message });
  if (ctx.inventory.length > 0 && failure.reason !== FailureReason.InvalidSpec) {
    const health = assessSet(
      ctx.inventory,
      await listLive(ctx.inventory, ctx.ref, ctx.cluster),
      ctx.now,
      undefined,
      ctx.healthChecks,
    );
    out.health = { status: health.status, reason: health.reason };
    out.resources = out.resources.map((r) => {
      const h = health.byKey.get(refKey(r));
      return h ? resourceStatus(r, r.status, h, r.status === "Failed" ? r.message : undefined) : r;
    });
  }
  return out;
}

/**
 * The outcome of a run stopped by an error it did not expect (plan/run.ts abortFailure) — so
 * the failure is recorded in status and a Warning Event instead of nowhere. No further reads:
 * everything but the failure is the stored status, whose inventory includes what the run may
 * have applied (trackInventory wrote it before applying), on every cluster. A pending operation
 * stays pending: the next run tries it again.
 */
export function abortedOutcome(ctx: RunContext, failure: Failure): RunOutcome {
  const stored = ctx.app.status ?? {};
  // As stored (trackInventory may have added to it), split as the run sees it.
  const { here, elsewhere } = splitInventory(stored.inventory ?? [], ctx.destination?.server);
  return {
    inventory: here,
    departed: elsewhere,
    resources: stored.resources ?? [],
    health: { status: stored.healthStatus ?? "Unknown", reason: stored.healthReason ?? "" },
    syncStatus: stored.syncStatus ?? "Unknown",
    ...(stored.drift ? { drift: stored.drift } : {}),
    failure,
    events: [{ type: "Warning", reason: failure.reason, message: failure.message }],
  };
}
