// The scale targets 2, 4 and 5 (target 3 is read off the requests measurement): no write on a
// steady run (podinfo-webapp, whose HPA message changes order between reads, compared 7 times),
// one fetch per repository (the first `reconcile --all` of 1,000 Apps on one repository, as a
// whole process) and a steady interval over those 1,000 Apps (ticks of `reconcile --all
// --every 10s` for one 1-minute interval). The tick over 10,000 Apps is in scale-tick.ts.
import { join } from "node:path";
import { DiscoveryCache } from "../src/kube/index.ts";
import { cronFiles, podinfo } from "./fixtures.ts";
import type { BenchGit, GitRequestKinds } from "./git.ts";
import { type Kube, pool, sleep } from "./kube.ts";
import { measuredRun, type Runner, settle } from "./reconcile-bench.ts";
import { type ProcessFigure, scaleCli, timedCli } from "./scale-process.ts";
import type { ScaleResults } from "./scale-report.ts";
import { createTenK, TEN_K, tickNode, tickWorkerd } from "./scale-tick.ts";

export const MANY = 1000;
const MANY_NS = "bench-many";
/** The steady interval: Apps every minute, ticks every 10 s. */
const STEADY_INTERVAL = "1m";
const TICK_S = 10;

/** Target 2: full comparisons of a settled podinfo-webapp, and how many of them wrote. */
export interface SteadyRuns {
  app: string;
  runs: number;
  runsWithWrites: number;
  /** What each run wrote (verbs), for the report. */
  writes: number[];
  /** For each run that wrote: the status fields it changed (path: before → after). */
  changed: string[][];
  settled: boolean;
}

/** Git requests of a phase, by kind. */
export type GitDelta = GitRequestKinds;

/** Target 4: the first `reconcile --all` of MANY Apps on one repository. */
export interface FirstSyncMany {
  apps: number;
  cli: string;
  process: ProcessFigure;
  git: GitDelta;
  /** A forced tick right after (every App compared): the steady cost the old schedule paid. */
  forced?: { process: ProcessFigure; git: GitDelta } | undefined;
}

/** Target 5: one interval of ticks over MANY steady Apps. */
export interface SteadyInterval {
  apps: number;
  intervalS: number;
  tickS: number;
  ticks: Array<{ process: ProcessFigure; git: GitDelta }>;
  /** Apps reconciled over the interval (each should be once) and status writes. */
  reconciled: number;
  writes: number;
  totals: { wallMs: number; cpuMs: number; reads: number; git: GitDelta };
}

const minus = (a: GitRequestKinds, b: GitRequestKinds): GitDelta => ({
  fetch: a.fetch - b.fetch,
  lsRefs: a.lsRefs - b.lsRefs,
  other: a.other - b.other,
});

/**
 * Target 2: podinfo-webapp settled (the fast path quiet, the Deployments available, every HPA
 * reporting, then 31 s for two more HPA syncs and one full comparison to record that state),
 * then `runs` full comparisons 16 s apart (the HPA controller syncs every 15 s, and its
 * AmbiguousSelector message lists the HPAs in map order). Each run
 * is a scheduled run whose slot came (compare, and a clock an interval later, so a checkout
 * that schedules by status.nextReconcileAt compares too).
 */
export async function steadyRuns(r: Runner, runs = 7): Promise<SteadyRuns> {
  const ns = "bench-steady";
  const repo = await r.git.createRepo("steady-podinfo", podinfo.files(ns));
  await r.kube.namespace(ns);
  await r.kube.createApp(ns, "podinfo", {
    source: { git: { url: repo.url, ref: "main" } },
    interval: "1m",
  });
  const ref = { namespace: ns, name: "podinfo" };
  const discovery = new DiscoveryCache();
  const s = await settle(r, ref, discovery, 120_000);
  // Settled for the fast path is not settled for the HPA controller: wait until the
  // Deployments are available and every HPA has reported, then two more of its 15 s syncs (its
  // conditions move from "waiting" to what it will keep saying), and record that state once.
  const hpasSettled = await waitUntil(120_000, async () => {
    const deploys = (await r.kube.api("GET", `/apis/apps/v1/namespaces/${ns}/deployments`)) as {
      items: Array<{ status?: { availableReplicas?: number } }>;
    };
    const hpas = (await r.kube.api(
      "GET",
      `/apis/autoscaling/v2/namespaces/${ns}/horizontalpodautoscalers`,
    )) as { items: Array<{ status?: { conditions?: Array<{ type: string }> } }> };
    return (
      deploys.items.every((d) => (d.status?.availableReplicas ?? 0) > 0) &&
      hpas.items.every((h) => h.status?.conditions?.some((c) => c.type === "ScalingActive"))
    );
  });
  await sleep(31_000);
  await measuredRun(r, ref, discovery, new Date(Date.now() + 3_600_000), true);
  const writes: number[] = [];
  const changed: string[][] = [];
  let at = Date.now() + 3_600_000;
  for (let i = 0; i < runs; i++) {
    at += 61_000;
    const before = (await r.kube.getApp(ns, "podinfo")).status ?? {};
    const sample = await measuredRun(r, ref, discovery, new Date(at), true);
    const q = sample.requests;
    const w = q.create + q.update + q.patch + q.delete;
    writes.push(w);
    if (w > 0) {
      const after = (await r.kube.getApp(ns, "podinfo")).status ?? {};
      changed.push(statusDiff(before, after));
    }
    if (i < runs - 1) await sleep(16_000);
  }
  return {
    app: `${ns}/podinfo`,
    runs,
    runsWithWrites: writes.filter((w) => w > 0).length,
    writes,
    changed,
    settled: s.settled && hpasSettled,
  };
}

