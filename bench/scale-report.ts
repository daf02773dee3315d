// The scale targets 2–5 and the cost model of 10,000 Apps per 5 minutes, from what
// bench/scale.ts and bench/scale-tick.ts measured (pure: no I/O).
import type { RunSample } from "./reconcile-bench.ts";
import type { FirstSyncMany, SteadyInterval, SteadyRuns } from "./scale.ts";
import type { TickResult } from "./scale-tick.ts";
import { ms, round, table } from "./stats.ts";

export interface ScaleResults {
  steady?: SteadyRuns | undefined;
  many?: FirstSyncMany | undefined;
  /** The same first sync and forced tick by an older checkout (PLUMB_SCALE_BEFORE). */
  manyBefore?: FirstSyncMany | undefined;
  interval?: SteadyInterval | undefined;
  /** An empty `reconcile --all` process: what every tick pays before any App. */
  emptyProcessCpuMs?: number | undefined;
  tick?: TickResult | undefined;
  tickBefore?: TickResult | undefined;
}

/** The issue's figures from before ("Why"), for the closing note's comparison. */
export const ISSUE_BEFORE = {
  firstSync1000: "288 s wall, 277 s CPU, 440 MiB, 1,000 fetches",
  forcedTick1000: "14 s, 5.6 s CPU, 2,004 API reads, 0 writes, 1,000 Git lookups",
  hpaNoop: "status written on 2–4 of 7 no-op runs",
  oneOf50: "50 applies (every object re-applied)",
};

const WORKER_MEMORY_MIB = 128;
/** A Worker's CPU limit per invocation on the paid plan, by default (configurable to 5 min). */
const WORKER_CPU_MS = 30_000;

export interface Target {
  target: string;
  measured: string;
  pass: boolean | undefined;
}

const s = (x: number) => `${(x / 1000).toFixed(1)} s`;

/**
 * The AppPolicy reads among a run's `calls` ("GET /apis/plumb.dev/v1alpha1/apppolicies"): one per
 * run by design (a tightened policy applies on the next run, even one that changes nothing), so
 * the request targets set before policies existed count it apart.
 */
export function policyReads(calls: string[]): number {
  return calls.filter((c) => /^(GET|LIST) \/apis\/plumb\.dev\/v1alpha1\/apppolicies\b/.test(c))
    .length;
}

