// Notification decision: announce transitions only, never a steady state.
import type { AppStatus, NotifyEvent, ResourceStatus } from "../app/index.ts";
import { isFailureReason } from "../core/index.ts";
import { getCondition } from "./conditions.ts";

export interface Transition {
  event: NotifyEvent;
  message: string;
  /** Held only: the held revision and status.resources, the approval preview. */
  held?: { revision: string; preview: ResourceStatus[] };
}

/**
 * Transitions between the status before and after a run (pure):
 * Synced (a new revision applied without failures, or a failure cleared without one: a commit
 * that fixes a broken render back to the applied objects has nothing to apply, issue 10 kind 7),
 * Failed (Ready went False with a failure reason),
 * Degraded (health became Degraded), Recovered (Degraded → Healthy), Held (a new heldRevision),
 * DriftCorrected (`driftCorrected` > 0 objects re-applied). A run that repeats the last
 * state yields nothing, so a steady failure alerts once.
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
  if (before.healthStatus === "Degraded" && after.healthStatus === "Healthy") {
    out.push({ event: "Recovered", message: "healthy again" });
  }
  if (after.heldRevision && after.heldRevision !== before.heldRevision) {
    out.push({
      event: "Held",
      message: `revision ${short(after.heldRevision)} is waiting for approval`,
      held: { revision: after.heldRevision, preview: after.resources ?? [] },
    });
  }
  if (driftCorrected > 0) {
    out.push({
      event: "DriftCorrected",
      message: `re-applied ${driftCorrected} drifted object(s)`,
    });
  }
  return out;
}

function isFailure(status: AppStatus): boolean {
  const ready = getCondition(status.conditions, "Ready");
  return ready?.status === "False" && isFailureReason(ready.reason);
}

function failedMessage(status: AppStatus): string {
  const ready = getCondition(status.conditions, "Ready");
  return ready ? `${ready.reason}: ${ready.message}` : "";
}

/** First 7 characters of a commit SHA; other revisions (digests) unchanged. */
export function short(revision: string): string {
  return /^[0-9a-f]{40}$/.test(revision) ? revision.slice(0, 7) : revision;
}