/** Polls `done` every second until it is true (true) or `timeoutMs` passed (false). */
async function waitUntil(timeoutMs: number, done: () => Promise<boolean>): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await done().catch(() => false)) return true;
    await sleep(1000);
  }
  return false;
}

/** The leaves that differ between two statuses, as "path: before → after" (times left out). */
function statusDiff(a: unknown, b: unknown, path = "status"): string[] {
  if (JSON.stringify(a) === JSON.stringify(b)) return [];
  const isObj = (x: unknown): x is Record<string, unknown> => typeof x === "object" && x !== null;
  if (isObj(a) && isObj(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])];
    return keys.flatMap((k) => (/Time$|At$/.test(k) ? [] : statusDiff(a[k], b[k], `${path}.${k}`)));
  }
  const show = (x: unknown) => JSON.stringify(x)?.slice(0, 160) ?? "absent";
  return [`${path}: ${show(a)} → ${show(b)}`];
}

/** Creates MANY Apps in `ns`, App i on path c/i of one repository, interval 1m. */
async function createMany(kube: Kube, git: BenchGit, ns: string): Promise<void> {
  const repo = await git.createRepo(ns, cronFiles(MANY));
  await kube.namespace(ns);
  await pool(
    Array.from({ length: MANY }, (_, i) => i),
    16,
    (i) =>
      kube.createApp(ns, `a-${i}`, {
        source: { git: { url: repo.url, ref: "main", path: `c/${i}` } },
        interval: STEADY_INTERVAL,
      }),
  );
}

/**
 * Target 4: the first `plumb reconcile --all` over MANY new Apps on one repository (one
 * directory and ConfigMap each), as a whole process; then (`forced`) `--all --force`, every App
 * compared in one tick, as the old schedule made each App's due run.
 */
export async function firstSyncMany(
  cli: string,
  kube: Kube,
  git: BenchGit,
  kubeconfig: string,
  log: (s: string) => void,
  ns = MANY_NS,
): Promise<FirstSyncMany> {
  await createMany(kube, git, ns);
  log(`  ${MANY} Apps created; first reconcile --all (${cli})`);
  const k = ["--kubeconfig", kubeconfig];
  const all = ["reconcile", "--all", "--namespace", ns, ...k];
  const g0 = await git.requestKinds();
  const first = await timedCli(cli, all);
  const g1 = await git.requestKinds();
  log(
    `  first sync: ${(first.cpuMs / 1000).toFixed(1)} s CPU, ${(first.wallMs / 1000).toFixed(1)} s wall, ${first.peakMiB.toFixed(0)} MiB, ${g1.fetch - g0.fetch} fetches`,
  );
  const forced = await timedCli(cli, [...all, "--force"]);
  const g2 = await git.requestKinds();
  return {
    apps: MANY,
    cli,
    process: first,
    git: minus(g1, g0),
    forced: { process: forced, git: minus(g2, g1) },
  };
}

/**
 * Target 5: one interval (1 minute) of ticks every 10 s over the MANY Apps, each tick a
 * `reconcile --all --every 10s` process started on the 10 s grid. Every App is compared once.
 */
