// Measurements 1 and 2: API requests by verb per run, wall time per reconcile and CPU time
// per no-op run, for guestbook, podinfo-webapp and the generated 50-object App.
import { createKubePort, DiscoveryCache, type KubeTransport } from "../src/kube/index.ts";
import {
  type GitPort,
  type Ports,
  type RequestCounts,
  reconcileApp,
} from "../src/reconcile/index.ts";
import { createGitPort } from "../src/source/git.ts";
import type { Case } from "./fixtures.ts";
import type { BenchGit } from "./git.ts";
import { isApply, isDiscovery, isDryRun, type Kube, recordingTransport, sleep } from "./kube.ts";
import { type Summary, summarize } from "./stats.ts";

export interface RunSample {
  wallMs: number;
  cpuMs: number;
  requests: RequestCounts;
  /** Of the requests: server-side applies, discovery reads, server-side-apply dry runs. */
  applies: number;
  discovery: number;
  dryRuns: number;
  /** Requests made, as "METHOD path" (server-side applies as APPLY, label-selector lists as LIST). */
  calls: string[];
  gitRequests: number;
  outcome: string;
  syncStatus?: string | undefined;
  healthStatus?: string | undefined;
  error?: string | undefined;
}

export const reads = (r: RequestCounts) => r.get + r.list;
export const writes = (r: RequestCounts) => r.create + r.update + r.patch + r.delete;
export const total = (r: RequestCounts) => reads(r) + writes(r);

export interface Runner {
  kube: Kube;
  git: BenchGit;
  gitPort: GitPort;
  transport: KubeTransport;
}

export function runner(kube: Kube, git: BenchGit): Runner {
  return { kube, git, gitPort: createGitPort(), transport: kube.raw };
}

/**
 * One reconcile of namespace/name, measured (wall, CPU of this process, requests, Git requests).
 * @param at the run's clock
 * @param compare a full comparison, as a scheduled run whose slot came
 */
export async function measuredRun(
  r: Runner,
  ref: { namespace: string; name: string },
  discovery: DiscoveryCache,
  at: Date = new Date(),
  compare = false,
): Promise<RunSample> {
  const rec = recordingTransport(r.transport);
  const ports: Ports = {
    kube: createKubePort(rec.transport, { discovery }),
    git: r.gitPort,
    holder: "plumb-bench",
  };
  const gitBefore = await r.git.requests();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const result = await reconcileApp(ref, ports, at, { compare });
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const gitAfter = await r.git.requests();
  return {
    wallMs,
    cpuMs: (cpu.user + cpu.system) / 1000,
    requests: result.requests,
    applies: rec.log.filter(isApply).length,
    discovery: rec.log.filter(isDiscovery).length,
    dryRuns: rec.log.filter(isDryRun).length,
    calls: rec.log.map(
      (c) =>
        `${isApply(c) ? "APPLY" : isDryRun(c) ? "DRYRUN" : c.list ? "LIST" : c.method} ${c.path}`,
    ),
    gitRequests: gitAfter - gitBefore,
    outcome: result.outcome,
    syncStatus: result.syncStatus,
    healthStatus: result.healthStatus,
    error: result.error,
  };
}

/**
 * Reconciles (every 300 ms) until 3 runs in a row write nothing and see no object Progressing
 * (health settled: Deployments rolled out; a run that finds nothing new writes nothing even
 * while a rollout goes on, and a Progressing workload's stuck Pods are looked up), at
 * most `timeoutMs`. Returns how many runs that took, and whether it settled.
 */
export async function settle(
  r: Runner,
  ref: { namespace: string; name: string },
  discovery: DiscoveryCache,
  timeoutMs = 45_000,
): Promise<{ runs: number; settled: boolean }> {
  const deadline = Date.now() + timeoutMs;
  let runs = 0;
  let quiet = 0;
  while (Date.now() < deadline) {
    const s = await measuredRun(r, ref, discovery);
    runs++;
    const still = writes(s.requests) === 0 && s.healthStatus !== "Progressing";
    quiet = still && s.outcome === "Reconciled" ? quiet + 1 : 0;
    if (quiet >= 3) return { runs, settled: true };
    await sleep(300);
  }
  return { runs, settled: false };
}