/** Targets 2–5 (target 3 from the generated-50 App's new-commit run of the requests table). */
export function scaleTargets(
  r: ScaleResults | undefined,
  newCommit50: Pick<RunSample, "requests" | "applies" | "calls"> | undefined,
): Target[] {
  const out: Target[] = [];
  const st = r?.steady;
  out.push({
    target: "14.2 no write on a steady run — podinfo-webapp (HPA message), 7 full comparisons",
    measured: st
      ? `${st.runsWithWrites} of ${st.runs} wrote (writes per run: ${st.writes.join(", ")})${st.settled ? "" : "; NOT settled"}`
      : "not measured",
    pass: st ? st.runsWithWrites === 0 : undefined,
  });
  const iv = r?.interval;
  out.push({
    target: "14.2 no write on a steady interval — 1,000 Apps, each compared once",
    measured: iv ? `${iv.reconciled} runs, ${iv.writes} writes` : "not measured",
    pass: iv ? iv.writes === 0 && iv.reconciled === iv.apps : undefined,
  });
  if (newCommit50) {
    const total = Object.values(newCommit50.requests).reduce((a, b) => a + b, 0);
    const other = total - newCommit50.applies;
    const policy = policyReads(newCommit50.calls);
    out.push({
      target:
        "14.3 one changed object of 50 → 1 apply + ≤ 6 other requests (the AppPolicy list, one per run, counted apart)",
      measured: `${newCommit50.applies} apply + ${other} other (${policy} of them the AppPolicy list)`,
      pass: newCommit50.applies <= 1 && other - policy <= 6 && policy <= 1,
    });
  } else {
    out.push({
      target:
        "14.3 one changed object of 50 → 1 apply + ≤ 6 other requests (the AppPolicy list, one per run, counted apart)",
      measured: "not measured",
      pass: undefined,
    });
  }
  const m = r?.many;
  out.push({
    target: "14.4 first sync of 1,000 Apps on one repository ≤ 60 s CPU, ≤ 2 Git fetches",
    measured: m
      ? `${s(m.process.cpuMs)} CPU, ${m.git.fetch} fetches, ${s(m.process.wallMs)} wall, ${round(m.process.peakMiB, 0)} MiB (whole process)`
      : "not measured",
    pass: m ? m.process.cpuMs <= 60_000 && m.git.fetch <= 2 && m.process.exit === 0 : undefined,
  });
  const f = m?.forced;
  out.push({
    target:
      "14.4 one source lookup per repository and ref — forced tick of 1,000 Apps, ≤ 1 ls-refs",
    measured: f
      ? `${f.git.lsRefs} ls-refs, ${f.git.fetch} fetches, ${s(f.process.cpuMs)} CPU, ${s(f.process.wallMs)} wall`
      : "not measured",
    pass: f ? f.git.lsRefs <= 1 && f.git.fetch <= 1 && f.process.exit === 0 : undefined,
  });
  const w = r?.tick?.workerd;
  out.push({
    target: `14.5 Worker tick over 10,000 Apps within ${WORKER_MEMORY_MIB} MB and its CPU limit`,
    measured: w
      ? `isolate heap ${round(w.heapPeakMiB, 1)} MiB peak, workerd CPU ${ms(w.cpuMs)}, ${w.requests} API requests, ${ms(w.wallMs)}`
      : "not measured",
    pass: w ? w.heapPeakMiB < WORKER_MEMORY_MIB && w.cpuMs < WORKER_CPU_MS : undefined,
  });
  return out;
}

/** The cost of 10,000 Apps per 5 minutes, from the measured per-App and per-tick figures. */
export interface CostModel {
  apps: number;
  intervalS: number;
  tickS: number;
  repositories: number;
  /** API reads per compared App (1 + K) and list pages per tick. */
  readsPerApp: number;
  pagesPerTick: number;
  apiPerSecond: number;
  gitPerSecondNode: number;
  gitPerSecondWorkers: number;
  workerInvocationsPerMonth: number;
  /** CPU per compared App (Node, measured) and per tick (workerd, measured), ms. */
  cpuPerAppMs: number;
  cpuPerTickMs: number;
  cpuHoursPerMonth: number;
  /** The same reconciles at Flux's measured CPU per reconcile (bench/flux.ts), when it ran. */
  fluxCpuHoursPerMonth: number | undefined;
}

const MONTH_S = 30 * 24 * 3600;

/**
 * The model, when the interval and the tick were measured.
 * @param flux Flux's kustomize-controller, measured in the same run (bench/flux.ts): CPU per
 *   no-op reconcile (ms) and peak RSS (MiB); undefined when that section did not run
 */
