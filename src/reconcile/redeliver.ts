// Announce a run's transitions and redeliver what earlier runs could not:
// undelivered Slack notifications wait in status.pendingNotifications, are sent once on a
// later run, and are given up after REDELIVERY_WINDOW_MS.
import type { App, AppStatus, PendingNotification } from "../app/index.ts";
import { EventReason, KubeApiError } from "../core/index.ts";
import {
  duePending,
  MAX_PENDING,
  nextPending,
  pendingKey,
  pendingTransition,
  REDELIVERY_WINDOW_MS,
  retryAt,
  type Transition,
} from "../plan/index.ts";
import { announce } from "./announce.ts";
import type { RunContext } from "./context.ts";

/** Status writes of the queue before giving up on a conflict (another run wrote first). */
const WRITE_ATTEMPTS = 3;

/**
 * Sends the pending notifications still in their window (oldest first, each marked with the
 * time it happened), then `list`. What fails is kept (a NotificationFailed Event says until
 * when); what expired is dropped with a NotificationFailed Event. When the queue changed, it is
 * written to status (a second write, only then), with status.redeliverAt at the retry time so
 * a scheduled tick comes back for it; a conflicting write re-reads the App and
 * merges the queues.
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
  const byTransition = new Map<Transition, PendingNotification>();
  const again = retry.map((p) => {
    const t = pendingTransition(p, app.status);
    byTransition.set(t, p);
    return t;
  });
  const undelivered = await announce(app, [...again, ...list], ctx.ports, keptNote);
  const failedAgain = undelivered.flatMap((t) => byTransition.get(t) ?? []);
  const failedNew = undelivered.filter((t) => !byTransition.has(t));
  const { pending, dropped } = nextPending(failedAgain, failedNew, ctx.now);
  const given = [...expired, ...dropped];
  if (given.length > 0) await gaveUp(ctx, app, given);
  if (sameQueue(before, pending)) return;
  const delivered = retry.filter((p) => !failedAgain.includes(p));
  await writeQueue(ctx, app, pending, [...delivered, ...given]);
}

/** What the NotificationFailed Event adds: that the undelivered ones are kept, and how long. */
function keptNote(undelivered: readonly Transition[]): string {
  if (undelivered.length === 0) return "";
  const hours = REDELIVERY_WINDOW_MS / 3_600_000;
  return `; ${undelivered.length} notification(s) kept in status.pendingNotifications and sent on a later run, for up to ${hours}h after each happened`;
}

async function gaveUp(ctx: RunContext, app: App, given: readonly PendingNotification[]) {
  const what = given.map((p) => `${p.event} at ${p.at}`).join(", ");
  const message = `Slack: gave up on ${given.length} undelivered notification(s): ${what}`;
  ctx.ports.log?.({ app: ctx.id, msg: message });
  await ctx.ports.kube
    .emitEvent(app, { type: "Warning", reason: EventReason.NotificationFailed, message })
    .catch(() => undefined);
}

function sameQueue(a: readonly PendingNotification[], b: readonly PendingNotification[]) {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * Writes `pending` as status.pendingNotifications. On a conflict (another run wrote status
 * meanwhile) the App is read again and the queues merged: what this run delivered or gave up
 * on (`settled`) leaves theirs, what this run keeps joins it.
 */
async function writeQueue(
  ctx: RunContext,
  app: App,
  pending: PendingNotification[],
  settled: readonly PendingNotification[],
): Promise<void> {
  let current = app;
  let queue = pending;
  for (let attempt = 1; attempt <= WRITE_ATTEMPTS; attempt++) {
    try {
      await ctx.ports.kube.writeStatus(current, withQueue(current.status ?? {}, queue, ctx.now));
      return;
    } catch (err) {
      if (!(err instanceof KubeApiError && err.status === 409) || attempt === WRITE_ATTEMPTS) {
        ctx.ports.log?.({
          app: ctx.id,
          msg: "recording undelivered notifications failed",
          error: String(err),
        });
        return;
      }
      const fresh = await ctx.ports.kube.getApp(ctx.ref.namespace, ctx.ref.name);
      if (!fresh) return;
      // Theirs without what this run settled or retried (its attempt count wins), then ours;
      // oldest first, as they are delivered.
      const gone = new Set([...settled, ...pending].map(pendingKey));
      const theirs = (fresh.status?.pendingNotifications ?? []).filter(
        (p) => !gone.has(pendingKey(p)),
      );
      queue = [...theirs, ...pending]
        .sort((a, b) => Date.parse(a.at) - Date.parse(b.at))
        .slice(-MAX_PENDING);
      current = fresh;
    }
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
