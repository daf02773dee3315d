// Read-only views of an App for the HTTP API. The spec is read leniently (it is validated by
// the reconcile), so one bad field elsewhere does not hide the fields these need.

import { type App, appRow, type Condition, type Operation, SyncWindow } from "../app/index.ts";
import { nameOf, shortRevision } from "../core/index.ts";
import { nextRunAt, operationFinished } from "../plan/index.ts";

function record(v: unknown): Record<string, unknown> | undefined {
  return typeof v === "object" && v !== null && !Array.isArray(v)
    ? (v as Record<string, unknown>)
    : undefined;
}

/** `spec.source.git` as `{url, ref}` (ref defaulting to "HEAD"), or undefined for non-Git Apps. */
export function gitSourceOf(app: App): { url: string; ref: string } | undefined {
  const git = record(record(record(app.spec)?.["source"])?.["git"]);
  const url = git?.["url"];
  if (typeof url !== "string" || url === "") return undefined;
  const ref = git?.["ref"];
  return { url, ref: typeof ref === "string" && ref !== "" ? ref : "HEAD" };
}

/**
 * Where the App's desired state comes from, for display and metrics: `{type: "git", location:
 * url, ref}` or `{type: "image", location: repository, ref: tag}`; `{type: "unknown",
 * location: ""}` for a spec without either. A URL's user name, password, query and fragment
 * are dropped: a repository URL may carry a token, which must not reach a page or a label.
 */
export function sourceOf(app: App): {
  type: "git" | "image" | "unknown";
  location: string;
  ref: string;
} {
  const source = record(record(app.spec)?.["source"]);
  const git = gitSourceOf(app);
  if (git) return { type: "git", location: withoutCredentials(git.url), ref: git.ref };
  const image = record(source?.["image"]);
  const repository = image?.["repository"];
  if (typeof repository === "string" && repository !== "") {
    const tag = image?.["tag"];
    return {
      type: "image",
      location: withoutCredentials(repository),
      ref: typeof tag === "string" && tag !== "" ? tag : "latest",
    };
  }
  return { type: "unknown", location: "", ref: "" };
}

function withoutCredentials(location: string): string {
  try {
    const url = new URL(location);
    if (url.protocol !== "http:" && url.protocol !== "https:")
      return location.replace(/^[^@/]*@/, "");
    return `${url.protocol}//${url.host}${url.pathname}`;
  } catch {
    // Not a URL (an image repository such as registry.example.com/org/web): drop any "user@".
    return location.replace(/^[^@/]*@/, "");
  }
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
