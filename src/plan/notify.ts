// Notification decision: announce transitions only, never a steady state; the event each
// target posts; which targets an App has.
import {
  type App,
  type AppStatus,
  Notifications,
  type NotifyEvent,
  type OpenAlert,
  type ResourceStatus,
  TARGET_NAMES,
  type TargetName,
} from "../app/index.ts";
import { isFailureReason, type NamespacedName, shortRevision } from "../core/index.ts";
import { getCondition } from "./conditions.ts";

export interface Transition {
  event: NotifyEvent;
  message: string;
  /** Held only: the held revision and status.resources, the approval preview. */
  held?: { revision: string; preview: ResourceStatus[] };
  /** The revision it is about, when known before the status it is announced from (redelivery). */
  revision?: string;
}

/**
 * One notification, as every target posts it (Flux notification-controller's event, posted
 * through one interface: internal/notifier, `Post(ctx, event)`).
 */
export interface NotificationEvent {
  app: NamespacedName;
  /** What happened: the transition (a target's `on` filters by it). */
  transition: NotifyEvent;
  /**
   * The revision it is about: the one held (Held), the one the source names (Failed), else the
   * one applied. Absent before anything was applied or observed.
   */
  revision?: string;
  message: string;
  /** Held: the held revision and the approval preview (what approving creates, changes, prunes). */
  preview?: { revision: string; resources: ResourceStatus[] };
}

/**
 * The event of transition `t` of App `app`, whose status after the run is `status` (pure).
 * The revision is `t.revision` when the transition carries one (a redelivered notification
 * keeps the one it was about).
 */
export function notificationEvent(
  app: NamespacedName,
  t: Transition,
  status: AppStatus,
): NotificationEvent {
  const event: NotificationEvent = { app, transition: t.event, message: t.message };
  const revision =
    t.revision ??
    t.held?.revision ??
    (t.event === "Failed" ? (status.observedRevision ?? status.revision) : status.revision);
  if (revision !== undefined) event.revision = revision;
  if (t.held) event.preview = { revision: t.held.revision, resources: t.held.preview };
  return event;
}

/**
 * The targets spec.notifications configures, parsed and defaulted — on their own, with the App
 * schema's piece, so an App whose spec is otherwise invalid still gets its Failed alert. An
 * entry that does not parse configures nothing.
 */
export function notificationTargets(app: App): Notifications {
  const parsed = Notifications.safeParse(
    (app.spec as { notifications?: unknown } | undefined)?.notifications,
  );
  return parsed.success ? (parsed.data ?? {}) : {};
}

/** The names of the targets spec.notifications configures, in TARGET_NAMES order. */
export function targetNames(app: App): TargetName[] {
  const configured = notificationTargets(app);
  return TARGET_NAMES.filter((name) => configured[name] !== undefined);
}

/**
 * Whether a run of `app` has anything to announce or redeliver: a target is configured, or
 * undelivered notifications wait in status.pendingNotifications (a target since removed
 * settles them: they are dropped).
 */
export function notifies(app: App): boolean {
  return targetNames(app).length > 0 || (app.status?.pendingNotifications?.length ?? 0) > 0;
}

/**
 * Transitions between the status before and after a run (pure). What each event means is
 * NOTIFY_EVENT_MEANINGS (src/app/schema.ts), in short: Synced (a new revision applied without
 * failures, or a failure cleared without one: a commit that fixes a broken render back to the
 * applied objects has nothing to apply), Failed (Ready went False with a
 * failure reason, or its message changed), Degraded (health became Degraded), Recovered (healthy
 * again while `before.openAlert` records a Failed or Degraded — so Degraded → Progressing →
 * Healthy and a cleared SourceFailed both recover, once), Held (a new heldRevision),
 * Healthy (health became Healthy in a run with neither Synced nor Recovered: a rollout
 * finished), DriftCorrected (`driftCorrected` > 0 objects re-applied). A run that repeats the last state
 * yields nothing, so a steady failure alerts once. Record the open alert in the new status
 * with {@link withOpenAlert}.
 */