export async function steadyInterval(
  cli: string,
  git: BenchGit,
  kubeconfig: string,
  log: (s: string) => void,
): Promise<SteadyInterval> {
  const args = [
    "reconcile",
    "--all",
    "--namespace",
    MANY_NS,
    "--every",
    `${TICK_S}s`,
    "--kubeconfig",
    kubeconfig,
  ];
  const ticks: SteadyInterval["ticks"] = [];
  const n = 60 / TICK_S;
  for (let i = 0; i < n; i++) {
    const next = Math.ceil((Date.now() + 500) / (TICK_S * 1000)) * TICK_S * 1000;
    await sleep(next - Date.now() + 200);
    const g0 = await git.requestKinds();
    const process = await timedCli(cli, args);
    const g1 = await git.requestKinds();
    ticks.push({ process, git: minus(g1, g0) });
    log(
      `  tick ${i + 1}/${n}: ${process.outcomes["Reconciled"] ?? 0} reconciled, ${(process.cpuMs / 1000).toFixed(2)} s CPU, ${(process.wallMs / 1000).toFixed(2)} s wall`,
    );
  }
  const sum = (f: (t: (typeof ticks)[number]) => number) => ticks.reduce((s, t) => s + f(t), 0);
  return {
    apps: MANY,
    intervalS: 60,
    tickS: TICK_S,
    ticks,
    reconciled: sum((t) => t.process.outcomes["Reconciled"] ?? 0),
    writes: sum((t) => t.process.writes),
    totals: {
      wallMs: sum((t) => t.process.wallMs),
      cpuMs: sum((t) => t.process.cpuMs),
      reads: sum((t) => t.process.reads),
      git: {
        fetch: sum((t) => t.git.fetch),
        lsRefs: sum((t) => t.git.lsRefs),
        other: sum((t) => t.git.other),
      },
    },
  };
}

type Phase = <T>(name: string, timeoutMs: number, fn: () => Promise<T>) => Promise<T | undefined>;

/**
 * Every scale measurement, each under the benchmark's `phase` (deadline, errors recorded).
 * With PLUMB_SCALE_BEFORE (the root of an older checkout, with its node_modules), the first
 * sync, the forced tick and the Worker tick are measured for that checkout too.
 */
export async function scalePhases(
  phase: Phase,
  env: {
    root: string;
    kube: Kube;
    git: BenchGit;
    runner: Runner;
    kubeconfig: string;
    log: (s: string) => void;
  },
): Promise<ScaleResults> {
  const { root, kube, git, kubeconfig, log } = env;
  const cli = scaleCli(root);
  const before = process.env["PLUMB_SCALE_BEFORE"];
  const out: ScaleResults = {};
  out.steady = await phase("14.2 steady podinfo-webapp: 7 full comparisons", 420_000, () =>
    steadyRuns(env.runner),
  );
  out.many = await phase(
    `14.4 first reconcile --all of ${MANY} Apps (whole process)`,
    900_000,
    () => firstSyncMany(cli, kube, git, kubeconfig, log),
  );
  out.emptyProcessCpuMs = (
    await phase("an empty reconcile --all process", 60_000, () =>
      timedCli(cli, [
        "reconcile",
        "--all",
        "--namespace",
        "bench-empty",
        "--kubeconfig",
        kubeconfig,
      ]),
    )
  )?.cpuMs;
  out.interval = await phase(`14.5 steady interval over ${MANY} Apps (6 ticks)`, 300_000, () =>
    steadyInterval(cli, git, kubeconfig, log),
  );
  if (before) {
    out.manyBefore = await phase(
      `14.4 before: first reconcile --all of ${MANY} Apps`,
      1_500_000,
      () =>
        firstSyncMany(
          join(before, "functions/cli.ts"),
          kube,
          git,
          kubeconfig,
          log,
          `${MANY_NS}-before`,
        ),
    );
  }
  const setupMs = await phase(`14.5 ${TEN_K} Apps created (with statuses)`, 900_000, () =>
    createTenK(kube, git),
  );
  if (setupMs !== undefined) {
    const errors: string[] = [];
    const node = await phase("14.5 tick over 10,000 Apps: Node", 120_000, () =>
      tickNode(kube, git),
    );
    const workerd = await phase("14.5 tick over 10,000 Apps: workerd", 300_000, () =>
      tickWorkerd(root, kubeconfig, git),
    );
    out.tick = { apps: TEN_K, setupMs, node, workerd, errors };
    if (before) {
      const old = await phase("14.5 before: tick over 10,000 Apps: workerd", 300_000, () =>
        tickWorkerd(before, kubeconfig, git),
      );
      out.tickBefore = { apps: TEN_K, setupMs, workerd: old, errors: [] };
    }
  }
  return out;
}
