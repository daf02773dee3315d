// Measurement 4: one cron tick over N small Apps (one ConfigMap each, one repository,
// spread over 5 namespaces): enqueue (list Apps + pick due) and reconcile them all.
import { execFileSync, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import type { App } from "../src/app/index.ts";
import { createKubePort, DiscoveryCache } from "../src/kube/index.ts";
import { tickAt } from "../src/plan/index.ts";
import {
  hintFor,
  type Ports,
  planTick,
  type RunResult,
  reconcileMany,
  resolveSources,
} from "../src/reconcile/index.ts";
import { createGitPort } from "../src/source/git.ts";
import { freePort, stopChild } from "../test/support/workerd.ts";
import { guestbook } from "./fixtures.ts";
import type { BenchGit, BenchRepo } from "./git.ts";
import { type Kube, pool, sleep, waitFor } from "./kube.ts";
import { timeProcess } from "./process.ts";
import type { Target } from "./report.ts";
import { ms, percentile, table } from "./stats.ts";

export const CRON_NAMESPACES = 5;

export interface CronResult {
  runtime: string;
  apps: number;
  /** Time to create the Apps (setup, not part of the tick). */
  setupMs: number;
  /** Apps the tick found due, and how many Apps it listed in all. */
  due: number;
  listed?: number;
  enqueueMs: number;
  reconcileAllMs: number;
  /** Apps with status.observedGeneration set at the end. */
  observed: number;
  failed: number;
  requests?: { total: number; perApp: number };
  /** CPU time of this process during "reconcile all" (Node path only), ms. */
  cpuMs?: number;
  gitRequests?: number;
  errors: string[];
}

function layout(prefix: string, n: number) {
  const namespaces = Array.from({ length: CRON_NAMESPACES }, (_, k) => `${prefix}-${k}`);
  const apps = Array.from({ length: n }, (_, i) => ({
    namespace: namespaces[i % CRON_NAMESPACES]!,
    name: `a-${Math.floor(i / CRON_NAMESPACES)}`,
    path: `c/${Math.floor(i / CRON_NAMESPACES)}`,
  }));
  return { namespaces, apps };
}

async function createApps(kube: Kube, repo: BenchRepo, prefix: string, n: number) {
  const l = layout(prefix, n);
  const t0 = performance.now();
  for (const ns of l.namespaces) await kube.namespace(ns);
  await pool(l.apps, 8, (a) =>
    kube.createApp(a.namespace, a.name, {
      source: { git: { url: repo.url, ref: "main", path: a.path } },
      interval: "1h",
    }),
  );
  return { ...l, setupMs: performance.now() - t0 };
}

async function observedCount(
  kube: Kube,
  namespaces: string[],
): Promise<{ observed: number; failed: number }> {
  let observed = 0;
  let failed = 0;
  for (const ns of namespaces) {
    const apps: App[] = await kube.listApps(ns);
    for (const a of apps) {
      if (a.status?.observedGeneration !== undefined) observed++;
      if (a.status?.failures) failed++;
    }
  }
  return { observed, failed };
}

/**
 * The Node path, as `plumb reconcile --all` runs it: planTick (the compact list) and one lookup
 * per source, then reconcileMany(…, concurrency 4), in this process.
 */
export async function cronNode(
  kube: Kube,
  git: BenchGit,
  repo: BenchRepo,
  n: number,
  timeoutMs: number,
): Promise<CronResult> {
  const errors: string[] = [];
  const { namespaces, setupMs } = await createApps(kube, repo, `bench-cron${n}`, n);
  // A tick is a fresh process (a CronJob running `plumb reconcile --all`): cold discovery.
  const discovery = new DiscoveryCache();
  const gitPort = createGitPort();
  const made: Ports[] = [];
  const ports = (): Ports => {
    const p: Ports = {
      kube: createKubePort(kube.raw, { discovery }),
      git: gitPort,
      holder: "plumb-bench-cron",
    };
    made.push(p);
    return p;
  };
  const gitBefore = await git.requests();
  const t0 = performance.now();
  const listing = ports();
  const plan = await planTick(listing, tickAt(new Date()));
  const hints = await resolveSources(listing, plan.due);
  const due = plan.due.map((d) => ({
    namespace: d.namespace,
    name: d.name,
    options: { compare: d.compare, source: hintFor(hints, d) },
  }));
  const enqueueMs = performance.now() - t0;
  const listed = plan.listed;
  const results: RunResult[] = [];
  const cpu0 = process.cpuUsage();
  const all = reconcileMany(
    due,
    ports,
    () => new Date(),
    (r) => results.push(r),
    4,
  );
  const done = await Promise.race([all.then(() => true), sleep(timeoutMs).then(() => false)]);
  const reconcileAllMs = performance.now() - t0 - enqueueMs;
  const cpu = process.cpuUsage(cpu0);
  if (!done) errors.push(`reconcile of ${due.length} Apps not finished after ${timeoutMs} ms`);
  const gitRequests = (await git.requests()) - gitBefore;
  const totalRequests = made.reduce((s, p) => {
    const c = p.kube.requestCounts();
    return s + c.get + c.list + c.create + c.update + c.patch + c.delete;
  }, 0);
  const failedRuns = results.filter((r) => r.outcome === "Failed");
  for (const f of failedRuns.slice(0, 3)) errors.push(`${f.app}: ${f.error}`);
  const o = await observedCount(kube, namespaces);
  return {
    runtime: "node (reconcileMany, concurrency 4)",
    apps: n,
    setupMs,
    due: due.length,
    listed,
    enqueueMs,
    reconcileAllMs,
    observed: o.observed,
    failed: failedRuns.length,
    requests: { total: totalRequests, perApp: due.length ? totalRequests / due.length : 0 },
    gitRequests,
    cpuMs: (cpu.user + cpu.system) / 1000,
    errors,
  };
}

/** The workerd path: GET /__scheduled on wrangler dev, then poll until every App is observed. */
export async function cronWorkerd(
  kube: Kube,
  repo: BenchRepo,
  n: number,
  base: string,
  output: () => string,
  proxyRequests: () => number,
  timeoutMs: number,
): Promise<CronResult> {
  const errors: string[] = [];
  const { namespaces, setupMs } = await createApps(kube, repo, `bench-wcron${n}`, n);
  const listed = (await kube.listApps()).length;
  const logFrom = output().length;
  const proxyBefore = proxyRequests();
  const t0 = performance.now();
  const res = await fetch(`${base}/__scheduled?cron=*+*+*+*+*`);
  await res.text();
  const enqueueMs = performance.now() - t0;
  if (res.status !== 200) errors.push(`/__scheduled: HTTP ${res.status}`);
  let o = { observed: 0, failed: 0 };
  while (performance.now() - t0 < timeoutMs) {
    o = await observedCount(kube, namespaces);
    if (o.observed >= n) break;
    await sleep(100);
  }
  const reconcileAllMs = performance.now() - t0 - enqueueMs;
  if (o.observed < n) errors.push(`${n - o.observed} Apps not observed after ${timeoutMs} ms`);
  // The poll's own list requests go straight to the API server, not through the proxy.
  const proxied = proxyRequests() - proxyBefore;
  const m = /"msg":"cron","due":(\d+)/.exec(output().slice(logFrom));
  return {
    runtime: "workerd (wrangler dev: scheduled → queue → consumer)",
    apps: n,
    setupMs,
    due: m ? Number(m[1]) : Number.NaN,
    listed,
    enqueueMs,
    reconcileAllMs,
    observed: o.observed,
    failed: o.failed,
    requests: { total: proxied, perApp: proxied / n },
    errors,
  };
}

// ---------------------------------------------------------------------------------------------
// Measurement 4b: a CronJob tick against `plumb serve --schedule`, per tick, as whole processes.
// The same Apps (TICK_APPS guestbooks, one per namespace, their interval the tick period so every
// tick reconciles each App with a full comparison, as 1-minute Apps under a 1-minute schedule)
// are reconciled in alternating phases: serve for some ticks, then a `reconcile --all` process
// per tick, round after round, so load on the machine falls on both alike.
// CPU is read from outside the measured process: /usr/bin/time (user + system from start to
// exit, Node's start-up included) for each tick process; /proc/PID/stat for serve, between the
// last result line of one tick and that of a tick K later (its steady cost per tick, idle time
// between ticks included; its one-off start-up amortises to nothing in a long-running process).

/** Apps of the tick-cost measurement, and the tick period (shorter than a minute, same shape). */
export const TICK_APPS = 3;
const TICK_NS = "bench-tick";
/** The target: a CronJob tick costs at most this many times serve --schedule's tick. */
export const TICK_RATIO_TARGET = 1.2;

export interface TickCostResult {
  cli: string;
  apps: number;
  periodMs: number;
  rounds: number;
  ticksPerRound: number;
  /** CPU of each `reconcile --all` process, start to exit, ms. */
  cronTickCpuMs: number[];
  /** serve's CPU per tick over each round's measured ticks, ms. */
  serveTickCpuMs: number[];
  /** `node -e 0`, one per round: Node's own start-up and exit. */
  nodeBaselineCpuMs: number[];
  /** Git requests per tick: each cron tick, and serve's per round (total ÷ ticks). */
  cronGitRequests: number[];
  serveGitRequests: number[];
  /** Outcomes of the result lines (cron and serve apart). */
  cronOutcomes: Record<string, number>;
  serveOutcomes: Record<string, number>;
  errors: string[];
}

/** Median CPU per tick of each side, and their ratio (cron ÷ serve). */
export function tickCostSummary(r: TickCostResult): {
  cronMs: number;
  serveMs: number;
  baselineMs: number;
  ratio: number;
} {
  const cronMs = percentile(r.cronTickCpuMs, 50);
  const serveMs = percentile(r.serveTickCpuMs, 50);
  return {
    cronMs,
    serveMs,
    baselineMs: percentile(r.nodeBaselineCpuMs, 50),
    ratio: cronMs / serveMs,
  };
}

/** The target row: a CronJob tick ≤ 1.2× serve --schedule's tick, CPU per App. */
export function tickCostTargets(r: TickCostResult | undefined): Target[] {
  const target = `CronJob tick (reconcile --all process) ≤ ${TICK_RATIO_TARGET}× serve --schedule CPU per App (${TICK_APPS} guestbooks, every App due)`;
  if (!r || r.cronTickCpuMs.length === 0 || r.serveTickCpuMs.length === 0)
    return [{ target, measured: "not measured", pass: undefined }];
  const s = tickCostSummary(r);
  const perApp = (x: number) => `${(x / r.apps).toFixed(0)} ms/App`;
  return [
    {
      target,
      measured: `tick ${ms(s.cronMs)} (${perApp(s.cronMs)}), serve ${ms(s.serveMs)} (${perApp(s.serveMs)}): ratio ${s.ratio.toFixed(2)}× (node -e 0 ${ms(s.baselineMs)}; n=${r.cronTickCpuMs.length}/${r.serveTickCpuMs.length})`,
      pass: r.errors.length === 0 && s.ratio <= TICK_RATIO_TARGET,
    },
  ];
}

/** The report lines of the tick-cost measurement. */
export function tickCostReport(r: TickCostResult | undefined): string[] {
  if (!r) return ["not measured"];
  const s = tickCostSummary(r);
  const perMinute = (x: number) => `${((x * 60_000) / r.periodMs / 1000).toFixed(2)} s CPU/min`;
  const range = (xs: number[]) =>
    xs.length ? `${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)} ms` : "n/a";
  const outcomes = (o: Record<string, number>) =>
    Object.entries(o)
      .map(([k, n]) => `${k} ${n}`)
      .join(", ");
  return [
    `${r.apps} Apps, tick every ${r.periodMs / 1000} s (their interval), ${r.rounds} rounds × ${r.ticksPerRound} ticks each side, interleaved`,
    table(
      ["", "CPU per tick p50", "min–max", "at a 1-minute tick", "Git requests/tick", "outcomes"],
      [
        [
          "reconcile --all (a process per tick)",
          ms(s.cronMs),
          range(r.cronTickCpuMs),
          perMinute(s.cronMs),
          percentile(r.cronGitRequests, 50),
          outcomes(r.cronOutcomes),
        ],
        [
          "serve --schedule (steady)",
          ms(s.serveMs),
          range(r.serveTickCpuMs),
          perMinute(s.serveMs),
          percentile(r.serveGitRequests, 50).toFixed(1),
          outcomes(r.serveOutcomes),
        ],
        ["node -e 0", ms(s.baselineMs), range(r.nodeBaselineCpuMs), "", "", ""],
      ],
    ),
    `  ratio tick ÷ serve: ${s.ratio.toFixed(2)}× (target ≤ ${TICK_RATIO_TARGET}×)`,
    ...r.errors.slice(0, 5).map((e) => `  error: ${e.slice(0, 300)}`),
  ];
}

/** user + system CPU of a live process from /proc/PID/stat, ms. */
function procCpuMs(pid: number, clockTicks: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // Fields 14 and 15 of proc(5) (utime, stime), counted from 3 after the command name.
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicks;
}

function clockTicksPerSecond(): number {
  try {
    return Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
  } catch {
    return 100;
  }
}

function countOutcomes(lines: string[], into: Record<string, number>): number {
  let n = 0;
  for (const line of lines) {
    if (!line.startsWith("{")) continue;
    try {
      const l = JSON.parse(line) as { outcome?: string };
      if (!l.outcome) continue;
      into[l.outcome] = (into[l.outcome] ?? 0) + 1;
      n++;
    } catch {
      // not a result line
    }
  }
  return n;
}

/** Waits until the next tick of the grid (`periodMs`), plus `afterMs`. */
async function untilNextTick(periodMs: number, afterMs: number): Promise<void> {
  const now = Date.now();
  await sleep(Math.ceil(now / periodMs) * periodMs + afterMs - now);
}

/**
 * Measures a CronJob tick against serve --schedule (see above): TICK_APPS guestbooks in their
 * own namespaces, settled first; then `rounds` rounds of serve for 1 + `ticks` ticks (the first
 * unmeasured) and `ticks` tick processes, the order alternating per round. The cluster should
 * hold no other Apps (serve lists them all).
 */
export async function tickCost(
  cli: string,
  kube: Kube,
  git: BenchGit,
  kubeconfig: string,
  log: (s: string) => void,
  opts: { periodMs?: number; rounds?: number; ticks?: number; env?: Record<string, string> } = {},
): Promise<TickCostResult> {
  const periodMs = opts.periodMs ?? 10_000;
  const rounds = opts.rounds ?? 3;
  const ticks = opts.ticks ?? 4;
  const env = opts.env ?? {};
  const every = `${periodMs / 1000}s`;
  const k = ["--kubeconfig", kubeconfig];
  const r: TickCostResult = {
    cli,
    apps: TICK_APPS,
    periodMs,
    rounds,
    ticksPerRound: ticks,
    cronTickCpuMs: [],
    serveTickCpuMs: [],
    nodeBaselineCpuMs: [],
    cronGitRequests: [],
    serveGitRequests: [],
    cronOutcomes: {},
    serveOutcomes: {},
    errors: [],
  };
  const repo = await git.createRepo("tick-guestbook", guestbook.files());
  for (let i = 0; i < TICK_APPS; i++) {
    await kube.namespace(`${TICK_NS}-${i}`);
    await kube.createApp(`${TICK_NS}-${i}`, "guestbook", {
      source: { git: { url: repo.url, ref: "main" } },
      interval: every,
    });
  }
  const tickArgs = ["reconcile", "--all", "--every", every, ...k];
  // Settle: until a tick writes nothing (Deployments rolled out, health and status unchanged).
  for (let i = 0, quiet = 0; i < 30 && quiet < 2; i++) {
    const s = await timeProcess(cli, tickArgs, env);
    quiet = s.exit === 0 && s.writes === 0 ? quiet + 1 : 0;
    if (quiet < 2) await sleep(500);
  }
  const clk = clockTicksPerSecond();

  const cronPhase = async () => {
    for (let t = 0; t < ticks; t++) {
      await untilNextTick(periodMs, 200);
      const g0 = await git.requests();
      const s = await timeProcess(cli, tickArgs, env);
      r.cronGitRequests.push((await git.requests()) - g0);
      r.cronTickCpuMs.push(s.cpuMs);
      for (const [o, n] of Object.entries(s.outcomes))
        r.cronOutcomes[o] = (r.cronOutcomes[o] ?? 0) + n;
      if (s.exit !== 0) r.errors.push(`reconcile --all exited ${s.exit}`);
    }
  };

  const servePhase = async () => {
    const port = await freePort();
    const child = spawn(
      process.execPath,
      [cli, "serve", "--port", String(port), "--schedule", "--tick", every, ...k],
      { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      stderr = (stderr + d.toString()).slice(-20_000);
    });
    const results = () => countOutcomes(stdout.split("\n"), {});
    const atResults = (n: number) =>
      waitFor(`serve: ${n} result lines`, async () => child.exitCode !== null || results() >= n, {
        everyMs: 20,
      }).then(() => {
        if (child.exitCode !== null) throw new Error(`serve exited ${child.exitCode}`);
      });
    try {
      // The first tick (at start-up) is not measured: a long-running serve has paid it long ago.
      await atResults(TICK_APPS);
      const c0 = procCpuMs(child.pid!, clk);
      const g0 = await git.requests();
      const from = stdout.length;
      await atResults(TICK_APPS * (1 + ticks));
      const c1 = procCpuMs(child.pid!, clk);
      r.serveGitRequests.push(((await git.requests()) - g0) / ticks);
      r.serveTickCpuMs.push((c1 - c0) / ticks);
      countOutcomes(stdout.slice(from).split("\n"), r.serveOutcomes);
    } catch (err) {
      r.errors.push(`${String(err)}\n${stderr.slice(-1500)}`);
    } finally {
      await stopChild(child);
    }
  };

  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? [servePhase, cronPhase] : [cronPhase, servePhase];
    for (const p of order) await p();
    r.nodeBaselineCpuMs.push((await timeProcess("-e", ["0"])).cpuMs);
    const s = tickCostSummary(r);
    log(
      `  round ${round + 1}/${rounds}: tick ${ms(s.cronMs)}, serve ${ms(s.serveMs)}, ratio ${s.ratio.toFixed(2)}×`,
    );
  }
  return r;
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  // Standalone: `node bench/cron.ts` (uses $KUBECONFIG, else starts a control plane).
  // PLUMB_BENCH_TICK_ROUNDS, PLUMB_BENCH_TICK_TICKS, PLUMB_BENCH_TICK_SECONDS change its size.
  const { ROOT, startCluster } = await import("./kube.ts");
  const { startBenchGit } = await import("./git.ts");
  const { benchCli } = await import("./process.ts");
  const { Kube } = await import("./kube.ts");
  const log = (s: string) => process.stderr.write(`${s}\n`);
  const cluster = startCluster(log);
  const git = await startBenchGit();
  const num = (name: string) =>
    process.env[name] ? Number(process.env[name]) : (undefined as number | undefined);
  try {
    const kube = new Kube(cluster.kubeconfig);
    await kube.installCrd();
    await kube.deleteApps();
    const seconds = num("PLUMB_BENCH_TICK_SECONDS");
    const r = await tickCost(benchCli(ROOT), kube, git, cluster.kubeconfig, log, {
      ...(seconds ? { periodMs: seconds * 1000 } : {}),
      ...(num("PLUMB_BENCH_TICK_ROUNDS") ? { rounds: num("PLUMB_BENCH_TICK_ROUNDS")! } : {}),
      ...(num("PLUMB_BENCH_TICK_TICKS") ? { ticks: num("PLUMB_BENCH_TICK_TICKS")! } : {}),
    });
    console.log(
      [
        ...tickCostReport(r),
        "",
        ...tickCostTargets(r).map(
          (t) =>
            `${t.pass === undefined ? "-" : t.pass ? "PASS" : "MISS"} ${t.target}: ${t.measured}`,
        ),
      ].join("\n"),
    );
    if (!cluster.owned)
      await kube.cleanup(Array.from({ length: TICK_APPS }, (_, i) => `${TICK_NS}-${i}`));
  } finally {
    await git.stop();
    if (cluster.owned) cluster.stop();
  }
}