export function costModel(
  r: ScaleResults | undefined,
  flux?: { cpuMs: number | undefined; peakMiB?: number | undefined },
): CostModel | undefined {
  const iv = r?.interval;
  const tick = r?.tick;
  const f = r?.many?.forced;
  if (!iv || !tick?.node || iv.reconciled === 0) return undefined;
  const apps = 10_000;
  const intervalS = 300;
  const tickS = 60;
  const repositories = 10;
  const readsPerApp = iv.totals.reads / iv.reconciled;
  const pagesPerTick = tick.node.pages;
  const comparedPerS = apps / intervalS;
  const ticksPerS = 1 / tickS;
  // Per tick and repository with due Apps: one ls-refs (2 HTTP requests); a fetch (2) per
  // process on Node, per queue message of 25 Apps on Workers (an isolate keeps what it fetched).
  const duePerRepoPerTick = (apps * tickS) / intervalS / repositories;
  const gitPerSecondNode = ticksPerS * repositories * (2 + 2);
  const gitPerSecondWorkers =
    ticksPerS * repositories * (2 + 2 * Math.ceil(duePerRepoPerTick / 25));
  const messagesPerS = comparedPerS / 25;
  const workerInvocationsPerMonth = Math.round((ticksPerS + messagesPerS / 10) * MONTH_S);
  // CPU of a compared App: a forced tick's CPU without what an empty process costs.
  const cpuPerAppMs =
    f && r?.emptyProcessCpuMs !== undefined
      ? Math.max(0, f.process.cpuMs - r.emptyProcessCpuMs) / r.many!.apps
      : iv.totals.cpuMs / iv.reconciled;
  const cpuPerTickMs = tick.workerd?.cpuMs ?? tick.node.cpuMs;
  const cpuHoursPerMonth =
    ((comparedPerS * cpuPerAppMs + ticksPerS * cpuPerTickMs) * MONTH_S) / 1000 / 3600;
  return {
    apps,
    intervalS,
    tickS,
    repositories,
    readsPerApp,
    pagesPerTick,
    apiPerSecond: comparedPerS * readsPerApp + ticksPerS * pagesPerTick,
    gitPerSecondNode,
    gitPerSecondWorkers,
    workerInvocationsPerMonth,
    cpuPerAppMs,
    cpuPerTickMs,
    cpuHoursPerMonth,
    fluxCpuHoursPerMonth:
      flux?.cpuMs === undefined ? undefined : (comparedPerS * flux.cpuMs * MONTH_S) / 1000 / 3600,
  };
}

/**
 * The report section: what was measured, before and after, and the cost model.
 * @param flux Flux's measured figures for the model's comparison line (see costModel)
 */
