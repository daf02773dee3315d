// Measurement 4: one cron tick over N small Apps (one ConfigMap each, one repository,
// spread over 5 namespaces): enqueue (list Apps + pick due) and reconcile them all.
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
import type { BenchGit, BenchRepo } from "./git.ts";
import { type Kube, pool, sleep } from "./kube.ts";

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
