// What a run that applied nothing records: resources, drift, health and the sync status, after
// an optional selfHeal correction. Pure.
import type {
  AppStatus,
  DriftEntry,
  HealthStatus,
  ResourceStatus,
  SyncStatus,
} from "../app/index.ts";
import { describeRef, FailureReason, type ObjectRef, refKey } from "../core/index.ts";
import type { Comparison } from "./compare.ts";
import { describeCorrection } from "./correction.ts";
import type { RunEvent } from "./events.ts";
import { resourceStatus } from "./resources.ts";
import type { Failure, RunOutcome } from "./status.ts";

export interface ObservedInput {
  /** status before the run (the applied revision and objectHash). */
  prev: AppStatus;
  inventory: readonly ObjectRef[];
  /** The render compared with the live state, or undefined (fast path, restart). */
  desired: { revision: string; objectHash: string } | undefined;
  comparison: Comparison;
  health: { status: HealthStatus; reason: string };
  /** The sync status the caller already knows (Held, fast path Synced), else derived. */
  syncStatus?: SyncStatus | undefined;
  /**
   * A selfHeal correction: the refKeys re-applied, its Event, and the health after it (the
   * re-applied objects assessed from what the API server stored: they exist now).
   */
  corrected?:
    | {
        applied: ReadonlySet<string>;
        event: RunEvent;
        health?: {
          status: HealthStatus;
          reason: string;
          byKey: ReadonlyMap<string, { status: HealthStatus; message?: string }>;
        };
      }
    | undefined;
}

/**
 * A render whose apply failed terminally (status.failedObjectHash) stays failed while the API
 * server still refuses it in the comparison's dry run or any of its objects is not live as
 * desired: ApplyFailed, Stalled until the render changes (see stillFailed).
 * Other refused dry runs show on their resource lines only.
 *
 * The record of a run that applied nothing. After a correction the re-applied objects are
 * Synced again, with the health the correction gives (from what the API server stored; the
 * App's health with it), and status.drift is empty (what was not re-applied shows on the next
 * run).
 * The sync status, unless given: OutOfSync when the render differs from what was applied
 * (objectHash) or something drifted, else Synced. A run that rendered nothing
 * (the fast path, a restart) compared nothing: the last run's sync status and drift stand.
 */
export function observedOutcome(input: ObservedInput): RunOutcome {
  let resources: ResourceStatus[] = input.comparison.resources;
  let drift: DriftEntry[] = input.desired ? input.comparison.drift : [...(input.prev.drift ?? [])];
  const events: RunEvent[] = [];
  let driftCorrected = 0;
  let health = input.health;
  if (input.corrected) {
    const { applied, health: after } = input.corrected;
    driftCorrected = applied.size;
    events.push(input.corrected.event);
    resources = resources.map((r) => {
      if (!applied.has(refKey(r))) return r;
      const now = after?.byKey.get(refKey(r));
      if (now) return resourceStatus(r, "Synced", now);
      const { message: _m, ...rest } = r;
      return { ...rest, status: "Synced" };
    });
    drift = [];
    if (after) health = { status: after.status, reason: after.reason };
  }
  let syncStatus = input.syncStatus;
  if (syncStatus === undefined && !input.desired) syncStatus = input.prev.syncStatus ?? "Unknown";
  if (syncStatus === undefined) {
    // The rendered objects decide, not the commit (gates.ts outOfSync).
    const differs = input.desired ? input.prev.objectHash !== input.desired.objectHash : false;
    syncStatus = differs || drift.length > 0 ? "OutOfSync" : "Synced";
  }
  const out: RunOutcome = {
    inventory: [...input.inventory],
    resources,
    health,
    syncStatus,
    drift,
    events,
  };
  if (driftCorrected > 0 && input.corrected) {
    out.driftCorrected = driftCorrected;
    out.corrected = describeCorrection(input.comparison.drift, input.corrected.applied);
  }
  if (input.desired && input.prev.failedObjectHash === input.desired.objectHash) {
    const failure = stillFailed(input.prev, input.comparison);
    if (failure) out.failure = failure;
  }
  return out;
}

/**
 * The failure of a render whose apply failed terminally, seen again by a run that did not apply
 * it (the gates wait for a new render: ApplyStalled). Refused dry runs give their own words;
 * else, while any object of the render is not live as desired (one that was never created is
 * Missing and is not dry-run), the last run's ApplyFailed message stands. Only a comparison
 * that finds every object Synced (someone fixed it out of band) clears it: a failed apply
 * never reads as Ready on a later run (Argo CD and Flux keep Ready=False until an apply works).
 */
function stillFailed(prev: AppStatus, comparison: Comparison): Failure | undefined {
  const refused = comparison.errors.filter((e) => e.terminal);
  if (refused.length > 0) {
    return {
      reason: FailureReason.ApplyFailed,
      message: refused.map((e) => `${describeRef(e.ref)}: ${e.message}`).join("; "),
      stalled: true,
    };
  }
  const unsynced = comparison.resources.filter((r) => r.status !== "Synced");
  if (unsynced.length === 0 && comparison.drift.length === 0) return undefined;
  const ready = prev.conditions?.find((c) => c.type === "Ready");
  const message =
    ready?.status === "False" && ready.reason === FailureReason.ApplyFailed && ready.message
      ? ready.message
      : `the apply of this render failed; not applied: ${unsynced.map(describeRef).join(", ")}`;
  return { reason: FailureReason.ApplyFailed, message, stalled: true };
}
