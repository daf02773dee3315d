// The record step: the one place that composes an App's status. Composes it from what the steps
// found, writes it (only when it changed, conditional on the resourceVersion the run holds) and
// emits the run's Events; the transitions it finds are announced after it (steps.ts).
import type { App, AppStatus, HealthStatus, SyncStatus } from "../app/index.ts";
import { canonicalJson, KubeApiError, nameOf, transientStatus } from "../core/index.ts";
import {
  clusterRecords,
  composeStatus,
  followUpSeconds,
  placeInventory,
  type RunOutcome,
  type RunRecord,
  statusChanged,
  type Transition,
  transitions,
  withOpenAlert,
} from "../plan/index.ts";
import type { RunContext } from "./context.ts";
import { readyDependants } from "./depends.ts";
import type { RequestCounts } from "./ports.ts";
import { redactStatus } from "./redaction.ts";

/** One JSON line per App for the CLI and the HTTP API (one shape for both). */
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
  /**
   * "namespace/name" of the Apps whose spec.dependsOn names this one, when this run made it
   * Ready: run them now, without waiting for their slot (`plumb serve` runs them; the Worker
   * queues them).
   */
  dependants?: string[];
  requests: RequestCounts;
}

/** A run's line before its request counts are added. */
export type RunLine = Omit<RunResult, "requests">;

/**
 * Thrown when a run's status write failed (after the transport's retries): the run's failure,
 * if any, went to a Warning Event instead (best effort); the caller reports it and stops.
 */
export class StatusNotWrittenError extends Error {
  constructor(cause: unknown) {
    super(`status not written: ${cause instanceof Error ? cause.message : String(cause)}`, {
      cause,
    });
    this.name = "StatusNotWrittenError";
  }
}

/** Attempts of an Event (a create: the transport does not resend it after a 5xx). */
const EVENT_ATTEMPTS = 3;
/** Writes of one status when the API server answers 409 but the App did not change. */
const STATUS_ATTEMPTS = 3;

/** What recordRun did: the run's line, the App as stored after it, the transitions to announce. */
export interface Recorded {
  line: RunLine;
  /** The App as stored after the write (or as read, when nothing changed). */
  app: App;
  /** The transitions of the status written (none when nothing was written). */
  transitions: Transition[];
}

/**
 * Writes the App's status from `outcome` (composeStatus), if it differs from the stored one in
 * anything but the run's own time (a steady run writes nothing); then emits the
 * outcome's Events (each retried on a transient failure; a failure is logged, never fatal).
 * The write is conditional on the resourceVersion the run holds
 * (writeStatusChecked). A conflict (409: another run wrote first) throws, and the caller runs
 * again from a fresh read. When the write itself fails, the failure goes to a Warning Event
 * and StatusNotWrittenError is thrown (no failed run goes unrecorded).
 * Status, Events and the line are redacted with `ctx.ports.redactor`.
 * @param interval spec.interval (the schedule of the next run)
 */
export async function recordRun(
  ctx: RunContext,
  interval: string,
  outcome: RunOutcome,
): Promise<Recorded> {
  const { events, driftCorrected, departed, ...found } = outcome;
  // The steps saw the destination's entries only; place them, and carry the others.
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
  const redactor = ctx.ports.redactor;
  const redact = (text: string) => redactor?.redact(text) ?? text;
  const composed = redactStatus(composeStatus(ctx.prev, record), redactor);
  // trackInventory cleared status.objectHash before applying: only a run that recorded the
  // whole set it applied sets it again — not a failure recorded from the status read before
  // (abortedOutcome), which would call the tracked objects the render last applied.
  if (ctx.app.status?.objectHash === undefined && record.applied?.objectHash === undefined) {
    delete composed.objectHash;
  }
  const announced = transitions(ctx.prev, composed, driftCorrected ?? 0);
  const status = withOpenAlert(ctx.prev, composed, announced, ctx.now);
  // Compared with the stored status: the run may have written one already (trackInventory).
  const changed = statusChanged(ctx.app.status ?? {}, status);
  let written = ctx.app;
  if (changed) {
    try {
      written = await writeStatusChecked(ctx, status);
    } catch (e) {
      if (!(e instanceof KubeApiError) || e.status === 409 || !record.failure) throw e;
      const failure = record.failure;
      await emit(ctx, {
        type: "Warning",
        reason: failure.reason,
        message: redact(`${failure.message} (status not written: ${e.message})`),
      });
      throw new StatusNotWrittenError(e);
    }
    for (const event of events) {
      await emit(ctx, { ...event, message: redact(event.message) }, written);
    }
  }
  const line: RunLine = { app: ctx.id, outcome: record.failure ? "Failed" : "Reconciled" };
  if (status.syncStatus) line.syncStatus = status.syncStatus;
  if (status.healthStatus) line.healthStatus = status.healthStatus;
  if (status.revision) line.revision = status.revision;
  if (record.failure) line.error = redact(`${record.failure.reason}: ${record.failure.message}`);
  const followUp = followUpSeconds(status);
  if (followUp !== undefined) line.followUpSeconds = followUp;
  if (changed) {
    const dependants = await readyDependants(ctx, ctx.prev, status).catch((e: unknown) => {
      ctx.ports.log?.({ app: ctx.id, msg: "dependants not listed", error: String(e) });
      return [];
    });
    if (dependants.length > 0) line.dependants = dependants.map(nameOf);
  }
  return { line, app: written, transitions: changed ? announced : [] };
}

