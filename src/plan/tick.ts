// A scheduled tick's plan: which Apps are due, and their Git sources grouped so that
// each repository and ref is resolved once and the revision handed to every run. Pure.
import type { AppRow } from "../app/index.ts";
import { type Due, dueAt, lastSlot, shardOf, type Tick } from "./schedule.ts";

/** A revision resolved once for a Git source, handed to the runs of every App on it. */
export interface SourceHint {
  /** spec.source.git.url and .ref exactly as the Apps write them. */
  url: string;
  ref: string;
  /** "namespace/name" of the Secret the credentials came from; absent for none. */
  secret?: string | undefined;
  /** The commit the ref named when it was resolved. */
  revision: string;
}

/** The Git source of an App as a hint is checked against: its spec's url, ref and Secret. */
export interface GitSourceRef {
  url: string;
  ref: string;
  /** "namespace/name" of spec.source.git.secretRef, absent without one. */
  secret?: string | undefined;
}

/** The key of a Git source: Apps with equal keys share one lookup (and one fetch per revision). */
export function sourceKey(source: GitSourceRef): string {
  return JSON.stringify([source.url, source.ref, source.secret ?? ""]);
}

/**
 * Whether `hint` was resolved for exactly this source: same url, ref and credentials Secret.
 * A run uses a hint only then ("the run still verifies it against the App's spec"),
 * so an App edited since the tick, or one with other credentials, resolves its own revision.
 */
export function hintFits(hint: SourceHint | undefined, source: GitSourceRef): boolean {
  if (!hint) return false;
  return sourceKey(hint) === sourceKey(source);
}

/** The Git source of a row, as hints are keyed (the Secret qualified by the App's namespace). */
export function rowSource(row: AppRow): GitSourceRef | undefined {
  if (!row.git) return undefined;
  const source: GitSourceRef = { url: row.git.url, ref: row.git.ref };
  if (row.git.secretName) source.secret = `${row.namespace}/${row.git.secretName}`;
  return source;
}

/** One App a tick reconciles. */
export interface DueApp extends Due {
  namespace: string;
  name: string;
  /** Its Git source (grouped for one lookup), when it has one. */
  source?: GitSourceRef;
}

export interface TickOptions {
  /** Reconcile every App (`--force`), each with a full comparison. */
  force?: boolean | undefined;
  /** Only the Apps of shard `index` of `count` (shardOf): `reconcile --all --shard I/N`. */
  shard?: { index: number; count: number } | undefined;
}

/**
 * The due Apps among `rows` at `tick` (dueAt), in the order given; with `force` every App,
 * each owing a full comparison; with `shard`, only that shard's Apps. An App being deleted
 * carries no source (nothing to look up for its finalizer).
 */
export function dueRows(rows: readonly AppRow[], tick: Tick, options: TickOptions = {}): DueApp[] {
  const out: DueApp[] = [];
  for (const row of rows) {
    if (options.shard && shardOf(row, options.shard.count) !== options.shard.index) continue;
    const due: Due | undefined = options.force
      ? { reason: "slot", compare: true }
      : dueAt(row, tick);
    if (!due) continue;
    const app: DueApp = { namespace: row.namespace, name: row.name, ...due };
    // Finalizing needs no source: an App being deleted is not looked up (its repository may
    // be gone), so its run waits on nothing but the cluster.
    const source = due.reason === "deleting" ? undefined : rowSource(row);
    if (source) app.source = source;
    out.push(app);
  }
  return out;
}

/** Apps grouped by Git source (sourceKey); Apps without a Git source are left out. */
export function groupBySource<T extends { source?: GitSourceRef | undefined }>(
  apps: readonly T[],
): Map<string, { source: GitSourceRef; apps: T[] }> {
  const groups = new Map<string, { source: GitSourceRef; apps: T[] }>();
  for (const app of apps) {
    if (!app.source) continue;
    const key = sourceKey(app.source);
    const group = groups.get(key);
    if (group) group.apps.push(app);
    else groups.set(key, { source: app.source, apps: [app] });
  }
  return groups;
}

/**
 * `apps` in batches of at most `size`, Apps of one source together (so a batch shares one
 * fetch), sources in first-seen order, Apps without a Git source last.
 */
export function batchBySource<T extends { source?: GitSourceRef | undefined }>(
  apps: readonly T[],
  size: number,
): T[][] {
  const ordered = [...groupBySource(apps).values()].flatMap((g) => chunk(g.apps, size));
  return [
    ...ordered,
    ...chunk(
      apps.filter((a) => !a.source),
      size,
    ),
  ];
}

function chunk<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += Math.max(1, size)) out.push(items.slice(i, i + size));
  return out;
}

/**
 * How often an AppSet's generators are read again without a trigger: 3 minutes, Argo CD's
 * ApplicationSet default (requeueAfterSeconds 180). Webhooks bring changes sooner.
 */
export const APPSET_INTERVAL = "3m";

/** What deciding whether an AppSet is due reads of it (metadata and status only). */
export interface AppSetDueRef {
  metadata: {
    name: string;
    namespace: string;
    uid?: string | undefined;
    generation?: number | undefined;
  };
  status?:
    | {
        observedGeneration?: number | undefined;
        conditions?: ReadonlyArray<{ type: string; status: string }> | undefined;
      }
    | undefined;
}

/**
 * Whether a tick evaluates the AppSet: never evaluated (no status.observedGeneration); its spec
 * changed (generation ≠ observedGeneration); failing (ErrorOccurred True: every tick, as an
 * error is cheap to find again and a fixed Secret or repository should show soon); or its slot
 * in every APPSET_INTERVAL fell in the tick (lastSlot, spread by its uid as Apps are). With
 * `force`, every AppSet; with `shard`, only that shard's AppSets (shardOf of its uid).
 */
export function appSetDue(appset: AppSetDueRef, tick: Tick, options: TickOptions = {}): boolean {
  const row = {
    namespace: appset.metadata.namespace,
    name: appset.metadata.name,
    interval: APPSET_INTERVAL,
    ...(appset.metadata.uid ? { uid: appset.metadata.uid } : {}),
  };
  if (options.shard && shardOf(row, options.shard.count) !== options.shard.index) return false;
  if (options.force) return true;
  const observed = appset.status?.observedGeneration;
  if (observed === undefined || observed !== appset.metadata.generation) return true;
  if (appset.status?.conditions?.some((c) => c.type === "ErrorOccurred" && c.status === "True"))
    return true;
  return lastSlot(row, tick.at) > tick.at - tick.periodMs;
}
