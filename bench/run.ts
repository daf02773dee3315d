// `npm run bench`: what a reconcile costs, measured against a real control plane and a real
// Git server. Prints tables and the targets (PASS/MISS); writes bench/results/<date>.json.
// Uses $KUBECONFIG when set, else starts (and stops) a control plane in .plumb/bench-cluster.
// `npm run bench -- --compare-only` measures only the cost of a full comparison (section 7);
// `--scale-only` only the scale measurements (section 10); `--engines-only` only section 11;
// `--only hostile` only the hostile renders (section 12: peak RSS of one CLI run on each);
// `--only cli` only the whole CLI processes: the no-op runs and a CronJob tick against serve;
// `--only burst` only the burst of Flux's benchmark shape (section 13); `--only flux` only
// section 14, Flux's kustomize-controller beside plumb's no-op CLI runs (the controller is built
// from its Go module on first use: minutes). `npm run bench -- --readme [file]` instead rewrites
// the README's generated cost block from one results file (the newest by default;
// bench/readme.ts) and prints it.
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { join } from "node:path";
import { bundleSize } from "./bundle.ts";
import { burst, burstShards, burstSizes } from "./burst.ts";
import { coldStart } from "./cold-start.ts";
import { comparisonCost } from "./compare.ts";
import { cronNode, cronWorkerd, tickCost } from "./cron.ts";
import { engineCost } from "./engines.ts";
import { CASES, cronFiles, generated50, guestbook } from "./fixtures.ts";
import { fluxCost } from "./flux.ts";
import { type BenchGit, startBenchGit } from "./git.ts";
import { HOSTILE_CASES, hostileRenders } from "./hostile.ts";
import { type Cluster, Kube, ROOT, startCluster } from "./kube.ts";
import { memoryPeak } from "./memory.ts";
import { benchCli, processCost } from "./process.ts";
import {
  cpuBreakdown,
  measuredRun,
  type RunSample,
  requestsCase,
  runner,
  timingCase,
} from "./reconcile-bench.ts";
import { renderNode, renderWorkerd } from "./render.ts";
import { evaluateTargets, type Results, report } from "./report.ts";
import { checkoutCommit, writeReadme } from "./results-file.ts";
import { scalePhases } from "./scale.ts";
import { timedCli } from "./scale-process.ts";
import { startNodeServer, startWorkerd, workerdPrerequisites } from "./servers.ts";
import { webhookLatency } from "./webhook.ts";

const COMPARE_ONLY = process.argv.includes("--compare-only");
const SCALE_ONLY = process.argv.includes("--scale-only");
const ENGINES_ONLY = process.argv.includes("--engines-only");
/** `--only <section>`: only that section ("hostile", "cli"). */
const ONLY = (() => {
  const at = process.argv.indexOf("--only");
  return at < 0 ? undefined : process.argv[at + 1];
})();
if (process.argv.includes("--readme")) {
  const named = process.argv[process.argv.indexOf("--readme") + 1];
  const { block, source } = writeReadme(ROOT, named?.startsWith("--") ? undefined : named);
  console.log(`${block}\n\nREADME.md: the cost block rewritten from ${source}`);
  process.exit(0);
}
const RUNS = 20;
const PUSHES = 10;
const NODE_CRON_SIZES = [10, 100, 1000];
const WORKERD_CRON_SIZES = [10, 100];

const started = Date.now();
const log = (s: string) =>
  process.stderr.write(`[bench ${((Date.now() - started) / 1000).toFixed(0).padStart(4)}s] ${s}\n`);

const results: Results = {
  date: new Date().toISOString(),
  commit: checkoutCommit(ROOT),
  machine: {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? "unknown",
    memoryBytes: totalmem(),
    node: process.version,
    loadAverageBefore: loadavg(),
  },
  cluster: { kubeconfig: "", owned: false },
  requests: [],
  timings: [],
  webhook: [],
  cron: [],
  comparison: [],
  targets: [],
  errors: [],
};

