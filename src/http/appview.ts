// Read-only views of an App for the HTTP API. The spec is read leniently (it is validated by
// the reconcile), so one bad field elsewhere does not hide the fields these need.

import {
  type App,
  appRow,
  type Condition,
  describeSource,
  type Operation,
  type SourceDescription,
  SyncWindow,
} from "../app/index.ts";
import { nameOf, shortRevision } from "../core/index.ts";
import { nextRunAt, operationFinished } from "../plan/index.ts";

function record(v: unknown): Record<string, unknown> | undefined {
  return typeof v === "object" && v !== null && !Array.isArray(v)
    ? (v as Record<string, unknown>)
    : undefined;
}

/**
 * Where the App's desired state comes from, for display and metrics: its kind, location and
 * ref (describeSource: one entry per source kind), without credentials.
 */
export function sourceOf(app: App): SourceDescription {
  return describeSource(app.spec);
}

/**
 * `spec.syncWindows` when every window validates, else undefined (the reconcile reports an
 * invalid spec; the HTTP API then leaves the decision to it).
 */
export function syncWindowsOf(app: App): SyncWindow[] | undefined {
  const raw = record(app.spec)?.["syncWindows"];
  if (!Array.isArray(raw)) return undefined;
  const parsed = raw.map((w) => SyncWindow.safeParse(w));
  return parsed.every((p) => p.success) ? parsed.map((p) => p.data!) : undefined;
}

/** Whether `spec.freeze` is true. */
export function isFrozen(app: App): boolean {
  return record(app.spec)?.["freeze"] === true;
}

/**
 * The operation in spec.operation that has not finished yet: present, and status.operationState
 * is not about it or says it is still Running. Undefined when none is pending.
 */
export function requestedOperation(app: App): Partial<Operation> | undefined {
  const op = record(record(app.spec)?.["operation"]);
  if (!op) return undefined;
  return operationFinished(app.status?.operationState, op["id"])
    ? undefined
    : (op as Partial<Operation>);
}

/** "namespace/name". */
export function keyOf(app: App): string {
  return nameOf(app.metadata);
}

/**
 * When the App runs next (RFC 3339), derived from its uid, interval, failures and the clock
 * (plan/schedule.ts nextRunAt, with the Worker's one-minute tick): status stores no schedule.
 */
export function nextRunOf(app: App, now: Date): string {
  return nextRunAt(appRow(app), now).toISOString();
}

/**
 * The API's view of an App: `{namespace, name, syncStatus, healthStatus, healthReason, ready
 * ({status, reason, message} of the Ready condition, as kubectl get apps -o wide shows it),
 * revision, shortRevision, observedRevision, heldRevision, previousRevisions, operationState,
 * conditions, lastSyncedAt, nextReconcileAt (derived: nextRunOf), nextSyncWindow, resources,
 * drift}` — for a Held App, `resources` is the approval preview (what will be created, changed
 * field by field, pruned). Absent scalars are null, lists [].
 */
export function summarize(app: App, now: Date = new Date()) {
  const s = app.status ?? {};
  return {
    namespace: app.metadata.namespace,
    name: app.metadata.name,
    syncStatus: s.syncStatus ?? null,
    healthStatus: s.healthStatus ?? null,
    healthReason: s.healthReason ?? null,
    // The Ready condition, as `kubectl get apps` shows it (-o wide: the message).
    ready: readyOf(s.conditions),
    revision: s.revision ?? null,
    shortRevision: s.revision ? shortRevision(s.revision) : null,
    observedRevision: s.observedRevision ?? null,
    heldRevision: s.heldRevision ?? null,
    previousRevisions: s.previousRevisions ?? [],
    operationState: s.operationState ?? null,
    conditions: s.conditions ?? [],
    lastSyncedAt: s.lastSyncedAt ?? null,
    nextReconcileAt: nextRunOf(app, now),
    nextSyncWindow: s.nextSyncWindow ?? null,
    nextSyncWindowMessage: s.nextSyncWindowMessage ?? null,
    // What approving would create, change (which fields) and prune, and what drifted.
    resources: s.resources ?? [],
    drift: s.drift ?? [],
  };
}

/** `{status, reason, message}` of the Ready condition, or null before the first run. */
function readyOf(
  conditions: readonly Condition[] | undefined,
): { status: Condition["status"]; reason: string; message: string } | null {
  const ready = conditions?.find((c) => c.type === "Ready");
  return ready ? { status: ready.status, reason: ready.reason, message: ready.message } : null;
}

/** The JSON shape of {@link summarize}. */
export type AppSummary = ReturnType<typeof summarize>;