export function transitions(
  before: AppStatus,
  after: AppStatus,
  driftCorrected: number,
): Transition[] {
  const out: Transition[] = [];
  const failedBefore = isFailure(before);
  const failedAfter = isFailure(after);
  if (after.revision && after.revision !== before.revision && !failedAfter) {
    out.push({ event: "Synced", message: `applied revision ${short(after.revision)}` });
  }
  if (failedBefore && !failedAfter && out.length === 0) {
    const at = after.observedRevision ?? after.revision;
    out.push({
      event: "Synced",
      message: at ? `in sync again at revision ${short(at)}` : "in sync again",
    });
  }
  if (failedAfter && (!failedBefore || failedMessage(before) !== failedMessage(after))) {
    out.push({ event: "Failed", message: failedMessage(after) });
  }
  if (after.healthStatus === "Degraded" && before.healthStatus !== "Degraded") {
    out.push({ event: "Degraded", message: after.healthReason ?? "degraded" });
  }
  const open = openAlertOf(before);
  if (open && isHealthy(after)) {
    out.push({ event: "Recovered", message: `healthy again after ${open.event}: ${open.message}` });
  }
  if (
    isHealthy(after) &&
    before.healthStatus !== "Healthy" &&
    !out.some((t) => t.event === "Synced" || t.event === "Recovered")
  ) {
    out.push({
      event: "Healthy",
      message: after.revision ? `revision ${short(after.revision)} is healthy` : "healthy",
    });
  }
  if (after.heldRevision && after.heldRevision !== before.heldRevision) {
    out.push({
      event: "Held",
      message: `revision ${short(after.heldRevision)} is waiting for approval`,
      held: { revision: after.heldRevision, preview: after.resources ?? [] },
    });
  }
  const correction = after.lastDriftCorrection;
  if (correction && correction.at !== before.lastDriftCorrection?.at) {
    const more = correction.count - correction.objects.length;
    out.push({
      event: "DriftCorrected",
      message: `re-applied ${correction.objects.join("; ")}${more > 0 ? ` and ${more} more` : ""}`,
    });
  } else if (driftCorrected > 0) {
    out.push({
      event: "DriftCorrected",
      message: `re-applied ${driftCorrected} drifted object(s)`,
    });
  }
  return out;
}

/**
 * `after` with status.openAlert brought up to date with the run's transitions (pure): a Failed
 * or Degraded opens it (or updates what it says, keeping `since`), Recovered clears it, any
 * other run keeps it. plumb has no memory but status, so this is how a recovery several runs
 * after the problem is still recognised.
 */
export function withOpenAlert(
  before: AppStatus,
  after: AppStatus,
  list: readonly Transition[],
  now: Date,
): AppStatus {
  const next: AppStatus = { ...after };
  const open = openAlertOf(before);
  const problem = [...list].reverse().find((t) => t.event === "Failed" || t.event === "Degraded");
  if (list.some((t) => t.event === "Recovered")) delete next.openAlert;
  else if (problem) {
    next.openAlert = {
      event: problem.event as OpenAlert["event"],
      message: truncate(problem.message, ALERT_MESSAGE_MAX),
      since: open?.since ?? now.toISOString(),
    };
  } else if (open) next.openAlert = open;
  else delete next.openAlert;
  return next;
}

/** Longest message kept in status.openAlert (status stays small). */
const ALERT_MESSAGE_MAX = 512;

/**
 * status.openAlert, or for a status written before that field existed, the problem it shows
 * (a failure, or Degraded health) with an unknown start.
 */
function openAlertOf(status: AppStatus): OpenAlert | undefined {
  if (status.openAlert) return status.openAlert;
  if (isFailure(status)) return { event: "Failed", message: failedMessage(status), since: "" };
  if (status.healthStatus === "Degraded") {
    return { event: "Degraded", message: status.healthReason ?? "degraded", since: "" };
  }
  return undefined;
}

/** No failure and every object Healthy: what Recovered waits for. */
function isHealthy(status: AppStatus): boolean {
  return !isFailure(status) && status.healthStatus === "Healthy";
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

function isFailure(status: AppStatus): boolean {
  const ready = getCondition(status.conditions, "Ready");
  return ready?.status === "False" && isFailureReason(ready.reason);
}

function failedMessage(status: AppStatus): string {
  const ready = getCondition(status.conditions, "Ready");
  return ready ? `${ready.reason}: ${ready.message}` : "";
}

/** The short form of a revision (core's shortRevision): what alerts and pages show. */
export function short(revision: string): string {
  return shortRevision(revision);
}
