// The benchmark's targets and report, computed from the results of a run (pure: no I/O).
import type { BundleResult } from "./bundle.ts";
import { type BurstFigure, burstReport, burstTargets } from "./burst.ts";
import type { ComparisonCase } from "./compare.ts";
import { type CronResult, type TickCostResult, tickCostReport, tickCostTargets } from "./cron.ts";
import type { EngineBenchResult } from "./engines.ts";
import { engineReport, engineTargets } from "./engines-report.ts";
import { type FluxResult, fluxCpuMs, fluxReport, fluxTargets } from "./flux-report.ts";
import { type HostileResult, hostileTable, hostileTargets } from "./hostile.ts";
import { isDiscovery } from "./kube.ts";
import type { MemoryResult } from "./memory.ts";
import {
  type ColdStartResult,
  coldStartLine,
  type ProcessResult,
  processReport,
  processTargets,
} from "./process-report.ts";
import {
  type CpuBreakdown,
  type RequestsCase,
  type RunSample,
  reads,
  type TimingCase,
  total,
  writes,
} from "./reconcile-bench.ts";
import type { NodeRenderResult, WorkerdRenderResult } from "./render.ts";
import { policyReads, type ScaleResults, scaleReport, scaleTargets } from "./scale-report.ts";
import { bytes, ms, round, table } from "./stats.ts";
import type { WebhookResult } from "./webhook.ts";

/** Everything one benchmark run measured (written to bench/results/<date>.json). */
export interface Results {
  date: string;
  /** The checkout measured: `git describe --always --dirty` (a "-dirty" suffix: uncommitted changes). */
  commit?: string | undefined;
  machine: {
    cpus: number;
    cpuModel: string;
    memoryBytes: number;
    node: string;
    /** os.loadavg() (1, 5, 15 min) when the run started and when it ended. */
    loadAverageBefore?: number[];
    loadAverageAfter?: number[];
  };
  /** Flux's benchmark shape in a burst (bench/burst.ts), at 100 and 1,000 Apps. */
  burst?: BurstFigure[] | undefined;
  cluster: { kubeconfig: string; owned: boolean };
  durationMs?: number;
  requests: RequestsCase[];
  timings: TimingCase[];
  cpuBreakdown?: CpuBreakdown | undefined;
  webhook: WebhookResult[];
  cron: CronResult[];
  /** A CronJob tick (a `reconcile --all` process) against serve --schedule's tick. */
  tickCost?: TickCostResult | undefined;
  bundle?: BundleResult | undefined;
  memory?: MemoryResult | undefined;
  /** The render Worker's bundle and the engines on Node and in workerd. */
  renderBundle?: BundleResult | undefined;
  renderNode?: NodeRenderResult | undefined;
  renderWorkerd?: WorkerdRenderResult | undefined;
  comparison: ComparisonCase[];
  /** Target 1: the CLI as a whole process, and the Worker's cold start. */
  process?: ProcessResult | undefined;
  coldStart?: ColdStartResult | undefined;
  targets: Target[];
  /** Scale: steady runs, many Apps on one repository, the tick over 10,000 Apps. */
  scale?: ScaleResults | undefined;
  /** The engines as a user pays them: a Kustomize no-op CLI run, and a CPU hog. */
  engines?: EngineBenchResult | undefined;
  /** Hostile renders: the peak RSS of one CLI run on each (bench/hostile.ts). */
  hostile?: HostileResult[] | undefined;
  /** Flux's kustomize-controller beside plumb's no-op CLI runs (bench/flux.ts). */
  flux?: FluxResult | undefined;
  errors: Array<{ phase: string; error: string }>;
}

export interface Target {
  target: string;
  measured: string;
  pass: boolean | undefined;
}

