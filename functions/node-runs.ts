// Runs in `plumb serve` (Node): one App at a time per App, follow-up runs a run asks for, and
// optionally the schedule itself (issue 9: deletion and health must not wait for someone else).
import { nameOf } from "../src/core/index.ts";
import { dueApps, type Ports, type RunResult, reconcileMany } from "../src/reconcile/index.ts";

type Key = { namespace: string; name: string };

export interface Runner {
  /** Reconciles `key` now, or once more after the run in progress for it. */
  reconcile(key: Key): Promise<void>;
  /** One scheduled tick: the due Apps (deleted ones among them) are reconciled. */
  tick(): Promise<void>;
  /** Starts ticking every `everyMs` (the first tick at once). */
  startSchedule(everyMs: number): void;
  /** Stops the schedule and clears pending follow-ups. */
  stop(): void;
}

/**
 * The runs of one `plumb serve` process. A run whose result asks for a follow-up
 * (`followUpSeconds`: its objects are Progressing) gets a timer for it, one per App; a tick
 * lists the due Apps (`dueApps`, as the Worker's cron does) and reconciles them. Ticks never
 * overlap and run at most `concurrency` Apps at once; every run prints its result line.
 */
export function createRunner(
  ports: () => Ports,
  print: (r: RunResult) => void,
  log: (entry: Record<string, unknown>) => void,
  concurrency = 4,
): Runner {
  const running = new Set<string>();
  const again = new Set<string>();
  const followUps = new Map<string, NodeJS.Timeout>();
  let schedule: NodeJS.Timeout | undefined;
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

  const runner: Runner = {
    async reconcile(key) {
      const id = nameOf(key);
      if (running.has(id)) {
        again.add(id);
        return;
      }
      running.add(id);
      try {
        do {
          again.delete(id);
          await reconcileMany(
            [key],
            ports,
            () => new Date(),
            (r) => {
              print(r);
              followUp(key, r);
            },
            1,
          );
        } while (again.has(id));
      } catch (err) {
        log({ msg: "reconcile failed", app: id, error: String(err) });
      } finally {
        running.delete(id);
      }
    },
    async tick() {
      if (ticking) return;
      ticking = true;
      try {
        const due = await dueApps(ports(), new Date());
        if (due.length > 0) log({ msg: "schedule", due: due.map(nameOf) });
        let next = 0;
        const worker = async () => {
          while (next < due.length) await runner.reconcile(due[next++]!);
        };
        await Promise.all(Array.from({ length: Math.min(concurrency, due.length) }, worker));
      } catch (err) {
        log({ msg: "schedule tick failed", error: String(err) });
      } finally {
        ticking = false;
      }
    },
    startSchedule(everyMs) {
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
