// Notification decision: announce transitions only, never a steady state.
import type { AppStatus, NotifyEvent, OpenAlert, ResourceStatus } from "../app/index.ts";
import { isFailureReason, shortRevision } from "../core/index.ts";
import { getCondition } from "./conditions.ts";

export interface Transition {
  event: NotifyEvent;
  message: string;
  /** Held only: the held revision and status.resources, the approval preview. */
  held?: { revision: string; preview: ResourceStatus[] };
}

/**
 * Transitions between the status before and after a run (pure). What each event means is
 * NOTIFY_EVENT_MEANINGS (src/app/schema.ts), in short: Synced (a new revision applied without
 * failures, or a failure cleared without one: a commit that fixes a broken render back to the
 * applied objects has nothing to apply), Failed (Ready went False with a
 * failure reason, or its message changed), Degraded (health became Degraded), Recovered (healthy
 * again while `before.openAlert` records a Failed or Degraded — so Degraded → Progressing →
 * Healthy and a cleared SourceFailed both recover, once), Held (a new heldRevision),
 * DriftCorrected (`driftCorrected` > 0 objects re-applied). A run that repeats the last state
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
