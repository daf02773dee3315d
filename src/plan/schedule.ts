// When an App is due: a stateless schedule. Each App has a slot in every interval,
// derived from its uid, its interval and the clock, so nothing has to be written to remember
// when it runs next, and Apps spread evenly over the interval instead of bunching up. A tick
// (the cron trigger, `plumb reconcile --all`) runs every `period` and reconciles the Apps
// whose slot fell since the previous tick; failures back off from the time of the failed run.
import type { App, AppRow, AppStatus } from "../app/index.ts";
import { appRow, parseDuration } from "../app/index.ts";

/** First retry after a failure, and the cap (Flux's retryInterval is similar in spirit). */
export const BACKOFF_BASE_MS = 30_000;
export const BACKOFF_CAP_MS = 10 * 60_000;
/** spec.interval of an App whose interval does not parse. */
export const DEFAULT_INTERVAL_MS = 5 * 60_000;
/** How soon a Progressing App is looked at again by runtimes without ticks (followUpSeconds). */
export const PROGRESSING_RECHECK_MS = 30_000;
/** The tick period when none is configured: the Worker's cron fires every minute. */
export const DEFAULT_TICK_MS = 60_000;

/** One scheduled tick: its time and how long after the previous one it runs. */
export interface Tick {
  /** The tick's scheduled time (the cron's, not when the process started), ms since the epoch. */
  at: number;
  /** Time between ticks, ms: the tick covers the slots in (at − periodMs, at]. */
  periodMs: number;
}

/** Why a tick reconciles an App. */
export type DueReason =
  | "deleting" // the finalizer waits for a run
  | "new" // never reconciled
  | "spec" // the generation changed since the last run that wrote status (spec or operation)
  | "window" // a sync window that held a sync back has opened (status.nextSyncWindow)
  | "redeliver" // undelivered notifications wait and their retry time came (status.redeliverAt)
  | "retry" // failing, and the backoff since the failed run has passed
  | "progressing" // health Progressing: looked at again every tick until it settles
  | "slot"; // its slot in the interval fell since the previous tick

/** A due App: why, and whether the run owes a full comparison (its slot came). */
export interface Due {
  reason: DueReason;
  compare: boolean;
}

/**
 * 53-bit hash of a string (cyrb53, bryc, public domain): the same number in every runtime.
 * Apps' slots and shards come from it, so they are spread evenly whatever the names look like.
 */