/** Runs one phase under a deadline; a failure is recorded and the benchmark goes on. */
async function phase<T>(
  name: string,
  timeoutMs: number,
  fn: () => Promise<T>,
): Promise<T | undefined> {
  log(`${name}…`);
  const t0 = Date.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    const v = await Promise.race([
      fn(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`timed out after ${timeoutMs / 1000} s`)),
          timeoutMs,
        );
      }),
    ]);
    log(`${name}: done in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    return v;
  } catch (err) {
    const error = err instanceof Error ? err.message : String(err);
    log(`${name}: FAILED: ${error.slice(0, 2000)}`);
    results.errors.push({ phase: name, error });
    return undefined;
  } finally {
    clearTimeout(timer);
  }
}

let cluster: Cluster | undefined;
let git: BenchGit | undefined;
const cleanups: Array<() => Promise<void>> = [];

async function main(): Promise<void> {
  // 5. Bundle size (no cluster needed).
  if (!COMPARE_ONLY && !SCALE_ONLY && !ENGINES_ONLY && ONLY === undefined) {
    results.bundle = await phase("bundle size (wrangler deploy --dry-run)", 360_000, () =>
      bundleSize("wrangler.toml", async (file) => {
        results.coldStart = await phase("Worker cold start (workerd)", 120_000, () =>
          coldStart(file),
        );
      }),
    );
  }

  // 7. Render engines (no cluster needed); `npm run bench -- --render-only` stops after this.
  if (!SCALE_ONLY && !ENGINES_ONLY && ONLY === undefined) {
    results.renderBundle = await phase(
      "render Worker bundle (wrangler deploy --dry-run)",
      600_000,
      () => bundleSize("wrangler.render.toml"),
    );
    results.renderNode = await phase("render engines on Node (child process)", 240_000, renderNode);
    results.renderWorkerd = await phase(
      "render Worker in workerd (wrangler dev)",
      240_000,
      renderWorkerd,
    );
  }
  if (process.argv.includes("--render-only")) return;

  cluster = startCluster(log);
  results.cluster = { kubeconfig: cluster.kubeconfig, owned: cluster.owned };
  const kube = new Kube(cluster.kubeconfig);
  await kube.installCrd();
  git = await startBenchGit();
  const r = runner(kube, git);
  log(`cluster ready (${cluster.kubeconfig}); git server ${git.url}`);
  // 9. The scale measurements alone (and target 3's new commit of the 50-object App).
  const scale = { root: ROOT, kube, git, runner: r, kubeconfig: cluster.kubeconfig, log };
  // 11. The render engines as a user pays them: a Kustomize no-op CLI run, and a CPU hog.
  const engines = () =>
    phase("engines: a Kustomize no-op CLI run against guestbook's, and a CPU hog", 1_500_000, () =>
      engineCost(ROOT, kube, git!, cluster!.kubeconfig, log),
    );
  // 9. Whole processes: the CLI from start to exit; a CronJob tick against serve --schedule
  //    (serve lists every App: none but its own).
  const processPhase = () =>
    phase("whole processes: the plumb CLI under /usr/bin/time", 900_000, () =>
      processCost(ROOT, kube, git!, cluster!.kubeconfig, log),
    );
  const tickPhase = () =>
    phase("cron tick vs serve --schedule (whole processes)", 900_000, async () => {
      await kube.deleteApps();
      return tickCost(benchCli(ROOT), kube, git!, cluster!.kubeconfig, log);
    });
  if (ENGINES_ONLY) {
    results.engines = await engines();
    return;
  }
  if (ONLY === "cli") {
    results.process = await processPhase();
    results.tickCost = await tickPhase();
    return;
  }
  // 12. Hostile renders: one CLI run each under the default ceiling, peak RSS from outside.
  const hostile = () =>
    phase("hostile renders: peak RSS of one CLI run each", 1_800_000, () =>
      hostileRenders(kube, cluster!.kubeconfig, {
        root: ROOT,
        ceilingBytes: 512 * 1024 * 1024,
        cases: HOSTILE_CASES,
        log,
      }),
    );
  // 13. Flux's benchmark shape in a burst: 100 and 1,000 new Apps, shards of one CronJob.
  const bursts = async () => {
    results.burst = [];
    // The bundled CLI a CronJob runs (functions/plumb.mjs): built here once if a source
    // changed, so the shards do not each build it.
    const cli = benchCli(ROOT);
    await timedCli(cli, ["--help"]);
    for (const n of burstSizes()) {
      const b = await phase(
        `burst: ${n} Apps of Flux's shape, ${burstShards()} shards`,
        900_000,
        () => burst(cli, kube, git!, cluster!.kubeconfig, n, burstShards(), log),
      );
      if (b) results.burst.push(b);
    }
  };
  // 14. Flux's kustomize-controller beside plumb's no-op CLI runs (its build: minutes, once).
  const fluxPhase = () =>
    phase("Flux kustomize-controller beside plumb's no-op CLI runs", 3_600_000, () =>
      fluxCost(ROOT, kube, git!, cluster!.kubeconfig, log),
    );
  if (ONLY === "flux") {
    results.flux = await fluxPhase();
    return;
  }
  if (ONLY === "burst") {
    await bursts();
    return;
  }
  if (ONLY === "hostile") {
    results.hostile = await hostile();
    return;
  }
  if (SCALE_ONLY) {
    const out = await phase("requests: generated-50", 150_000, () =>
      requestsCase(r, generated50, log),
    );
    if (out) results.requests.push(out.result);
    results.scale = await scalePhases(phase, scale);
    return;
  }

  // 7. The cost of a full comparison (warm discovery cache after each case's first sync).
  const { DiscoveryCache } = await import("../src/kube/index.ts");
  results.comparison =
    (await phase("full comparison: steady, one object drifted, held preview", 420_000, () =>
      comparisonCost(r, () => new DiscoveryCache(), log),
    )) ?? [];
  if (COMPARE_ONLY) return;

  // 1. Requests by verb (and 2. timings, whose discovery cache starts warm from 1.).
  for (const c of CASES) {
    const out = await phase(`requests: ${c.name}`, 150_000, () => requestsCase(r, c, log));
    if (!out) continue;
    results.requests.push(out.result);
    const t = await phase(`timings: ${c.name} (${RUNS} runs × 3)`, 300_000, () =>
      timingCase(r, c, RUNS, out.discovery, log),
    );
    if (t) results.timings.push(t);
  }

  results.cpuBreakdown = await phase(
    "no-op CPU breakdown (API request, ls-refs)",
    60_000,
    async () => cpuBreakdown(r, (await git!.createRepo("cpu", guestbook.files())).url),
  );

  // 9. Whole processes: the CLI from start to exit.
  results.process = await processPhase();

  results.engines = await engines();
  results.flux = await fluxPhase();
  results.hostile = await hostile();

  // 6. Peak memory of a first sync of the 50-object App.
  results.memory = await phase(
    "memory: first sync of generated-50 in a child process",
    150_000,
    () => memoryPeak(kube, git!, cluster!.kubeconfig),
  );

  // 3. Webhook → applied, Node.
  const firstSync = async (ref: { namespace: string; name: string }) => {
    const { DiscoveryCache } = await import("../src/kube/index.ts");
    const s: RunSample = await measuredRun(r, ref, new DiscoveryCache());
    if (s.outcome !== "Reconciled") throw new Error(`first sync of ${ref.name}: ${s.error}`);
  };
  const nodeHook = await phase("webhook → applied: plumb serve (Node)", 180_000, async () => {
    const server = await startNodeServer(cluster!.kubeconfig);
    cleanups.push(server.stop);
    try {
      return await webhookLatency({
        runtime: "node (plumb serve)",
        base: server.base,
        kube,
        git: git!,
        ns: "bench-hook-node",
        repoName: "hook-node",
        pushes: PUSHES,
        warmups: 1,
        firstSync,
      });
    } finally {
      await server.stop();
    }
  });
  if (nodeHook) results.webhook.push(nodeHook);

  // 3 and 4 through workerd.
  const cronRepo = await git.createRepo("cron", cronFiles(Math.max(...NODE_CRON_SIZES) / 5));
  const missing = workerdPrerequisites(cluster.dir);
  if (missing) {
    results.errors.push({ phase: "workerd", error: `skipped: ${missing}` });
    log(`workerd: skipped: ${missing}`);
  } else {
    await phase("workerd (wrangler dev): webhook and cron ticks", 540_000, async () => {
      const w = await startWorkerd(cluster!.kubeconfig);
      cleanups.push(w.stop);
      try {
        const hook = await phase("webhook → applied: workerd", 180_000, () =>
          webhookLatency({
            runtime: "workerd (wrangler dev)",
            base: w.base,
            kube,
            git: git!,
            ns: "bench-hook-worker",
            repoName: "hook-worker",
            pushes: PUSHES,
            warmups: 1,
            firstSync,
          }),
        );
        if (hook) results.webhook.push(hook);
        for (const n of WORKERD_CRON_SIZES) {
          const c = await phase(`cron tick, workerd: ${n} Apps`, 240_000, async () => {
            await kube.deleteApps();
            return cronWorkerd(
              kube,
              cronRepo,
              n,
              w.base,
              w.output,
              () => w.proxy.requests.length,
              200_000,
            );
          });
          if (c) results.cron.push(c);
        }
      } finally {
        await w.stop();
      }
    });
  }

  // 4. Cron ticks on Node.
  for (const n of NODE_CRON_SIZES) {
    const budget = n >= 1000 ? 420_000 : 120_000;
    const c = await phase(`cron tick, node: ${n} Apps`, budget + 60_000, async () => {
      await kube.deleteApps();
      return cronNode(kube, git!, cronRepo, n, budget);
    });
    if (c) results.cron.push(c);
  }

  // 9. A CronJob tick against serve --schedule.
  results.tickCost = await tickPhase();

  await bursts();

  // 9. Scale: steady runs, 1,000 Apps on one repository, a tick over 10,000 Apps (last:
  //    the Apps it leaves slow every list).
  results.scale = await scalePhases(phase, scale);

  if (!cluster.owned) {
    await phase("cleanup (bench namespaces)", 600_000, () => kube.cleanup());
  }
}

