// Announce a run's transitions and redeliver what earlier runs could not: undelivered
// notifications wait in status.pendingNotifications (each naming its target), are sent once on
// a later run, and are given up after REDELIVERY_WINDOW_MS.
import type { App, AppStatus, PendingNotification, TargetName } from "../app/index.ts";
import { EventReason } from "../core/index.ts";
import {
  duePending,
  MAX_PENDING,
  nextPending,
  notificationEvent,
  pendingKey,
  pendingTarget,
  pendingTransition,
  REDELIVERY_WINDOW_MS,
  retryAt,
  type Transition,
  targetNames,
  type Undelivered,
} from "../plan/index.ts";
import { announce } from "./announce.ts";
import type { RunContext } from "./context.ts";
import { writeStatusChecked } from "./record.ts";
import { TARGETS } from "./targets/index.ts";

/**
 * The notify step of a run: for each target the App configures, sends its pending
 * notifications still in their window (oldest first, each marked with the time it happened),
 * then `list`. What fails is kept, for its target (a NotificationFailed Event says until when);
 * what expired is dropped with a NotificationFailed Event; what waits for a target the App no
 * longer configures is dropped. When the queue changed, it is written to status (a second
 * write, only then; writeStatusChecked, under the run's Lease when it holds one), with
 * status.redeliverAt at the retry time so a scheduled tick comes back for it; when another run
 * wrote status meanwhile, the queues are merged over its status. A failure to write the queue
 * is logged: the notifications sent stay sent.
 * @param app the App as last written by this run (its resourceVersion guards the write)
 */
export async function announceAndRedeliver(
  ctx: RunContext,
  app: App,
  list: readonly Transition[],
): Promise<void> {
  const before = app.status?.pendingNotifications ?? [];
  if (before.length === 0 && list.length === 0) return;
  const { retry, expired } = duePending(before, ctx.now);
  const failedAgain: PendingNotification[] = [];
  const failedNew: Undelivered[] = [];
  for (const target of targetNames(app)) {
    const byTransition = new Map<Transition, PendingNotification>();
    const again = retry
      .filter((p) => pendingTarget(p) === target)
      .map((p) => {
        const t = pendingTransition(p, app.status);
        byTransition.set(t, p);
        return t;
      });
    const undelivered = await announce(app, [...again, ...list], ctx.ports, {
      note: keptNote,
      target,
    });
    for (const t of undelivered) {
      const p = byTransition.get(t);
      if (p) failedAgain.push(p);
      else failedNew.push({ target, transition: t, revision: revisionOf(app, t) });
    }
  }
  const { pending, dropped } = nextPending(failedAgain, failedNew, ctx.now);
  const given = [...expired, ...dropped];
  if (given.length > 0) await gaveUp(ctx, app, given);
  if (sameQueue(before, pending)) return;
  const delivered = retry.filter((p) => !failedAgain.includes(p));
  await writeQueue(ctx, app, pending, [...delivered, ...given]);
}

/** The revision transition `t` of `app` is about (notificationEvent's rule). */
function revisionOf(app: App, t: Transition): string | undefined {
  return notificationEvent(app.metadata, t, app.status ?? {}).revision;
}

/** What the NotificationFailed Event adds: that the undelivered ones are kept, and how long. */
function keptNote(undelivered: readonly Transition[]): string {
  if (undelivered.length === 0) return "";
  const hours = REDELIVERY_WINDOW_MS / 3_600_000;
  return `; ${undelivered.length} notification(s) kept in status.pendingNotifications and sent on a later run, for up to ${hours}h after each happened`;
}

/** One NotificationFailed Event per target whose notifications are given up. */
async function gaveUp(ctx: RunContext, app: App, given: readonly PendingNotification[]) {
  const byTarget = new Map<TargetName, PendingNotification[]>();
  for (const p of given)
    byTarget.set(pendingTarget(p), [...(byTarget.get(pendingTarget(p)) ?? []), p]);
  for (const [target, entries] of byTarget) {
    const what = entries.map((p) => `${p.event} at ${p.at}`).join(", ");
    const message = `${TARGETS[target].title}: gave up on ${entries.length} undelivered notification(s): ${what}`;
    ctx.ports.log?.({ app: ctx.id, msg: message });
    await ctx.ports.kube
      .emitEvent(app, { type: "Warning", reason: EventReason.NotificationFailed, message })
      .catch(() => undefined);
  }
}

function sameQueue(a: readonly PendingNotification[], b: readonly PendingNotification[]) {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * Writes `pending` as status.pendingNotifications, through writeStatusChecked. When another run
 * wrote status meanwhile, the queues are merged over what it wrote: what this run delivered or
 * gave up on (`settled`) leaves theirs, what this run keeps joins it.
 */
async function writeQueue(
  ctx: RunContext,
  app: App,
  pending: PendingNotification[],
  settled: readonly PendingNotification[],
): Promise<void> {
  const merged = (fresh: App): AppStatus => {
    // Theirs without what this run settled or retried (its attempt count wins), then ours;
    // oldest first, as they are delivered.
    const gone = new Set([...settled, ...pending].map(pendingKey));
    const theirs = (fresh.status?.pendingNotifications ?? []).filter(
      (p) => !gone.has(pendingKey(p)),
    );
    const queue = [...theirs, ...pending]
      .sort((a, b) => Date.parse(a.at) - Date.parse(b.at))
      .slice(-MAX_PENDING);
    return withQueue(fresh.status ?? {}, queue, ctx.now);
  };
  try {
    await writeStatusChecked(
      { ...ctx, app },
      withQueue(app.status ?? {}, pending, ctx.now),
      merged,
    );
  } catch (err) {
    ctx.ports.log?.({
      app: ctx.id,
      msg: "recording undelivered notifications failed",
      error: String(err),
    });
  }
}

/**
 * `status` with the queue, and status.redeliverAt at the queue's retry time (a scheduled tick
 * runs the App then: plan/schedule.ts dueAt); both removed when the queue is empty.
 */
function withQueue(status: AppStatus, pending: PendingNotification[], now: Date): AppStatus {
  const next: AppStatus = { ...status };
  const retry = retryAt(pending, now);
  if (pending.length === 0 || !retry) {
    delete next.pendingNotifications;
    delete next.redeliverAt;
    return next;
  }
  next.pendingNotifications = pending;
  next.redeliverAt = retry.toISOString();
  return next;
}
