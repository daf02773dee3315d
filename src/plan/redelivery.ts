// Notifications that could not be delivered: kept in status, for the target they were for, and
// retried on later runs, once each, for a bounded time. Pure.
import type { AppStatus, PendingNotification, TargetName } from "../app/index.ts";
import type { Transition } from "./notify.ts";

/** A transition a target could not be sent, and the revision it was about. */
export interface Undelivered {
  target: TargetName;
  transition: Transition;
  revision?: string | undefined;
}

/** The target of a pending notification; entries written before targets were named are Slack's. */
export function pendingTarget(p: PendingNotification): TargetName {
  return p.target ?? "slack";
}

/**
 * How long an undelivered notification is retried: 1 hour. Slack's incidents and a mistyped
 * webhook Secret are usually fixed within it; an alert older than that is history rather than
 * news (status and the App's Events keep the record, and later transitions are announced
 * anyway), and a flood of hour-old alerts after a long outage would mislead whoever is on call.
 */
export const REDELIVERY_WINDOW_MS = 60 * 60_000;
/** At most this many notifications wait in status (the oldest are dropped first). */
export const MAX_PENDING = 10;
/** Longest message kept per notification (status stays small). */
const MESSAGE_MAX = 512;
/** Retry backoff: 30 s after the first failed attempt, doubling, at most 10 min. */
const RETRY_BASE_MS = 30_000;
const RETRY_CAP_MS = 10 * 60_000;

/** What to do with status.pendingNotifications at `now`: send again, or give up on. */
export function duePending(
  pending: readonly PendingNotification[] | undefined,
  now: Date,
): { retry: PendingNotification[]; expired: PendingNotification[] } {
  const retry: PendingNotification[] = [];
  const expired: PendingNotification[] = [];
  for (const p of pending ?? []) {
    const at = Date.parse(p.at);
    if (Number.isNaN(at) || now.getTime() - at >= REDELIVERY_WINDOW_MS) expired.push(p);
    else retry.push(p);
  }
  return { retry, expired };
}

/**
 * The transition of a pending notification: its message says when it happened, and it keeps
 * the revision it was about. A Held one gets its approval preview (and buttons) from `status`
 * only while its revision is still the held one.
 */
export function pendingTransition(p: PendingNotification, status: AppStatus = {}): Transition {
  const t: Transition = { event: p.event, message: `${p.message} (delayed: happened at ${p.at})` };
  if (p.revision !== undefined) t.revision = p.revision;
  if (p.event === "Held" && p.revision !== undefined && p.revision === status.heldRevision) {
    t.held = { revision: p.revision, preview: status.resources ?? [] };
  }
  return t;
}

/**
 * The new queue after a delivery: the retried notifications that failed again (one more
 * attempt each), then this run's new ones that failed (first attempt at `now`, with their
 * target and the revision they were about), at most MAX_PENDING, the newest kept. `dropped`
 * counts what the cap pushed out.
 */
export function nextPending(
  failedAgain: readonly PendingNotification[],
  failedNew: readonly Undelivered[],
  now: Date,
): { pending: PendingNotification[]; dropped: PendingNotification[] } {
  const all: PendingNotification[] = [
    ...failedAgain.map((p) => ({ ...p, attempts: p.attempts + 1 })),
    ...failedNew.map(({ target, transition: t, revision }) => {
      const p: PendingNotification = {
        target,
        event: t.event,
        message: truncate(t.message, MESSAGE_MAX),
        at: now.toISOString(),
        attempts: 1,
      };
      const about = t.held?.revision ?? revision;
      if (about !== undefined) p.revision = about;
      return p;
    }),
  ];
  const cut = Math.max(0, all.length - MAX_PENDING);
  return { pending: all.slice(cut), dropped: all.slice(0, cut) };
}

/**
 * When the App should run again to retry `pending`: `now` + 30 s·2^(attempts−1) of the most
 * tried entry, at most 10 minutes, and never after the oldest entry's window ends. Undefined
 * when nothing is pending.
 */
export function retryAt(pending: readonly PendingNotification[], now: Date): Date | undefined {
  if (pending.length === 0) return undefined;
  const attempts = Math.max(...pending.map((p) => p.attempts));
  const backoff = Math.min(RETRY_BASE_MS * 2 ** Math.min(attempts - 1, 20), RETRY_CAP_MS);
  const oldest = Math.min(...pending.map((p) => Date.parse(p.at)));
  return new Date(Math.min(now.getTime() + backoff, oldest + REDELIVERY_WINDOW_MS));
}

/** The identity of a pending notification (to merge queues written by concurrent runs). */
export function pendingKey(p: PendingNotification): string {
  return `${pendingTarget(p)}\u0000${p.at}\u0000${p.event}\u0000${p.message}`;
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
