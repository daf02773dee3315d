// A scheduled tick: list the Apps in compact pages, pick the due ones, resolve each
// Git source (repository, ref, credentials) once and hand the revision to every run on it.
// The cron trigger enqueues what this plans (functions/worker.ts); `plumb reconcile --all` runs it.
// Light on purpose: a tick that finds nothing due loads this, the schedule and the Kubernetes
// adapter, not the reconcile loop (its sources, renderers and Git client).
import type { AppRow, HealthStatus, SyncStatus } from "../app/index.ts";
import { nameOf } from "../core/index.ts";
import { nextRunAt, type Tick } from "../plan/schedule.ts";
import {
  type DueApp,
  dueRows,
  type GitSourceRef,
  groupBySource,
  type SourceHint,
  sourceKey,
  type TickOptions,
} from "../plan/tick.ts";
import type { Ports } from "./ports.ts";
import type { RunResult } from "./record.ts";

/** Rows per page of the compact list: a page of 500 rows is about 150 KB of JSON. */
export const ROW_PAGE = 500;

export interface PlanOptions extends TickOptions {
  /** Only this namespace's Apps. */
  namespace?: string | undefined;
  /** Rows per list request (default ROW_PAGE). */
  pageSize?: number;
  /** Called for each App the tick leaves alone (the CLI prints a Skipped line). */
  onSkipped?: (row: AppRow) => void;
}

/** The due Apps of a tick, and what listing them took. */
export interface TickPlan {
  due: DueApp[];
  /** Apps listed, and list requests made. */
  listed: number;
  pages: number;
}

/**
 * Lists the Apps page by page (KubePort.listAppRows) and keeps the due ones (plan/tick.ts
 * dueRows), so memory holds one page and the due Apps, never the whole list.
 */
export async function planTick(
  ports: Pick<Ports, "kube">,
  tick: Tick,
  options: PlanOptions = {},
): Promise<TickPlan> {
  const due: DueApp[] = [];
  let listed = 0;
  let pages = 0;
  let next: string | undefined;
  do {
    const page = await ports.kube.listAppRows(
      options.namespace,
      options.pageSize ?? ROW_PAGE,
      next,
    );
    pages++;
    listed += page.rows.length;
    const found = dueRows(page.rows, tick, options);
    due.push(...found);
    if (options.onSkipped) {
      const taken = new Set(found.map((d) => `${d.namespace}/${d.name}`));
      for (const row of page.rows) {
        if (!taken.has(`${row.namespace}/${row.name}`)) options.onSkipped(row);
      }
    }
    next = page.continue;
  } while (next);
  return { due, listed, pages };
}

/**
 * Resolves each distinct Git source of `apps` once (GitPort.resolve, with the credentials of
 * its Secret), `concurrency` at a time (default 4). A source that fails to resolve, or is not
 * resolved within `deadlineMs`, gets no hint: its runs resolve it themselves (and record a
 * failure in their App's status).
 * @returns the hints by sourceKey
 */
export async function resolveSources(
  ports: Pick<Ports, "kube" | "git" | "redactor" | "log">,
  apps: ReadonlyArray<{ source?: GitSourceRef | undefined }>,
  options: { concurrency?: number; deadlineMs?: number } = {},
): Promise<Map<string, SourceHint>> {
  const concurrency = options.concurrency ?? 4;
  const hints = new Map<string, SourceHint>();
  const groups = [...groupBySource(apps).values()].map((g) => g.source);
  let next = 0;
  const worker = async () => {
    while (next < groups.length) {
      const source = groups[next++]!;
      try {
        // Loaded only for a source with credentials (source.ts brings the whole source layer).
        const auth = source.secret
          ? await (await import("./source.ts")).readSourceAuth(ports, ...splitSecret(source.secret))
          : undefined;
        const revision = await ports.git.resolve(
          { url: source.url, ref: source.ref, path: "." },
          auth,
        );
        hints.set(sourceKey(source), { ...source, revision });
      } catch (e) {
        ports.log?.({
          msg: "source lookup failed; its Apps resolve it themselves",
          source: source.url,
          ref: source.ref,
          error: e instanceof Error ? e.message : String(e),
        });
      }
    }
  };
  const all = Promise.all(Array.from({ length: Math.min(concurrency, groups.length) }, worker));
  if (options.deadlineMs === undefined) await all;
  else {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = new Promise<void>((r) => {
      timer = setTimeout(r, options.deadlineMs);
    });
    await Promise.race([all, deadline]);
    clearTimeout(timer);
    next = groups.length; // start no more lookups; those under way finish unheeded
  }
  return new Map(hints);
}

/**
 * The line printed for an App a scheduled run leaves alone (not due): its state from the
 * compact list, outcome "Skipped", when it runs next (derived: nextRunAt), no requests made.
 * @param periodMs the tick period (the next run is rounded up to a tick)
 */
export function skippedResult(row: AppRow, now: Date, periodMs?: number): RunResult {
  const r: RunResult = {
    app: nameOf(row),
    outcome: "Skipped",
    requests: { get: 0, list: 0, create: 0, update: 0, patch: 0, delete: 0 },
  };
  if (row.syncStatus) r.syncStatus = row.syncStatus as SyncStatus;
  if (row.healthStatus) r.healthStatus = row.healthStatus as HealthStatus;
  if (row.revision) r.revision = row.revision;
  r.nextReconcileAt = nextRunAt(row, now, periodMs).toISOString();
  return r;
}

/** The hint resolved for an App's source, if any. */
export function hintFor(
  hints: ReadonlyMap<string, SourceHint>,
  app: { source?: GitSourceRef | undefined },
): SourceHint | undefined {
  return app.source ? hints.get(sourceKey(app.source)) : undefined;
}

function splitSecret(secret: string): [string, string] {
  const i = secret.indexOf("/");
  return [secret.slice(0, i), secret.slice(i + 1)];
}
