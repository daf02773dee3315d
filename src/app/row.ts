// What a scheduled tick needs to know about an App, and nothing of its status beyond that: one
// row of the compact App list. The API server gives it as the Table form of the list
// (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`, `includeObject=None`), whose cells are
// the CRD's printer columns; ROW_COLUMNS below are those columns (priority 1: shown by
// `kubectl get apps -o wide`), so the CRD and the reader of the rows agree by construction.
import type { App } from "./schema.ts";

/** One App as the tick sees it: a few hundred bytes instead of its whole status. */
export interface AppRow {
  namespace: string;
  name: string;
  uid?: string;
  /** metadata.generation and status.observedGeneration. */
  generation?: number;
  observedGeneration?: number;
  /** metadata.deletionTimestamp is set: the finalizer is waiting for a run. */
  deleting: boolean;
  /** spec.interval as written (possibly invalid: the schedule then uses its default). */
  interval?: string;
  /** status.failures: consecutive failed runs. */
  failures?: number;
  /** status.lastReconciledAt: when a run last wrote status (RFC 3339). */
  lastReconciledAt?: string;
  /** status.nextSyncWindow: a sync window held a sync back and opens then. */
  nextSyncWindow?: string;
  /** status.redeliverAt: undelivered notifications are retried then. */
  redeliverAt?: string;
  /** status.healthStatus, and for the lines of Apps a tick leaves alone, syncStatus and revision. */
  healthStatus?: string;
  syncStatus?: string;
  revision?: string;
  /** spec.source.git as written, when the App has a Git source. */
  git?: { url: string; ref: string; secretName?: string };
}

/** A printer column of the compact list: its Table name, where it reads from, its type. */
export interface RowColumn {
  name: string;
  type: "string" | "integer";
  jsonPath: string;
  description: string;
}

/**
 * The Table column with the App's namespace. Not "Namespace": `kubectl get -A` adds a column of
 * that name itself (from each row's object), and a second NAMESPACE in `-A -o wide` would say
 * the same twice under one header. The tick's Table rows carry no object (`includeObject=None`:
 * an object's metadata holds its managedFields, kilobytes per App), so it reads this one.
 */
export const NAMESPACE_COLUMN = "App Namespace";

/** The columns the tick reads (printer columns of priority 1), in the CRD's order. */
export const ROW_COLUMNS = [
  {
    name: NAMESPACE_COLUMN,
    type: "string",
    jsonPath: ".metadata.namespace",
    description:
      "The App's namespace, for the compact list the scheduled tick reads (kubectl get -A shows it as NAMESPACE too).",
  },
  { name: "UID", type: "string", jsonPath: ".metadata.uid", description: "The App's uid." },
  {
    name: "Interval",
    type: "string",
    jsonPath: ".spec.interval",
    description: "spec.interval: how often a full comparison runs.",
  },
  {
    name: "Source",
    type: "string",
    jsonPath: ".spec.source.git.url",
    description: "The Git repository (Git sources).",
  },
  { name: "Ref", type: "string", jsonPath: ".spec.source.git.ref", description: "The Git ref." },
  {
    name: "Source Secret",
    type: "string",
    jsonPath: ".spec.source.git.secretRef.name",
    description: "The Secret with the Git credentials.",
  },
  {
    name: "Generation",
    type: "integer",
    jsonPath: ".metadata.generation",
    description: "metadata.generation.",
  },
  {
    name: "Observed Generation",
    type: "integer",
    jsonPath: ".status.observedGeneration",
    description: "The generation the last run that wrote status saw.",
  },
  {
    name: "Failures",
    type: "integer",
    jsonPath: ".status.failures",
    description: "Consecutive failed runs (backoff).",
  },
  {
    name: "Last Reconciled",
    type: "string",
    jsonPath: ".status.lastReconciledAt",
    description: "When a run last wrote status.",
  },
  {
    name: "Next Sync Window",
    type: "string",
    jsonPath: ".status.nextSyncWindow",
    description: "When a sync window that holds automated sync back opens.",
  },
  {
    name: "Redeliver At",
    type: "string",
    jsonPath: ".status.redeliverAt",
    description: "When undelivered notifications are retried.",
  },
  {
    name: "Applied Revision",
    type: "string",
    jsonPath: ".status.revision",
    description: "The revision applied (in full; Revision shows its short form).",
  },
  {
    name: "Deleting",
    type: "string",
    jsonPath: ".metadata.deletionTimestamp",
    description: "Set while the App is being deleted.",
  },
] as const satisfies readonly RowColumn[];

