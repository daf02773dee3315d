// Runs in `plumb serve` (Node): one App at a time per App, follow-up runs a run asks for, and
// optionally the schedule itself (deletion and health must not wait for someone else).
import { nameOf } from "../src/core/index.ts";
import { tickAt } from "../src/plan/index.ts";
import {
  type AppSetResult,
  createInventoryIndex,
  dueAppSets,
  hintFor,
  type Ports,
  planTick,
  type RunOptions,
  type RunResult,
  reconcileAppSets,
  reconcileMany,
  resolveSources,
} from "../src/reconcile/index.ts";

type Key = { namespace: string; name: string };

/** "namespace/name" → its Key. */
function keyOf(id: string): Key {
  const slash = id.indexOf("/");
  return { namespace: id.slice(0, slash), name: id.slice(slash + 1) };
}

export interface Runner {
  /**
   * Reconciles `key` now, or once more after the run in progress for it (with the options of
   * the latest request: what its trigger knows, RunOptions).
   */
  reconcile(key: Key, options?: RunOptions): Promise<void>;
  /**
   * One scheduled tick of period `periodMs` (default: the schedule's, else one minute): the due
   * AppSets are evaluated first (so the Apps they make run in the same tick), then the due
   * Apps (deleted ones among them) are reconciled, each Git source resolved once.
   */
  tick(periodMs?: number): Promise<void>;
  /** Starts ticking every `everyMs` (the first tick at once). */
  startSchedule(everyMs: number): void;
  /** Stops the schedule and clears pending follow-ups. */
  stop(): void;
}

/**
 * The runs of one `plumb serve` process. A run whose result asks for a follow-up
 * (`followUpSeconds`: its objects are Progressing) gets a timer for it, one per App; a tick
 * plans as the Worker's cron does (planTick: the compact list, the stateless schedule; one
 * lookup per Git source, one read of the inventories) and reconciles the due Apps. Ticks never
 * overlap and run at most `concurrency` Apps at once; every run prints its result line (an AppSet's: `printAppSet`).
 */
export function createRunner(
  ports: () => Ports,
  print: (r: RunResult) => void,
  log: (entry: Record<string, unknown>) => void,
  concurrency = 4,
  printAppSet: (r: AppSetResult) => void = (r) => log({ msg: "appset", ...r }),
): Runner {
  const running = new Set<string>();
  const again = new Map<string, RunOptions>();
  const followUps = new Map<string, NodeJS.Timeout>();
  let schedule: NodeJS.Timeout | undefined;
  let schedulePeriodMs: number | undefined;
  let ticking = false;

  const followUp = (key: Key, r: RunResult) => {
    const id = nameOf(key);
    clearTimeout(followUps.get(id));
    followUps.delete(id);
    if (r.followUpSeconds === undefined) return;
    const timer = setTimeout(() => {
      followUps.delete(id);
      void runner.reconcile(key);
    }, r.followUpSeconds * 1000);
    timer.unref();
    followUps.set(id, timer);
  };

  const run = async (key: Key, options: RunOptions, portsFor: () => Ports) => {
    const id = nameOf(key);
    if (running.has(id)) {
      // Once more after this run: owing a full comparison if any request did.
      const before = again.get(id);
      const compare = before?.compare === true || options.compare === true;
      again.set(id, { ...before, ...options, compare });
      return;
    }
    running.add(id);
    try {
      let next: RunOptions | undefined = options;
      while (next) {
        again.delete(id);
        await reconcileMany(
          [{ ...key, options: next }],
          portsFor,
          () => new Date(),
          (r) => {
            print(r);
            followUp(key, r);
            // The App became Ready: the Apps that wait for it run now, not at their slot.
            for (const id of r.dependants ?? [])
              void runner.reconcile(keyOf(id), { compare: true });
          },
          1,
        );
        next = again.get(id);
      }
    } catch (err) {
      log({ msg: "reconcile failed", app: id, error: String(err) });
    } finally {
      running.delete(id);
    }
  };

  const runner: Runner = {
    async reconcile(key, options = {}) {
      await run(key, options, ports);
    },
    async tick(periodMs = schedulePeriodMs) {
      if (ticking) return;
      ticking = true;
      try {
        const tick = tickAt(new Date(), periodMs);
        const sets = await dueAppSets(ports(), tick);
        if (sets.length > 0) {
          await reconcileAppSets(ports(), new Date(), {
            sets,
            onResult: printAppSet,
          });
        }
        const plan = await planTick(ports(), tick);
        const due = plan.due;
        if (due.length > 0) log({ msg: "schedule", due: due.map(nameOf) });
        const hints = await resolveSources(ports(), due);
        // The tick's runs share one read of the Apps' inventories (exact ownership).
        const inventories = createInventoryIndex();
        const shared = () => ({ ...ports(), inventories });
        let next = 0;
        const worker = async () => {
          while (next < due.length) {
            const d = due[next++]!;
            const key = { namespace: d.namespace, name: d.name };
            await run(key, { compare: d.compare, source: hintFor(hints, d) }, shared);
          }
        };
        await Promise.all(Array.from({ length: Math.min(concurrency, due.length) }, worker));
      } catch (err) {
        log({ msg: "schedule tick failed", error: String(err) });
      } finally {
        ticking = false;
      }
    },
    startSchedule(everyMs) {
      schedulePeriodMs = everyMs;
      void runner.tick();
      schedule = setInterval(() => void runner.tick(), everyMs);
    },
    stop() {
      clearInterval(schedule);
      for (const timer of followUps.values()) clearTimeout(timer);
      followUps.clear();
    },
  };
  return runner;
}