/** Each target met (pass true), missed (false) or not measured, with the figure. */
export function evaluateTargets(results: Results): Target[] {
  const out: Target[] = [];
  for (const c of results.requests) {
    const K = c.kinds;
    const n = c.noop.requests;
    const policy = policyReads(c.noop.calls);
    out.push({
      target: `no-op ≤ 1+K reads, 0 writes — ${c.app} (K=${K}; the AppPolicy list, one per run, counted apart)`,
      measured: `${reads(n)} reads (get ${n.get}, list ${n.list}; ${policy} of them the AppPolicy list), ${writes(n)} writes`,
      pass: reads(n) - policy <= 1 + K && policy <= 1 && writes(n) === 0,
    });
  }
  const firstSyncTarget = (
    label: string,
    app: string,
    M: number,
    s: Pick<RunSample, "requests" | "applies" | "discovery"> | undefined,
  ) => {
    if (!s) return;
    const other = total(s.requests) - s.applies;
    out.push({
      target: `first sync ≤ M applies + 5 other — ${app} (M=${M}), ${label}`,
      measured: `${s.applies} applies + ${other} other (${s.discovery} of them discovery)`,
      pass: s.applies <= M && other <= 5,
    });
  };
  for (const c of results.requests) {
    const t = results.timings.find((x) => c.app.endsWith(`/${x.app}`));
    firstSyncTarget("warm discovery cache", c.app, c.objects, t?.firstSync.first);
    firstSyncTarget("cold discovery cache", c.app, c.objects, c.firstSync);
  }
  for (const runtime of ["node", "workerd"]) {
    const w = results.webhook.find((x) => x.runtime.startsWith(runtime));
    out.push({
      target: `webhook → applied p50 < 0.5 s — guestbook, ${runtime}`,
      measured: w
        ? `p50 ${ms(w.latencyMs.p50)} (p95 ${ms(w.latencyMs.p95)}, n=${w.pushes})`
        : "not measured",
      pass: w && w.pushes > 0 ? w.latencyMs.p50 < 500 : undefined,
    });
  }
  const gb = results.timings.find((t) => t.app === "guestbook");
  out.push({
    target: "CPU per no-op < 5 ms — guestbook (p50)",
    measured: gb
      ? `p50 ${gb.noop.cpuMs.p50} ms (p95 ${gb.noop.cpuMs.p95} ms, n=${gb.noop.cpuMs.n})`
      : "not measured",
    pass: gb ? gb.noop.cpuMs.p50 < 5 : undefined,
  });
  const rb = results.renderBundle;
  out.push({
    target: "render Worker (Kustomize) < 10 MB gzipped (Workers paid plan; free: 3 MB)",
    measured: rb
      ? `${bytes(rb.allGzipBytes)} gzipped, kustomize.wasm included (${rb.allGzipBytes} B)`
      : "not measured",
    pass: rb ? rb.allGzipBytes < 10 * 1000 * 1000 : undefined,
  });
  const rw = results.renderWorkerd;
  out.push({
    target: "Kustomize render fits a Worker isolate (128 MB)",
    measured: rw
      ? `engine memory ${bytes(rw.wasmMemoryBytes)}; workerd RSS +${bytes(rw.workerdPeak - rw.workerdRssBefore)} at peak`
      : "not measured",
    // workerd's whole RSS growth bounds what the render added to the isolate (heap, wasm
    // memory, compiled code): conservative.
    pass: rw ? rw.workerdPeak - rw.workerdRssBefore < 128 * 1000 * 1000 : undefined,
  });
  const b = results.bundle;
  out.push({
    target: "Worker bundle < 1 MiB gzipped",
    measured: b
      ? `${bytes(b.gzipBytes)} gzipped (${b.gzipBytes} B; raw ${bytes(b.rawBytes)})`
      : "not measured",
    pass: b ? b.gzipBytes < 1024 * 1024 : undefined,
  });
  out.push(...processTargets(results.process, fluxCpuMs(results.flux)));
  out.push(...tickCostTargets(results.tickCost));
  const gen50 = results.requests.find((c) => c.app.endsWith("/generated-50"));
  out.push(...scaleTargets(results.scale, gen50?.newCommit));
  out.push(...burstTargets(results.burst));
  out.push(...engineTargets(results.engines));
  out.push(...fluxTargets(results.flux));
  if (results.hostile) out.push(...hostileTargets(results.hostile));
  return out;
}