async function shutdown(): Promise<void> {
  for (const c of cleanups.reverse()) await c().catch(() => undefined);
  await git?.stop().catch(() => undefined);
  if (cluster?.owned) {
    log("stopping the control plane");
    try {
      cluster.stop();
    } catch (err) {
      log(`stopping the control plane failed: ${String(err)}`);
    }
  }
}

process.once("SIGINT", () => {
  log("interrupted: stopping");
  void shutdown().finally(() => process.exit(130));
});

try {
  await main();
} catch (err) {
  const error = err instanceof Error ? (err.stack ?? err.message) : String(err);
  log(`FAILED: ${error}`);
  results.errors.push({ phase: "setup", error });
} finally {
  await shutdown();
}
results.durationMs = Date.now() - started;
results.machine.loadAverageAfter = loadavg();
results.targets = evaluateTargets(results);
console.log(report(results));
const dir = join(ROOT, "bench/results");
mkdirSync(dir, { recursive: true });
const file = join(dir, `${results.date.replace(/:/g, "-").replace(/\.\d+Z$/, "Z")}.json`);
writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
console.log(`\nresults: ${file} (${((Date.now() - started) / 1000).toFixed(0)} s)`);
process.exit(results.errors.some((e) => e.phase === "setup") ? 1 : 0);