export function scaleReport(
  r: ScaleResults | undefined,
  flux?: { cpuMs: number | undefined; peakMiB?: number | undefined },
): string[] {
  const lines: string[] = [];
  if (!r) return ["not measured"];
  const m = r.many;
  const b = r.manyBefore;
  const row = (label: string, x: FirstSyncMany | undefined, which: "first" | "forced") => {
    const p = which === "first" ? x?.process : x?.forced?.process;
    const g = which === "first" ? x?.git : x?.forced?.git;
    return p && g
      ? [label, s(p.wallMs), s(p.cpuMs), round(p.peakMiB, 0), p.reads, p.writes, g.fetch, g.lsRefs]
      : [label, "", "", "", "", "", "", ""];
  };
  if (m) {
    lines.push(
      table(
        [
          "1,000 Apps, one repository (whole process)",
          "wall",
          "CPU",
          "peak MiB",
          "API reads",
          "API writes",
          "Git fetches",
          "ls-refs",
        ],
        [
          row("first reconcile --all", m, "first"),
          ...(b ? [row("  before (older checkout)", b, "first")] : []),
          row("reconcile --all --force (every App compared)", m, "forced"),
          ...(b ? [row("  before (older checkout)", b, "forced")] : []),
        ],
      ),
    );
    lines.push(
      `  before, as the issue measured it: first sync ${ISSUE_BEFORE.firstSync1000}; forced tick ${ISSUE_BEFORE.forcedTick1000}.`,
    );
  }
  const iv = r.interval;
  if (iv) {
    lines.push(
      "",
      `Steady interval: ${iv.apps} Apps with interval 1m, a tick (reconcile --all --every ${iv.tickS}s, a process each) every ${iv.tickS} s for one interval:`,
      `  ${iv.reconciled} runs (each App once), ${iv.writes} writes; wall ${s(iv.totals.wallMs)} and CPU ${s(iv.totals.cpuMs)} summed over ${iv.ticks.length} processes` +
        (r.emptyProcessCpuMs !== undefined
          ? ` (an empty process alone costs ${ms(r.emptyProcessCpuMs)} CPU)`
          : ""),
      `  API ${iv.totals.reads} reads = ${round(iv.totals.reads / iv.intervalS, 1)} requests/s; Git ${iv.totals.git.lsRefs} ls-refs and ${iv.totals.git.fetch} fetches (${iv.totals.git.lsRefs + iv.totals.git.fetch + iv.totals.git.other} HTTP requests) for the interval`,
    );
  }
  const st = r.steady;
  if (st) {
    lines.push(
      "",
      `podinfo-webapp (${st.app}), ${st.runs} full comparisons 16 s apart: ${st.runsWithWrites} wrote (before: ${ISSUE_BEFORE.hpaNoop}).`,
    );
    for (const [i, fields] of (st.changed ?? []).entries()) {
      lines.push(`  write ${i + 1} changed: ${fields.join("; ") || "(only times)"}`);
    }
  }
  const t = r.tick;
  if (t) {
    const fig = (label: string, x: TickResult["node"]) =>
      x
        ? [
            label,
            ms(x.wallMs),
            ms(x.cpuMs),
            `${round(x.heapBaseMiB, 1)} → ${round(x.heapPeakMiB, 1)}`,
            x.rssPeakMiB !== undefined
              ? `${round(x.rssBaseMiB ?? 0, 0)} → ${round(x.rssPeakMiB, 0)}`
              : "",
            x.requests,
            x.pages,
            x.due,
            x.sources,
            x.messages ?? "",
          ]
        : [label, "", "", "", "", "", "", "", "", ""];
    lines.push(
      "",
      table(
        [
          "tick over 10,000 Apps",
          "wall",
          "CPU",
          "heap MiB",
          "RSS MiB",
          "API req",
          "pages",
          "due",
          "sources",
          "messages",
        ],
        [
          fig("Worker cron handler (workerd)", t.workerd),
          ...(r.tickBefore?.workerd
            ? [fig("  before (older checkout)", r.tickBefore.workerd)]
            : []),
          fig("Node (planTick + lookups, in process)", t.node),
        ],
      ),
      `  setup: ${t.apps} Apps in ${ms(t.setupMs)}; heap = the isolate's JS heap (V8 inspector, sampled), RSS = workerd's resident memory; CPU = workerd's process CPU during the request.`,
    );
    for (const e of t.errors) lines.push(`  error: ${e}`);
  }
  const c = costModel(r, flux);
  if (c) {
    lines.push(
      "",
      `Cost model: ${c.apps.toLocaleString("en")} Apps, interval ${c.intervalS / 60} min, a tick every ${c.tickS} s, ${c.repositories} repositories (from the figures above):`,
      `  API ${round(c.apiPerSecond, 1)} requests/s (${round(c.readsPerApp, 2)} reads per compared App, ${c.pagesPerTick} list pages per tick); 0 writes while steady`,
      `  Git ${round(c.gitPerSecondNode, 2)} requests/s on Node (one lookup and one fetch per repository per tick), ${round(c.gitPerSecondWorkers, 2)}/s on Workers at most (a fetch per queue message of 25 Apps)`,
      `  Workers: ${c.workerInvocationsPerMonth.toLocaleString("en")} invocations/month (cron each minute, queue batches of 10 messages × 25 Apps); CPU ${round(c.cpuHoursPerMonth, 0)} h/month (${round(c.cpuPerAppMs, 2)} ms per compared App, ${ms(c.cpuPerTickMs)} per tick)`,
      c.fluxCpuHoursPerMonth === undefined || flux?.cpuMs === undefined
        ? "  Flux (kustomize-controller): not measured in this run (`npm run bench -- --only flux`)"
        : `  Flux (kustomize-controller, ${ms(flux.cpuMs)} CPU per no-op reconcile of guestbook, measured in this run${flux.peakMiB === undefined ? "" : `, ${round(flux.peakMiB, 0)} MiB peak RSS`}): ${round(c.fluxCpuHoursPerMonth, 0)} CPU-hours/month for the same reconciles`,
    );
  }
  return lines;
}