const verbRow = (
  app: string,
  run: string,
  s: Pick<RunSample, "requests" | "applies" | "discovery" | "gitRequests">,
) => {
  const q = s.requests;
  return [
    app,
    run,
    q.get,
    q.list,
    q.create,
    q.update,
    q.patch,
    q.delete,
    total(q),
    s.applies,
    s.discovery,
    s.gitRequests,
  ];
};

/** "GET app ×1, PUT app/status ×1, …": what the requests other than applies were. */
export function others(calls: string[]): string {
  const label = (call: string) => {
    const [method = "", path = ""] = call.split(" ");
    if (method === "GET" && isDiscovery({ method, path })) return "GET discovery";
    const rest = path
      .replace(/^\/api\/[^/]+|^\/apis\/[^/]+\/[^/]+/, "")
      .split("/")
      .filter(Boolean);
    // [resource], [resource, name] or [resource, name, subresource], after namespaces/<ns>
    const segs = rest[0] === "namespaces" && rest.length >= 3 ? rest.slice(2) : rest;
    const resource = path.startsWith("/apis/plumb.dev/") ? "App" : segs[0];
    return `${method} ${resource}${segs[2] ? `/${segs[2]}` : ""}`;
  };
  const counts = new Map<string, number>();
  for (const c of calls) {
    if (c.startsWith("APPLY ")) continue;
    const l = label(c);
    counts.set(l, (counts.get(l) ?? 0) + 1);
  }
  return [...counts].map(([k, v]) => (v > 1 ? `${k} ×${v}` : k)).join(", ");
}

