// Scheduled runs in one process: many reconciles at once (`plumb reconcile --all`,
// `plumb serve`). The lines of Apps a tick leaves alone: tick.ts (skippedResult).

import { type NamespacedName, nameOf } from "../core/index.ts";
import type { Ports } from "./ports.ts";
import { type RunOptions, reconcileApp } from "./reconcile.ts";
import type { RunResult } from "./record.ts";

/** An App to reconcile and what its trigger knows (RunOptions). */
export type RunTarget = NamespacedName & { options?: RunOptions | undefined };

/**
 * Reconciles `targets` with at most `concurrency` runs at once (default 4), calling `onResult`
 * as each finishes. Each run gets its own `now()` reading and, when `ports` is a factory,
 * its own ports (so its request counts are its own). Each target's own options (what its
 * trigger knows) apply to its run.
 */
export async function reconcileMany(
  targets: readonly RunTarget[],
  ports: Ports | (() => Ports),
  now: () => Date,
  onResult: (r: RunResult) => void,
  concurrency = 4,
): Promise<RunResult[]> {
  const results: RunResult[] = [];
  let next = 0;
  const worker = async () => {
    while (next < targets.length) {
      const { options, ...ref } = targets[next++]!;
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
  await Promise.all(Array.from({ length: Math.min(concurrency, targets.length) }, worker));
  return results;
}
