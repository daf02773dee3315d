// When an App is due: interval scheduling with capped exponential backoff after failures.
import type { App, AppStatus } from "../app/index.ts";
import { parseDuration } from "../app/index.ts";

/** First retry after a failure, and the cap (Flux's retryInterval is similar in spirit). */
export const BACKOFF_BASE_MS = 30_000;
export const BACKOFF_CAP_MS = 10 * 60_000;

/**
 * The next scheduled run: `now + interval` after success; after `failures` consecutive
 * failures, `now + min(BACKOFF_BASE_MS·2^(failures−1), BACKOFF_CAP_MS, interval)`.
 * @param intervalText spec.interval, a Go duration (validated by the schema).
 */
export function nextReconcileAt(intervalText: string, failures: number, now: Date): Date {
  const interval = parseDuration(intervalText);
  if (failures <= 0) return new Date(now.getTime() + interval);
  const backoff = Math.min(
    BACKOFF_BASE_MS * 2 ** Math.min(failures - 1, 20),
    BACKOFF_CAP_MS,
    interval,
  );
  return new Date(now.getTime() + backoff);
}

/**
 * Is the App due for a scheduled run? Never reconciled, generation changed since the last
 * run, a pending operation, nextReconcileAt ≤ now, or a sync window that held a sync back has
 * opened (nextSyncWindow ≤ now, issue 15). Apps being deleted are due (finalizer).
 */
export function isDue(app: App, now: Date): boolean {
  const status = app.status;
  if (app.metadata.deletionTimestamp) return true;
  if (!status?.nextReconcileAt || status.observedGeneration === undefined) return true;
  if (status.observedGeneration !== app.metadata.generation) return true;
  const opens = status.nextSyncWindow ? Date.parse(status.nextSyncWindow) : Number.NaN;
  if (opens <= now.getTime()) return true;
  const next = Date.parse(status.nextReconcileAt);
  return Number.isNaN(next) || next <= now.getTime();
}

/**
 * How soon a run's App wants its next run when that is sooner than its interval: while its
 * objects are Progressing (and the run did not fail), the seconds until status.nextReconcileAt
 * (at least 1). Runtimes with no schedule of their own ask for that run: a timer in `plumb
 * serve`, a delayed queue message on Workers (issue 9: health does not stay Progressing until
 * something else runs). Undefined otherwise. Pure.
 */
export function followUpSeconds(status: AppStatus, now: Date): number | undefined {
  if (status.healthStatus !== "Progressing" || status.failures) return undefined;
  const next = status.nextReconcileAt ? Date.parse(status.nextReconcileAt) : Number.NaN;
  if (Number.isNaN(next)) return undefined;
  return Math.max(1, Math.ceil((next - now.getTime()) / 1000));
}
