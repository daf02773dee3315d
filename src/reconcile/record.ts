// Step 10, record: the one place that writes an App's status. Composes it from what the steps
// found, writes it (only when it changed, conditional on the resourceVersion read at the
// start), emits the run's Events and announces transitions.
import type { HealthStatus, SyncStatus } from "../app/index.ts";
import {
  clusterRecords,
  composeStatus,
  followUpSeconds,
  placeInventory,
  type RunOutcome,
  type RunRecord,
  statusChanged,
  transitions,
  withOpenAlert,
} from "../plan/index.ts";
import type { RunContext } from "./context.ts";
import type { RequestCounts } from "./ports.ts";
import { announceAndRedeliver } from "./redeliver.ts";

/** One JSON line per App for the CLI and the HTTP API (issue #3's shape). */
export interface RunResult {
  app: string;
  /** Skipped: a scheduled run found the App not due (its slot has not come; see nextReconcileAt). */
  outcome: "Reconciled" | "NotFound" | "Finalized" | "Failed" | "Skipped";
  syncStatus?: SyncStatus;
  healthStatus?: HealthStatus;
  revision?: string;
  error?: string;
  /** For a Skipped App: when it is due (derived: plan/schedule.ts nextRunAt). */
  nextReconcileAt?: string;
  /** True when the run ended before it could record its outcome in status (retry it). */
  retryable?: boolean;
  /**
   * Run this App again after this many seconds, sooner than its interval: its objects are
   * still Progressing (followUpSeconds). `plumb serve` sets a timer; the Worker queues a
   * delayed message.
   */
  followUpSeconds?: number;
  requests: RequestCounts;
}

/** A run's line before its request counts are added. */
export type RunLine = Omit<RunResult, "requests">;

/**
 * Writes the App's status from `outcome` (composeStatus), if it differs from the last one in
 * anything but the run's own time (a steady run writes nothing, issue 14); then emits the
 * outcome's Events (a failure to emit is logged, never fatal) and announces transitions to
 * Slack, after redelivering what earlier runs could not send (announceAndRedeliver). A status
 * write that conflicts (409: another run wrote first) throws, and the caller runs again from a
 * fresh read.
 * @param interval spec.interval (the schedule of the next run)
 */
export async function recordRun(
  ctx: RunContext,
  interval: string,
  outcome: RunOutcome,
): Promise<RunLine> {
  const { events, driftCorrected, departed, ...found } = outcome;
  // The steps saw the destination's entries only; place them, and carry the others (issue 15).
  const inventory = placeInventory(
    found.inventory,
    ctx.destination?.server,
    departed ?? ctx.departed,
  );
  const record: RunRecord = {
    ...found,
    inventory,
    clusters: clusterRecords(inventory, ctx.destination, ctx.prev.clusters),
    now: ctx.now,
    generation: ctx.app.metadata.generation,
    interval,
  };
  const composed = composeStatus(ctx.prev, record);
  const announced = transitions(ctx.prev, composed, driftCorrected ?? 0);
  const status = withOpenAlert(ctx.prev, composed, announced, ctx.now);
  const changed = statusChanged(ctx.prev, status);
  let written = ctx.app;
  if (changed) {
    written = await ctx.ports.kube.writeStatus(ctx.app, status);
    for (const event of events) {
      await ctx.ports.kube
        .emitEvent(ctx.app, event)
        .catch((e) => ctx.ports.log?.({ msg: "event failed", error: String(e) }));
    }
  }
  // Slack: this run's transitions, after any that earlier runs could not deliver.
  await announceAndRedeliver(ctx, written, changed ? announced : []);
  const line: RunLine = { app: ctx.id, outcome: record.failure ? "Failed" : "Reconciled" };
  if (status.syncStatus) line.syncStatus = status.syncStatus;
  if (status.healthStatus) line.healthStatus = status.healthStatus;
  if (status.revision) line.revision = status.revision;
  if (record.failure) line.error = `${record.failure.reason}: ${record.failure.message}`;
  const followUp = followUpSeconds(status);
  if (followUp !== undefined) line.followUpSeconds = followUp;
  return line;
}