const failures = (xs: RunSample[]) =>
  xs.filter((x) => x.outcome !== "Reconciled").map((x) => x.error ?? x.outcome);

// ---------------------------------------------------------------------------------------------
// 1. Requests by verb

export interface RequestsCase {
  app: string;
  namespace: string;
  objects: number;
  kinds: number;
  firstSync: RunSample;
  newCommit: RunSample;
  settleRuns: number;
  settled: boolean;
  noop: RunSample;
}

export async function requestsCase(
  r: Runner,
  c: Case,
  log: (s: string) => void,
): Promise<{ result: RequestsCase; discovery: DiscoveryCache }> {
  const ns = c.fixedNamespace ?? `bench-req-${c.name}`;
  const name = c.name;
  const repo = await r.git.createRepo(`req-${c.name}`, c.files());
  await r.kube.namespace(ns);
  await r.kube.createApp(ns, name, {
    source: { git: { url: repo.url, ref: "main" } },
    interval: "1h",
  });
  const ref = { namespace: ns, name };
  // Cold discovery cache: a fresh process (CLI run) or a fresh Worker isolate.
  const discovery = new DiscoveryCache();
  const firstSync = await measuredRun(r, ref, discovery);
  await r.git.commit(repo.name, c.bump("bench-req-1"));
  const newCommit = await measuredRun(r, ref, discovery);
  const s = await settle(r, ref, discovery);
  const noop = await measuredRun(r, ref, discovery);
  const app = await r.kube.getApp(ns, name);
  const inventory = app.status?.inventory ?? [];
  const kinds = new Set(inventory.map((i) => `${i.apiVersion}/${i.kind}`)).size;
  for (const x of [firstSync, newCommit, noop])
    if (x.outcome !== "Reconciled") log(`  ${c.name}: ${x.outcome} ${x.error ?? ""}`);
  return {
    result: {
      app: `${ns}/${name}`,
      namespace: ns,
      objects: inventory.length,
      kinds,
      firstSync,
      newCommit,
      settleRuns: s.runs,
      settled: s.settled,
      noop,
    },
    discovery,
  };
}

// ---------------------------------------------------------------------------------------------
// 2. Wall time and CPU

export interface PhaseTiming {
  wallMs: Summary;
  cpuMs: Summary;
  /** The first run's requests (verbs, applies, discovery, calls), and the range of totals. */
  first:
    | Pick<RunSample, "requests" | "applies" | "discovery" | "calls" | "gitRequests">
    | undefined;
  requestsTotalRange: [number, number];
  gitRequests: Summary;
  failures: string[];
  /** Runs that wrote to the API server (for no-op runs: a health transition was recorded). */
  runsWithWrites: number;
  samples: Array<
    Pick<RunSample, "wallMs" | "cpuMs" | "gitRequests" | "outcome"> & {
      requests: number;
      writes: number;
    }
  >;
}

export interface TimingCase {
  app: string;
  runs: number;
  firstSync: PhaseTiming;
  newCommit: PhaseTiming;
  noop: PhaseTiming & { settleRuns: number; settled: boolean };
}

function phase(xs: RunSample[]): PhaseTiming {
  const totals = xs.map((x) => total(x.requests));
  return {
    wallMs: summarize(xs.map((x) => x.wallMs)),
    cpuMs: summarize(xs.map((x) => x.cpuMs)),
    first: xs[0] && {
      requests: xs[0].requests,
      applies: xs[0].applies,
      discovery: xs[0].discovery,
      calls: xs[0].calls,
      gitRequests: xs[0].gitRequests,
    },
    requestsTotalRange: [Math.min(...totals), Math.max(...totals)],
    gitRequests: summarize(xs.map((x) => x.gitRequests)),
    failures: failures(xs),
    runsWithWrites: xs.filter((x) => writes(x.requests) > 0).length,
    samples: xs.map((x) => ({
      writes: writes(x.requests),
      wallMs: Math.round(x.wallMs * 100) / 100,
      cpuMs: Math.round(x.cpuMs * 100) / 100,
      gitRequests: x.gitRequests,
      outcome: x.outcome,
      requests: total(x.requests),
    })),
  };
}

