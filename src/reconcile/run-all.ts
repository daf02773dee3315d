// Scheduled runs: list the Apps, pick the due ones, reconcile them.

import type { App } from "../app/index.ts";
import { nameOf } from "../core/index.ts";
import { isDue } from "../plan/index.ts";
import type { Ports } from "./ports.ts";
import { type RunOptions, reconcileApp } from "./reconcile.ts";
import type { RunResult } from "./record.ts";

/** The Apps due at `now` (never reconciled, generation changed, or nextReconcileAt ≤ now). */
export async function dueApps(
  ports: Ports,
  now: Date,
  namespace?: string,
): Promise<Array<{ namespace: string; name: string }>> {
  const apps = await ports.kube.listApps(namespace);
  return apps
    .filter((a) => isDue(a, now))
    .map((a) => ({ namespace: a.metadata.namespace, name: a.metadata.name }));
}

/**
 * The line printed for an App a scheduled run leaves alone (not due): its current state from
 * status, outcome "Skipped", no requests made for it.
 */
export function skippedResult(app: App): RunResult {
  const r: RunResult = {
    app: nameOf(app.metadata),
    outcome: "Skipped",
    requests: { get: 0, list: 0, create: 0, update: 0, patch: 0, delete: 0 },
  };
  const s = app.status;
  if (s?.syncStatus) r.syncStatus = s.syncStatus;
  if (s?.healthStatus) r.healthStatus = s.healthStatus;
  if (s?.revision) r.revision = s.revision;
  if (s?.nextReconcileAt) r.nextReconcileAt = s.nextReconcileAt;
  return r;
}

/**
 * Reconciles `refs` with at most `concurrency` runs at once (default 4), calling `onResult`
 * as each finishes. Each run gets its own `now()` reading and, when `ports` is a factory,
 * its own ports (so its request counts are its own). `options` apply to every run (`full`:
 * `--force`, a person asked for them all).
 */
export async function reconcileMany(
  refs: ReadonlyArray<{ namespace: string; name: string }>,
  ports: Ports | (() => Ports),
  now: () => Date,
  onResult: (r: RunResult) => void,
  concurrency = 4,
  options: RunOptions = {},
): Promise<RunResult[]> {
  const results: RunResult[] = [];
  let next = 0;
  const worker = async () => {
    while (next < refs.length) {
      const ref = refs[next++]!;
      // A port per run keeps each App's request counts its own.
      const run = typeof ports === "function" ? ports() : ports;
      const r = await reconcileApp(ref, run, now(), options).catch(
        (err): RunResult => ({
          app: nameOf(ref),
          outcome: "Failed",
          error: err instanceof Error ? err.message : String(err),
          requests: { get: 0, list: 0, create: 0, update: 0, patch: 0, delete: 0 },
        }),
      );
      results.push(r);
      onResult(r);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, refs.length) }, worker));
  return results;
}