/** The default printer columns (priority 0) the rows also read. */
const DEFAULT_COLUMNS = { health: "Health", sync: "Sync" } as const;

/** The row of a full App (a list or get in JSON). */
export function appRow(app: App): AppRow {
  const spec = (app.spec ?? {}) as {
    interval?: unknown;
    source?: { git?: { url?: unknown; ref?: unknown; secretRef?: { name?: unknown } } };
  };
  const s = app.status;
  const row: AppRow = {
    namespace: app.metadata.namespace,
    name: app.metadata.name,
    deleting: Boolean(app.metadata.deletionTimestamp),
  };
  if (app.metadata.uid) row.uid = app.metadata.uid;
  if (app.metadata.generation !== undefined) row.generation = app.metadata.generation;
  if (s?.observedGeneration !== undefined) row.observedGeneration = s.observedGeneration;
  if (typeof spec.interval === "string") row.interval = spec.interval;
  if (s?.failures !== undefined) row.failures = s.failures;
  if (s?.lastReconciledAt) row.lastReconciledAt = s.lastReconciledAt;
  if (s?.nextSyncWindow) row.nextSyncWindow = s.nextSyncWindow;
  if (s?.redeliverAt) row.redeliverAt = s.redeliverAt;
  if (s?.healthStatus) row.healthStatus = s.healthStatus;
  if (s?.syncStatus) row.syncStatus = s.syncStatus;
  if (s?.revision) row.revision = s.revision;
  const git = spec.source?.git;
  if (git && typeof git.url === "string") {
    row.git = { url: git.url, ref: typeof git.ref === "string" ? git.ref : "HEAD" };
    if (typeof git.secretRef?.name === "string") row.git.secretName = git.secretRef.name;
  }
  return row;
}

/**
 * The row of one Table row: `columns` are the Table's column names (columnDefinitions), `cells`
 * the row's values in that order. Undefined when the name or namespace is missing (a Table
 * without the columns above: the CRD is older than this plumb).
 */
export function rowFromCells(
  columns: readonly string[],
  cells: readonly unknown[],
): AppRow | undefined {
  const at = (name: string): unknown => {
    const i = columns.indexOf(name);
    return i === -1 ? undefined : cells[i];
  };
  const text = (name: string) => {
    const v = at(name);
    return typeof v === "string" && v !== "" ? v : undefined;
  };
  const int = (name: string) => {
    const v = at(name);
    return typeof v === "number" && Number.isInteger(v) ? v : undefined;
  };
  const name = text("Name");
  const namespace = text(NAMESPACE_COLUMN);
  if (!name || !namespace) return undefined;
  const row: AppRow = { namespace, name, deleting: text("Deleting") !== undefined };
  const set = <K extends keyof AppRow>(key: K, value: AppRow[K] | undefined) => {
    if (value !== undefined) row[key] = value;
  };
  set("uid", text("UID"));
  set("generation", int("Generation"));
  set("observedGeneration", int("Observed Generation"));
  set("interval", text("Interval"));
  set("failures", int("Failures"));
  set("lastReconciledAt", text("Last Reconciled"));
  set("nextSyncWindow", text("Next Sync Window"));
  set("redeliverAt", text("Redeliver At"));
  set("healthStatus", text(DEFAULT_COLUMNS.health));
  set("syncStatus", text(DEFAULT_COLUMNS.sync));
  set("revision", text("Applied Revision"));
  const url = text("Source");
  if (url) {
    row.git = { url, ref: text("Ref") ?? "HEAD" };
    const secret = text("Source Secret");
    if (secret) row.git.secretName = secret;
  }
  return row;
}