/**
 * `runs` first syncs (fresh Apps in fresh namespaces), then `runs` successive new commits on
 * the first of them, then `runs` no-op runs. `discovery` is a warm cache (a long-lived process).
 */
export async function timingCase(
  r: Runner,
  c: Case,
  runs: number,
  discovery: DiscoveryCache,
  log: (s: string) => void,
): Promise<TimingCase> {
  const short = c.name === "podinfo-webapp" ? "pod" : c.name === "guestbook" ? "gb" : "gen";
  const refs: Array<{ namespace: string; name: string; repo: string }> = [];
  const shared = c.fixedNamespace ? undefined : await r.git.createRepo(`t-${c.name}`, c.files());
  for (let i = 0; i < runs; i++) {
    const ns = `bench-t-${short}-${i}`;
    // podinfo's manifests name their namespace: a copy per namespace, rewritten.
    const repo = shared ?? (await r.git.createRepo(`t-${c.name}-${i}`, c.files(ns)));
    await r.kube.namespace(ns);
    await r.kube.createApp(ns, c.name, {
      source: { git: { url: repo.url, ref: "main" } },
      interval: "1h",
    });
    refs.push({ namespace: ns, name: c.name, repo: repo.name });
  }
  const first: RunSample[] = [];
  for (const ref of refs) first.push(await measuredRun(r, ref, discovery));
  log(`  ${c.name}: first sync done`);

  const target = refs[0]!;
  const override = c.fixedNamespace ? target.namespace : undefined;
  const commits: RunSample[] = [];
  for (let j = 0; j < runs; j++) {
    await r.git.commit(target.repo, c.bump(`bench-${j + 2}`, override));
    commits.push(await measuredRun(r, target, discovery));
  }
  log(`  ${c.name}: new commits done`);

  const s = await settle(r, target, discovery);
  const noops: RunSample[] = [];
  for (let j = 0; j < runs; j++) noops.push(await measuredRun(r, target, discovery));
  log(`  ${c.name}: no-op runs done`);
  return {
    app: c.name,
    runs,
    firstSync: phase(first),
    newCommit: phase(commits),
    noop: { ...phase(noops), settleRuns: s.runs, settled: s.settled },
  };
}

// ---------------------------------------------------------------------------------------------
// Where a no-op run's CPU goes: the pieces of it, each measured alone.

export interface CpuBreakdown {
  /** One API request through plumb's Node transport (GET /version). */
  apiRequestCpuMs: Summary;
  apiRequestWallMs: Summary;
  /** GitPort.resolve (ls-refs: 2 HTTP requests to the Git server). */
  lsRefsCpuMs: Summary;
  lsRefsWallMs: Summary;
}

export async function cpuBreakdown(r: Runner, repoUrl: string, n = 20): Promise<CpuBreakdown> {
  const measure = async (fn: () => Promise<unknown>) => {
    const cpu: number[] = [];
    const wall: number[] = [];
    for (let i = 0; i < n; i++) {
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      await fn();
      wall.push(performance.now() - t0);
      const c = process.cpuUsage(c0);
      cpu.push((c.user + c.system) / 1000);
    }
    return { cpu: summarize(cpu), wall: summarize(wall) };
  };
  const api = await measure(() => r.transport("GET", "/version"));
  const git = await measure(() =>
    r.gitPort.resolve(
      { url: repoUrl, ref: "main", path: "." } as Parameters<GitPort["resolve"]>[0],
      undefined,
    ),
  );
  return {
    apiRequestCpuMs: api.cpu,
    apiRequestWallMs: api.wall,
    lsRefsCpuMs: git.cpu,
    lsRefsWallMs: git.wall,
  };
}
