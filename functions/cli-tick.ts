// `plumb reconcile --all`: one scheduled tick in this process (a CronJob, cron, Lambda). The
// Apps are listed and the due ones picked with the Kubernetes adapter alone; the reconcile loop,
// its Git client, renderers and notifiers are loaded only when some App is due, so a tick that
// finds nothing due costs Node's start-up and one list of the Apps.
import type { Redactor } from "../src/core/redact.ts";
import { createKubePort } from "../src/kube/adapter.ts";
import { nodeKubeTransport } from "../src/kube/node.ts";
import { tickAt } from "../src/plan/schedule.ts";
import { dueAppSets, planTick, skippedResult } from "../src/reconcile/tick.ts";
import { kubeRetryOptions, type RuntimeConfig } from "../src/runtime/config.ts";
import type { CliArgs } from "./cli-args.ts";

/**
 * Runs one tick: the due AppSets are evaluated first (their result lines printed; an App one
 * makes is new, so it is due in the same tick), then the due Apps are reconciled (at most config.concurrency at once), the others get a
 * Skipped line (--force: all, each with a full comparison); each Git source is resolved once.
 * Every result line goes to `print`; log lines to stderr, redacted.
 * @returns the exit code: 1 when a run (or an AppSet) failed, else 0
 */
export async function runTick(
  args: Extract<CliArgs, { kind: "reconcile-all" }>,
  kubeconfig: string | undefined,
  config: RuntimeConfig,
  redactor: Redactor,
  print: (r: object) => void,
): Promise<number> {
  const log = (entry: Record<string, unknown>) =>
    console.error(JSON.stringify(redactor.redactValue(entry)));
  // One transport (one kubeconfig read, one kept-alive connection) for the list and the runs.
  const transport = nodeKubeTransport(kubeconfig, {
    retry: kubeRetryOptions(config, log),
    rateLimit: config.kubeRateLimit,
  });
  const now = new Date();
  const tick = tickAt(now, args.everyMs);
  const kube = createKubePort(transport);
  const sets = await dueAppSets({ kube, log }, tick, {
    namespace: args.namespace,
    force: args.force,
    shard: args.shard,
  });
  let failed = false;
  if (sets.length > 0) {
    const [{ reconcileAppSets }, { nodePorts }] = await Promise.all([
      import("../src/reconcile/appset.ts"),
      import("./node-ports.ts"),
    ]);
    const ports = nodePorts(kubeconfig, config, redactor, { transport });
    const results = await reconcileAppSets(ports(), now, { sets, onResult: print });
    failed = results.some((r) => r.outcome === "Failed");
  }
  const plan = await planTick({ kube }, tick, {
    namespace: args.namespace,
    force: args.force,
    shard: args.shard,
    onSkipped: (row) => print(skippedResult(row, now, tick.periodMs)),
  });
  if (plan.due.length === 0) return failed ? 1 : 0;
  const [loop, { nodePorts }] = await Promise.all([
    import("../src/reconcile/index.ts"),
    import("./node-ports.ts"),
  ]);
  const ports = nodePorts(kubeconfig, config, redactor, { transport });
  const hints = await loop.resolveSources(ports(), plan.due);
  const targets = plan.due.map((d) => ({
    namespace: d.namespace,
    name: d.name,
    options: { compare: d.compare, source: loop.hintFor(hints, d) },
  }));
  // The tick's runs share one read of the Apps' inventories (exact ownership).
  const inventories = loop.createInventoryIndex();
  const results = await loop.reconcileMany(
    targets,
    () => ({ ...ports(), inventories }),
    () => new Date(),
    print,
    config.concurrency,
  );
  return failed || results.some((r) => r.outcome === "Failed") ? 1 : 0;
}