/** The printed report of `results`: tables and the targets. */
export function report(results: Results): string {
  const lines: string[] = [];
  const h = (s: string) => lines.push("", `== ${s}`, "");
  lines.push(
    `plumb benchmark — ${results.date} — ${results.machine.cpus} × ${results.machine.cpuModel}, Node ${results.machine.node}`,
    `cluster: ${results.cluster.owned ? "local control plane started by the benchmark" : `$KUBECONFIG ${results.cluster.kubeconfig}`}; Git: git http-backend on loopback (child process)`,
  );

  h("1. API requests per run, by verb (git = Git HTTP requests)");
  const rows: Array<Array<string | number>> = [];
  for (const c of results.requests) {
    const t = results.timings.find((x) => c.app.endsWith(`/${x.app}`));
    rows.push(verbRow(c.app, "first sync (cold discovery)", c.firstSync));
    if (t?.firstSync.first)
      rows.push(verbRow("", "first sync (warm discovery)", t.firstSync.first));
    rows.push(verbRow("", "new commit (image)", c.newCommit));
    rows.push(verbRow("", "no-op", c.noop));
  }
  lines.push(
    table(
      [
        "App",
        "run",
        "get",
        "list",
        "create",
        "update",
        "patch",
        "delete",
        "total",
        "applies",
        "discovery",
        "git",
      ],
      rows,
    ),
  );
  lines.push("");
  for (const c of results.requests) {
    lines.push(
      `${c.app}: M=${c.objects} objects, K=${c.kinds} kinds; no-op measured after ${c.settleRuns} settling run(s)${c.settled ? "" : " (NOT settled: health still changing)"}`,
    );
    lines.push(`  first sync, besides applies (cold): ${others(c.firstSync.calls)}`);
    lines.push(`  new commit, besides applies: ${others(c.newCommit.calls)}`);
    lines.push(`  no-op: ${others(c.noop.calls)}`);
  }

  h(
    `2. Wall time per reconcile (${results.timings[0]?.runs ?? 0} runs each; warm discovery cache) and CPU of this process`,
  );
  const trows: Array<Array<string | number>> = [];
  for (const t of results.timings) {
    for (const [name, p] of [
      ["first sync", t.firstSync],
      ["new commit", t.newCommit],
      ["no-op", t.noop],
    ] as const) {
      trows.push([
        name === "first sync" ? t.app : "",
        name,
        p.wallMs.n,
        ms(p.wallMs.p50),
        ms(p.wallMs.p95),
        ms(p.wallMs.min),
        ms(p.wallMs.max),
        ms(p.cpuMs.p50),
        ms(p.cpuMs.p95),
        p.requestsTotalRange[0] === p.requestsTotalRange[1]
          ? String(p.requestsTotalRange[0])
          : `${p.requestsTotalRange[0]}–${p.requestsTotalRange[1]}`,
        p.gitRequests.p50,
        p.runsWithWrites,
        p.failures.length,
      ]);
    }
  }
  lines.push(
    table(
      [
        "App",
        "run",
        "n",
        "p50",
        "p95",
        "min",
        "max",
        "CPU p50",
        "CPU p95",
        "requests",
        "git",
        "wrote",
        "failed",
      ],
      trows,
    ),
  );
  lines.push(
    "  requests = API requests per run (range); git = Git HTTP requests per run (p50); wrote = runs that wrote",
    "  to the API server (for no-op runs: a health change recorded in status); CPU = process.cpuUsage() of the",
    "  benchmark process around reconcileApp (the Git server and the API server are other processes).",
  );
  const cb = results.cpuBreakdown;
  if (cb)
    lines.push(
      `  CPU pieces (p50 of 20, each alone): one API request through plumb's Node transport (GET /version) ${ms(cb.apiRequestCpuMs.p50)} CPU / ${ms(cb.apiRequestWallMs.p50)} wall;`,
      `  GitPort.resolve (ls-refs) ${ms(cb.lsRefsCpuMs.p50)} CPU / ${ms(cb.lsRefsWallMs.p50)} wall.`,
    );
  for (const t of results.timings) {
    const f = [...t.firstSync.failures, ...t.newCommit.failures, ...t.noop.failures];
    if (f.length) lines.push(`  ${t.app} failures: ${[...new Set(f)].slice(0, 3).join(" | ")}`);
  }

  h(
    `3. Webhook → applied (signed GitHub push sent → new image in the live Deployment; guestbook; poll 10 ms)`,
  );
  lines.push(
    table(
      ["runtime", "pushes", "p50", "p95", "min", "max", "202 p50", "warm-up push"],
      results.webhook.map((w) => [
        w.runtime,
        w.pushes,
        ms(w.latencyMs.p50),
        ms(w.latencyMs.p95),
        ms(w.latencyMs.min),
        ms(w.latencyMs.max),
        ms(w.ackMs.p50),
        w.warmupMs.map(ms).join(", "),
      ]),
    ),
  );
  for (const w of results.webhook)
    if (w.errors.length) lines.push(`  ${w.runtime} errors: ${w.errors.slice(0, 3).join(" | ")}`);

  h("4. One cron tick over N Apps (one ConfigMap each, one repository, 5 namespaces)");
  lines.push(
    table(
      [
        "runtime",
        "Apps",
        "due",
        "listed",
        "enqueue",
        "reconcile all",
        "per App",
        "observed",
        "failed",
        "req/App",
        "git",
        "CPU busy",
      ],
      results.cron.map((c) => [
        c.runtime,
        c.apps,
        Number.isNaN(c.due) ? "?" : c.due,
        c.listed ?? "",
        ms(c.enqueueMs),
        ms(c.reconcileAllMs),
        ms(c.reconcileAllMs / c.apps),
        c.observed,
        c.failed,
        c.requests ? round(c.requests.perApp, 1) : "",
        c.gitRequests ?? "",
        c.cpuMs === undefined ? "" : `${Math.round((100 * c.cpuMs) / c.reconcileAllMs)}%`,
      ]),
    ),
  );
  lines.push(
    "  enqueue = list all Apps + pick the due ones (workerd: the /__scheduled request, which also sends the queue batches);",
    "  reconcile all = after enqueue until every App is reconciled (workerd: until every App has status.observedGeneration, polled every 100 ms);",
    "  req/App on workerd counts the Worker's requests through the fault proxy; git = Git HTTP requests of the tick;",
    "  CPU busy = CPU time of the (single-threaded) Node process during reconcile all ÷ its wall time.",
  );
  for (const c of results.cron)
    if (c.errors.length)
      lines.push(`  ${c.runtime} ${c.apps}: ${c.errors.slice(0, 3).join(" | ")}`);

  h("5. Worker bundle (wrangler deploy --dry-run)");
  const b = results.bundle;
  lines.push(
    b
      ? `${b.file}: ${bytes(b.rawBytes)} raw (${b.rawBytes} B), ${bytes(b.gzipBytes)} gzipped (${b.gzipBytes} B)`
      : "not measured",
    `cold start in workerd (spawn → first answer to GET /healthz): ${coldStartLine(results.coldStart)}`,
  );

  h("6. Peak memory of one first-sync reconcile of generated-50 (child Node process)");
  const m = results.memory;
  lines.push(
    m
      ? [
          `outcome ${m.outcome} in ${ms(m.wallMs)} (${m.samples} samples)`,
          `maxRSS: +${bytes(m.maxRssDelta)} over the baseline (${bytes(m.baseline.maxRSS)} → ${bytes(m.peak.maxRSS)})${m.maxRssDelta === 0 ? " — the run stayed under the peak RSS the process reached while starting up" : ""}`,
          `heapUsed peak: +${bytes(m.heapPeakDelta)} over the baseline (${bytes(m.baseline.heapUsed)} → ${bytes(m.peak.heapUsed)})`,
          `RSS sampled peak: +${bytes(m.rssPeakDelta)} (${bytes(m.baseline.rss)} → ${bytes(m.peak.rss)})`,
        ].join("\n")
      : "not measured",
  );

  h("7. Render engines: podinfo's dev overlay (Kustomize, 25 objects) and helm-guestbook (Helm)");
  const rn = results.renderNode;
  const rwd = results.renderWorkerd;
  const rbd = results.renderBundle;
  const row = (
    runtime: string,
    engine: string,
    load: number | undefined,
    first: number,
    warm: { p50: number; p95: number },
    memory: string,
  ) => [
    runtime,
    engine,
    load === undefined ? "" : ms(load),
    ms(first),
    ms(warm.p50),
    ms(warm.p95),
    memory,
  ];
  const rrows: Array<Array<string | number>> = [];
  if (rn) {
    rrows.push(
      row(
        "node (helper process)",
        "plumb-kustomize",
        rn.kustomize.loadMs,
        rn.kustomize.firstMs,
        rn.kustomize.warmMs,
        rn.kustomize.helperPeak ? `helper peak RSS ${bytes(rn.kustomize.helperPeak)}` : "",
      ),
      row(
        "node (helper process)",
        "plumb-helm",
        rn.helm.loadMs,
        rn.helm.firstMs,
        rn.helm.warmMs,
        rn.helm.helperPeak ? `helper peak RSS ${bytes(rn.helm.helperPeak)}` : "",
      ),
    );
  }
  if (rwd) {
    rrows.push(
      row(
        "workerd (render Worker, wrangler dev; over HTTP)",
        "kustomize.wasm",
        undefined,
        rwd.firstMs,
        rwd.warmMs,
        `engine memory ${bytes(rwd.wasmMemoryBytes)}; workerd RSS ${bytes(rwd.workerdRssBefore)} → peak ${bytes(rwd.workerdPeak)}`,
      ),
    );
  }
  lines.push(
    rrows.length
      ? table(
          ["runtime", "engine", "load", "first render", "warm p50", "warm p95", "memory"],
          rrows,
        )
      : "not measured",
  );
  lines.push(
    "  load = starting the engine (spawn the helper to its ready line; in workerd, instantiating the module);",
    "  first render = the first one after loading (cold caches); warm = the next 10. workerd's first render",
    "  includes instantiating the module in a fresh isolate.",
  );
  lines.push(
    rbd
      ? `render Worker bundle: ${Object.entries(rbd.files)
          .filter(([f]) => /\.(m?js|wasm)$/.test(f))
          .map(([f, n]) => `${f.replace(/^[0-9a-f]{40}-/, "")} ${bytes(n)}`)
          .join(", ")}; ${bytes(rbd.allGzipBytes)} gzipped in all`
      : "render Worker bundle: not measured",
  );
  h("8. A full comparison (a due run compares every rendered object with its live state)");
  const crows: Array<Array<string | number>> = [];
  for (const c of results.comparison) {
    const row = (label: string, s: RunSample, v: ComparisonCase["steadyVerdict"]) => [
      label === "steady" ? `${c.app} (M=${c.objects})` : "",
      label,
      s.requests.get,
      s.requests.list,
      s.dryRuns,
      writes(s.requests) - s.dryRuns,
      total(s.requests),
      v.syncStatus ?? "?",
      v.drift.length,
    ];
    const steady = c.steady.at(-1);
    if (steady) crows.push(row("steady", steady, c.steadyVerdict));
    crows.push(row("one drifted", c.drifted, c.driftedVerdict));
    crows.push(row("held preview", c.held, c.heldVerdict));
  }
  lines.push(
    table(
      ["App", "situation", "get", "list", "dry runs", "writes", "total", "sync", "drifted fields"],
      crows,
    ),
  );
  lines.push(
    "  steady = the last of 3 full comparisons with nothing changed; one drifted = after another field manager set",
    "  one Deployment's first image; held preview = requiresApproval and a commit changing one Deployment's image.",
    "  writes = status write and Events (dry runs counted apart; they change nothing).",
  );
  for (const c of results.comparison) {
    const show = (label: string, v: ComparisonCase["steadyVerdict"]) =>
      v.drift.length + v.messages.length > 0
        ? `  ${c.app} ${label}: drift [${v.drift.join("; ")}] resources [${v.messages.join("; ")}]`
        : undefined;
    for (const l of [
      show("steady", c.steadyVerdict),
      show("one drifted", c.driftedVerdict),
      show("held preview", c.heldVerdict),
    ])
      if (l) lines.push(l.slice(0, 600));
  }

  h("9. Whole processes: the plumb CLI from start to exit");
  lines.push(...processReport(results.process));
  lines.push("", "A CronJob tick against serve --schedule (CPU per tick, whole processes):");
  lines.push(...tickCostReport(results.tickCost));

  h("10. Scale: steady runs, 1,000 Apps on one repository, a tick over 10,000 Apps");
  lines.push(
    ...scaleReport(results.scale, {
      cpuMs: fluxCpuMs(results.flux),
      peakMiB: results.flux?.peakMiB,
    }),
  );

  h("12. Burst: Flux's benchmark shape, 100 and 1,000 new Apps, shards of one CronJob");
  lines.push(...burstReport(results.burst));

  h("11. Render engines on Node as a user pays them: a Kustomize no-op CLI run, and a CPU hog");
  lines.push(...engineReport(results.engines));

  h("12. Hostile renders: the peak RSS of one CLI run (VmHWM) under the default 512 MiB ceiling");
  lines.push(results.hostile ? hostileTable("", results.hostile).trim() : "not measured");

  h("14. Flux's kustomize-controller beside plumb's no-op CLI runs (same API server, alternated)");
  lines.push(...fluxReport(results.flux));

  h("Targets");
  lines.push(
    table(
      ["target", "measured", "result"],
      results.targets.map((t) => [
        t.target,
        t.measured,
        t.pass === undefined ? "N/A" : t.pass ? "PASS" : "MISS",
      ]),
    ),
  );
  if (results.errors.length) {
    h("Errors");
    for (const e of results.errors) lines.push(`${e.phase}: ${e.error.split("\n")[0]}`);
  }
  return lines.join("\n");
}