export function hash53(text: string, seed = 0): number {
  let h1 = 0xdeadbeef ^ seed;
  let h2 = 0x41c6ce57 ^ seed;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

/** The App's identity for its slot and shard: its uid, or namespace/name without one. */
function identity(row: Pick<AppRow, "uid" | "namespace" | "name">): string {
  return row.uid ?? `${row.namespace}/${row.name}`;
}

/** spec.interval in ms, or DEFAULT_INTERVAL_MS when absent or not a duration. */
export function intervalMs(interval: string | undefined): number {
  if (interval === undefined) return DEFAULT_INTERVAL_MS;
  try {
    const ms = parseDuration(interval);
    return ms > 0 ? ms : DEFAULT_INTERVAL_MS;
  } catch {
    return DEFAULT_INTERVAL_MS;
  }
}

/**
 * The latest slot of the App at or before `t` (ms): slots are `offset + k·interval` for every
 * integer k, where offset = hash53(uid) mod interval — fixed for the App's life and for its
 * interval, spread uniformly over [0, interval).
 */
export function lastSlot(
  row: Pick<AppRow, "uid" | "namespace" | "name" | "interval">,
  t: number,
): number {
  const interval = intervalMs(row.interval);
  const offset = hash53(identity(row)) % interval;
  const since = (((t - offset) % interval) + interval) % interval;
  return t - since;
}

/** Backoff after `failures` consecutive failures: 30 s doubling, at most 10 min and the interval. */
export function backoffMs(failures: number, interval: number): number {
  if (failures <= 0) return 0;
  return Math.min(BACKOFF_BASE_MS * 2 ** Math.min(failures - 1, 20), BACKOFF_CAP_MS, interval);
}

/**
 * When a failing App is retried: the failed run wrote status (its `failures` count changed),
 * so status.lastReconciledAt is when it ran; the retry is a backoff later. Undefined when the
 * App is not failing; `now` when the time is unknown (retry at once).
 */
export function failedRetryAt(row: AppRow, now: number): number | undefined {
  if (!row.failures || row.failures <= 0) return undefined;
  const last = row.lastReconciledAt ? Date.parse(row.lastReconciledAt) : Number.NaN;
  if (Number.isNaN(last)) return now;
  return last + backoffMs(row.failures, intervalMs(row.interval));
}

/**
 * Is the App due at `tick`, and does its run owe a full comparison? Due when: being deleted;
 * never reconciled; its generation differs from the last observed one (spec edit, operation);
 * a sync window that held a sync back has opened (status.nextSyncWindow ≤ tick: a
 * full comparison, so the held sync runs); undelivered notifications wait and their retry time
 * came (status.redeliverAt ≤ tick); failing and past its backoff (failedRetryAt);
 * Progressing (every tick, as the 30-second recheck was); or its slot lies in
 * (tick.at − tick.periodMs, tick.at]. A full comparison (fetch, render, drift) is owed when the
 * slot came, whatever else made it due; the other runs may take the fast path when nothing
 * changed. Undefined: not due.
 */
export function dueAt(row: AppRow, tick: Tick): Due | undefined {
  const compare = lastSlot(row, tick.at) > tick.at - tick.periodMs;
  if (row.deleting) return { reason: "deleting", compare };
  if (row.observedGeneration === undefined) return { reason: "new", compare };
  if (row.observedGeneration !== row.generation) return { reason: "spec", compare };
  if (passed(row.nextSyncWindow, tick.at)) return { reason: "window", compare: true };
  if (passed(row.redeliverAt, tick.at)) return { reason: "redeliver", compare };
  const retry = failedRetryAt(row, tick.at);
  if (retry !== undefined) return retry <= tick.at ? { reason: "retry", compare } : undefined;
  if (row.healthStatus === "Progressing") return { reason: "progressing", compare };
  return compare ? { reason: "slot", compare } : undefined;
}

/** A time in status (RFC 3339) at or before `t`; false when absent or malformed. */
function passed(time: string | undefined, t: number): boolean {
  const at = time ? Date.parse(time) : Number.NaN;
  return at <= t;
}

/** dueAt for a full App. */
export function isDue(app: App, tick: Tick): boolean {
  return dueAt(appRow(app), tick) !== undefined;
}

/**
 * When the App runs next, derived (status keeps no schedule): now when it is due at once; else
 * the soonest of: the retry time of a failing App (or the next tick for a Progressing one, or
 * its next slot), the opening of a sync window that holds a sync back, the retry of undelivered
 * notifications — rounded up to the tick that covers it (ticks every `periodMs` on a grid from
 * the epoch).
 */
export function nextRunAt(row: AppRow, now: Date, periodMs = DEFAULT_TICK_MS): Date {
  const t = now.getTime();
  if (row.deleting || row.observedGeneration === undefined) return now;
  if (row.observedGeneration !== row.generation) return now;
  const retry = failedRetryAt(row, t);
  let next =
    retry !== undefined
      ? Math.max(retry, t)
      : row.healthStatus === "Progressing"
        ? t + 1
        : lastSlot(row, t) + intervalMs(row.interval);
  for (const time of [row.nextSyncWindow, row.redeliverAt]) {
    const at = time ? Date.parse(time) : Number.NaN;
    if (at < next) next = Math.max(at, t);
  }
  return new Date(Math.ceil(next / periodMs) * periodMs);
}

/**
 * The tick a process started at `now` serves: the latest multiple of `periodMs` (ticks on a
 * grid, so a CronJob pod that starts a few seconds late covers the same slots as one on time).
 */
export function tickAt(now: Date, periodMs = DEFAULT_TICK_MS): Tick {
  return { at: Math.floor(now.getTime() / periodMs) * periodMs, periodMs };
}

/** The shard (0 ≤ shard < count) an App belongs to: `reconcile --all --shard I/N`. */
export function shardOf(row: Pick<AppRow, "uid" | "namespace" | "name">, count: number): number {
  return hash53(identity(row), 0x5bd1e995) % count;
}

/**
 * The period of a cron expression that fires on a fixed grid, ms: every minute ("* * * * *"),
 * every N minutes (a step of N in the minute field, N dividing 60), hourly ("0 * * * *") or
 * every N hours ("0" and a step of N in the hour field, N dividing 24). Undefined for any other
 * expression: its ticks are not evenly spaced, so a tick cannot tell which slots fell since the
 * previous one.
 */
export function cronPeriodMs(cron: string): number | undefined {
  const f = cron.trim().split(/\s+/);
  if (f.length !== 5 || f.slice(2).some((x) => x !== "*")) return undefined;
  const [minute = "", hour = ""] = f;
  const every = (field: string, max: number) => {
    if (field === "*") return 1;
    const m = /^\*\/([0-9]{1,2})$/.exec(field);
    const n = m ? Number(m[1]) : Number.NaN;
    return n >= 1 && max % n === 0 ? n : undefined;
  };
  if (hour === "*") {
    if (minute === "0") return 3_600_000;
    const n = every(minute, 60);
    return n === undefined ? undefined : n * 60_000;
  }
  const n = minute === "0" ? every(hour, 24) : undefined;
  return n === undefined ? undefined : n * 3_600_000;
}

/**
 * How soon a run's App wants its next run when that is sooner than its slot: while its objects
 * are Progressing (and the run did not fail), PROGRESSING_RECHECK_MS in seconds. Runtimes with
 * no schedule of their own ask for that run: a timer in `plumb serve`, a delayed queue message
 * on Workers (health does not stay Progressing until something else runs). Ticks look
 * at a Progressing App every time anyway (dueAt). Undefined otherwise. Pure.
 */
export function followUpSeconds(status: AppStatus): number | undefined {
  if (status.healthStatus !== "Progressing" || status.failures) return undefined;
  return PROGRESSING_RECHECK_MS / 1000;
}