/**
 * Replaces the App's status with `status`, conditional on the resourceVersion of `ctx.app`,
 * after ensuring the run's Lease when it holds one (a run that outlived its Lease writes
 * nothing: LeaseLostError). Every status write of a run goes through it (the record, the
 * inventory tracked before an apply, the redelivery queue). A 409 is looked into before it is
 * believed: the App is read, and when it already carries this status (a resent write whose
 * first answer was lost) that is the result; when its resourceVersion is still the run's (the
 * 409 did not come from another writer) the write is sent again; when another writer changed
 * it, `rebase` (if given) makes the status to write over the fresh App, which is written in
 * its place — else the 409 is thrown. At most STATUS_ATTEMPTS writes.
 * @param rebase the status to write instead over `fresh`, the App another writer changed
 * @param options.exact only a write that lands on the resourceVersion of `ctx.app` is a
 *   success (a 409 is still sent again when the App did not move): the result then proves
 *   that no one else wrote the App since the run read it. An App already carrying this status
 *   is a 409 thrown, since another run may have written the same status.
 * @returns the App as stored after the write
 */
export async function writeStatusChecked(
  ctx: RunContext,
  status: AppStatus,
  rebase?: (fresh: App) => AppStatus,
  options: { exact?: boolean } = {},
): Promise<App> {
  const kube = ctx.ports.kube;
  let app = ctx.app;
  let next = status;
  for (let attempt = 1; ; attempt++) {
    await ctx.lease?.ensure();
    try {
      return await kube.writeStatus(
        app,
        next,
        ctx.lease ? { signal: ctx.lease.signal } : undefined,
      );
    } catch (e) {
      if (!(e instanceof KubeApiError) || e.status !== 409 || attempt >= STATUS_ATTEMPTS) throw e;
      const fresh = await kube.getApp(ctx.ref.namespace, ctx.ref.name);
      if (!options.exact && fresh?.status && sameRecord(fresh.status, next)) return fresh;
      if (fresh?.metadata.resourceVersion === app.metadata.resourceVersion) {
        ctx.ports.log?.({ app: ctx.id, msg: "status write conflicted with no change; again" });
      } else if (fresh && rebase && !options.exact) {
        app = fresh;
        next = rebase(fresh);
      } else throw e;
    }
  }
}

/**
 * The stored status is the one written: same run time, revision, inventory and redelivery
 * queue.
 */
function sameRecord(stored: AppStatus, written: AppStatus): boolean {
  return (
    stored.lastReconciledAt === written.lastReconciledAt &&
    stored.revision === written.revision &&
    canonicalJson(stored.inventory ?? []) === canonicalJson(written.inventory ?? []) &&
    canonicalJson(stored.pendingNotifications ?? []) ===
      canonicalJson(written.pendingNotifications ?? [])
  );
}

/** Emits one Event on the App, again after a transient failure; a failure is only logged. */
async function emit(ctx: RunContext, event: RunOutcome["events"][number], app = ctx.app) {
  const sleep = ctx.ports.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  for (let attempt = 1; attempt <= EVENT_ATTEMPTS; attempt++) {
    try {
      await ctx.ports.kube.emitEvent(app, event);
      return;
    } catch (e) {
      const transient = !(e instanceof KubeApiError) || transientStatus(e.status);
      if (!transient || attempt === EVENT_ATTEMPTS) {
        ctx.ports.log?.({
          app: ctx.id,
          msg: "event failed",
          reason: event.reason,
          error: String(e),
        });
        return;
      }
      await sleep(200 * attempt);
    }
  }
}
