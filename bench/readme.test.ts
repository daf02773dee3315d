import { describe, expect, it } from "vitest";
import type { ProcessSample } from "./process-report.ts";
import { BEGIN, costBlock, END, NOT_MEASURED, newestResults, replaceCostBlock } from "./readme.ts";
import type { RunSample } from "./reconcile-bench.ts";
import { evaluateTargets, type Results } from "./report.ts";
import { summarize } from "./stats.ts";

// A results file as bench/run.ts writes it, every section filled, built from the report types
// (no run of the bench has been kept in the repository: bench/results is ignored).
const counts = (get: number, list: number, patch = 0, create = 0) => ({
  get,
  list,
  create,
  update: 0,
  patch,
  delete: 0,
});
const sample = (
  requests: RunSample["requests"],
  applies: number,
  calls: string[] = [],
): RunSample => ({
  wallMs: 50,
  cpuMs: 4,
  requests,
  applies,
  discovery: 0,
  dryRuns: 0,
  calls,
  gitRequests: 2,
  outcome: "Reconciled",
});
const phase = (wall: number[], cpu: number[]) => ({
  wallMs: summarize(wall),
  cpuMs: summarize(cpu),
  first: sample(counts(3, 2, 2), 2),
  requestsTotalRange: [7, 9] as [number, number],
  gitRequests: summarize([2, 2]),
  failures: [],
  runsWithWrites: 0,
  samples: [],
});
const proc = (cpuMs: number, peakMiB: number): ProcessSample => ({
  cpuMs,
  peakMiB,
  wallMs: 2 * cpuMs,
  exit: 0,
  outcomes: { Reconciled: 1 },
  writes: 0,
});
const figure = {
  cpuMs: 8100,
  peakMiB: 290,
  wallMs: 16_200,
  exit: 0,
  outcomes: { Reconciled: 1000 },
  reads: 2004,
  writes: 0,
  runsWithWrites: 0,
  errors: [],
};
const tick = {
  wallMs: 590,
  cpuMs: 50,
  heapPeakMiB: 15.6,
  heapBaseMiB: 12.1,
  requests: 25,
  gitRequests: 13,
  due: 3004,
  listed: 10_000,
  pages: 25,
  sources: 13,
};

function fullResults(): Results {
  const r: Results = {
    date: "2026-12-03T14:05:09.123Z",
    commit: "71f3366",
    machine: {
      cpus: 2,
      cpuModel: "Test CPU @ 2.0GHz",
      memoryBytes: 8 * 1024 ** 3,
      node: "v24.11.0",
      loadAverageBefore: [0.52, 0.8, 1.1],
      loadAverageAfter: [2.25, 1.5, 1.25],
    },
    cluster: { kubeconfig: "/somewhere/kubeconfig", owned: true },
    durationMs: 3_600_000,
    requests: [
      {
        app: "bench-guestbook/guestbook",
        namespace: "bench-guestbook",
        objects: 2,
        kinds: 2,
        firstSync: sample(counts(6, 3, 3, 1), 2, [
          "GET /apis/plumb.dev/v1alpha1/namespaces/n/apps/guestbook",
          "APPLY /api/v1/namespaces/n/services/guestbook",
          "APPLY /apis/apps/v1/namespaces/n/deployments/guestbook",
        ]),
        newCommit: sample(counts(3, 2, 3), 1),
        settleRuns: 1,
        settled: true,
        noop: sample(counts(1, 2), 0),
      },
    ],
    timings: [
      {
        app: "guestbook",
        runs: 20,
        firstSync: phase([117, 141], [20, 25]),
        newCommit: phase([91, 151], [15, 18]),
        noop: { ...phase([28, 33], [12, 13]), settleRuns: 1, settled: true },
      },
    ],
    cpuBreakdown: {
      apiRequestCpuMs: summarize([0.6]),
      apiRequestWallMs: summarize([1.2]),
      lsRefsCpuMs: summarize([2.2]),
      lsRefsWallMs: summarize([4.4]),
    },
    webhook: [
      {
        runtime: "node (plumb serve)",
        pushes: 10,
        latencyMs: summarize([67, 86]),
        ackMs: summarize([5]),
        warmupMs: [300],
        samples: [67, 86],
        errors: [],
      },
    ],
    cron: [
      {
        runtime: "node",
        apps: 100,
        setupMs: 1000,
        due: 100,
        enqueueMs: 6,
        reconcileAllMs: 7200,
        observed: 100,
        failed: 0,
        requests: { total: 400, perApp: 4 },
        errors: [],
      },
    ],
    tickCost: {
      cli: "functions/plumb.mjs",
      apps: 3,
      periodMs: 20_000,
      rounds: 2,
      ticksPerRound: 3,
      cronTickCpuMs: [700, 720, 680],
      serveTickCpuMs: [90, 80, 100],
      nodeBaselineCpuMs: [40],
      cronGitRequests: [6],
      serveGitRequests: [2],
      cronOutcomes: { Reconciled: 9 },
      serveOutcomes: { Reconciled: 9 },
      errors: [],
    },
    bundle: {
      file: "index.js",
      rawBytes: 2_894_000,
      gzipBytes: 586_752,
      files: {},
      allGzipBytes: 586_752,
    },
    coldStart: { plumbMs: [150], emptyMs: [30] },
    memory: {
      app: "generated-50",
      outcome: "Reconciled",
      wallMs: 400,
      samples: 40,
      maxRssDelta: 12 * 1024 * 1024,
      heapPeakDelta: 5 * 1024 * 1024,
      rssPeakDelta: 12 * 1024 * 1024,
      baseline: { rss: 80e6, heapUsed: 20e6, maxRSS: 80 * 1024 * 1024 },
      peak: { heapUsed: 25e6, rss: 92e6, maxRSS: 92 * 1024 * 1024 },
    },
    renderBundle: {
      file: "render.js",
      rawBytes: 100,
      gzipBytes: 50,
      files: { "abc-kustomize.wasm": 21_400_000, "render.js": 100 },
      allGzipBytes: 5_138_022,
    },
    renderNode: {
      kustomize: {
        what: "podinfo dev",
        objects: 25,
        loadMs: 95,
        firstMs: 40,
        warmMs: summarize([51, 152]),
        helperPeak: 28 * 1024 * 1024,
      },
      helm: {
        what: "helm-guestbook",
        manifests: 3,
        loadMs: 48,
        firstMs: 9,
        warmMs: summarize([8, 49]),
      },
    },
    comparison: [
      {
        app: "guestbook",
        objects: 2,
        steady: [sample(counts(1, 2), 0)],
        steadyVerdict: { syncStatus: "Synced", drift: [], messages: [] },
        drifted: { ...sample(counts(1, 2, 2), 0), dryRuns: 1 },
        driftedVerdict: { syncStatus: "OutOfSync", drift: ["spec.replicas"], messages: [] },
        held: { ...sample(counts(1, 2, 2), 0), dryRuns: 1 },
        heldVerdict: { syncStatus: "OutOfSync", drift: [], messages: [] },
      },
    ],
    process: {
      cli: "functions/plumb.mjs",
      cases: [
        {
          name: "no-op: reconcile NS/NAME (guestbook)",
          command: "plumb reconcile",
          samples: [proc(210, 91), proc(230, 92), proc(220, 90)],
        },
        { name: "baseline: node -e 0", command: "node -e 0", samples: [proc(40, 40)] },
      ],
    },
    scale: {
      many: {
        apps: 1000,
        cli: "functions/plumb.mjs",
        process: figure,
        git: { fetch: 1, lsRefs: 1, other: 0 },
      },
      interval: {
        apps: 1000,
        intervalS: 60,
        tickS: 10,
        ticks: [],
        reconciled: 1000,
        writes: 0,
        totals: {
          wallMs: 10_700,
          cpuMs: 10_500,
          reads: 2020,
          git: { fetch: 6, lsRefs: 6, other: 12 },
        },
      },
      tick: {
        apps: 10_000,
        setupMs: 1,
        node: { ...tick, wallMs: 371, cpuMs: 79 },
        workerd: { ...tick, messages: 126 },
        errors: [],
      },
    },
    engines: {
      cli: {
        guestbook: [proc(310, 88)],
        podinfo: [proc(420, 97)],
        plain: [proc(400, 95)],
      },
    },
    flux: {
      version: "v1.9.6",
      binary: "dist/flux/kustomize-controller",
      peakMiB: 137,
      cases: [
        {
          name: "guestbook",
          label: "guestbook (plain manifests, 2 objects)",
          flux: [130, 140, 120].map((cpuMs) => ({
            cpuMs,
            wallMs: 420,
            idleCpuMs: 0,
            requests: { GET: 2, PATCH: 10, POST: 1 },
            artifactGets: 1,
          })),
          plumb: [{ ...proc(200, 80), requests: 4 }],
        },
      ],
    },
    hostile: [
      {
        input: "big-configmap",
        what: "a chart rendering one ConfigMap of 1,000,000 keys",
        exitCode: 1,
        reason: "not Ready: RenderFailed",
        message: "object over the 3145728-byte cap | rendered by helm",
        peakRssBytes: 153 * 1024 * 1024,
        ceilingBytes: 512 * 1024 * 1024,
        underCeiling: true,
        wallMs: 4000,
      },
    ],
    burst: [
      {
        apps: 1000,
        shards: 2,
        wallMs: 95_000,
        passes: 2,
        cpuMs: 60_000,
        peakMiB: [160, 170],
        requests: 12_000,
        requestsPerS: 126.3,
        throttled: 0,
        ready: 1000,
        objects: 4000,
        outcomes: {},
        errors: [],
      },
    ],
    targets: [],
    errors: [],
  };
  // The targets as bench/run.ts computes them, and a row another measurement adds.
  r.targets = [
    ...evaluateTargets(r),
    { target: "side by side with Flux: requests ≤ Flux's", measured: "0.38×", pass: true },
  ];
  return r;
}

/** The markdown table row whose first cell is `first`. */
const rowOf = (block: string, first: string) =>
  block.split("\n").find((l) => l.startsWith(`| ${first} |`));

describe("the README's generated cost block", () => {
  const r = fullResults();
  const block = costBlock(r, "bench/results/2026-12-03T14-05-09Z.json");

  it("names the results file, the run, the machine and the load average at its start and end", () => {
    const [first, , second] = block.split("\n");
    expect(first).toContain("from `bench/results/2026-12-03T14-05-09Z.json`");
    expect(first).toContain("one run of 2026-12-03 14:05:09 UTC, 60 min, commit 71f3366");
    expect(first).toContain(
      "Node v24.11.0, 2 × Test CPU @ 2.0GHz, 8.0 GiB, against a local control plane the benchmark started.",
    );
    expect(second).toBe(
      "Load average (1 / 5 / 15 min): 0.52 / 0.80 / 1.10 at the start, 2.25 / 1.50 / 1.25 at the end.",
    );
    // The kubeconfig's path is the machine's, not the README's.
    expect(block).not.toContain("/somewhere");
  });

  it("has a row for every target of the results, with PASS, MISS or not measured", () => {
    for (const t of r.targets) {
      const row = rowOf(block, t.target.replace(/\|/g, "\\|"));
      expect(row, t.target).toBeDefined();
      expect(row).toContain(t.measured.replace(/\|/g, "\\|"));
    }
    expect(rowOf(block, "CPU per no-op < 5 ms — guestbook (p50)")).toBe(
      "| CPU per no-op < 5 ms — guestbook (p50) | p50 12 ms (p95 13 ms, n=2) | MISS |",
    );
    expect(rowOf(block, "side by side with Flux: requests ≤ Flux's")).toBe(
      "| side by side with Flux: requests ≤ Flux's | 0.38× | PASS |",
    );
    expect(rowOf(block, "webhook → applied p50 < 0.5 s — guestbook, workerd")).toBe(
      "| webhook → applied p50 < 0.5 s — guestbook, workerd | not measured | not measured |",
    );
    const pass = r.targets.filter((t) => t.pass === true).length;
    const miss = r.targets.filter((t) => t.pass === false).length;
    const none = r.targets.filter((t) => t.pass === undefined).length;
    expect(block).toContain(`${pass} PASS, ${miss} MISS, ${none} not measured.`);
    expect(miss).toBeGreaterThan(0);
  });

  it("renders each section's figures from the results", () => {
    expect(rowOf(block, "bench-guestbook/guestbook (M=2, K=2)")).toBe(
      "| bench-guestbook/guestbook (M=2, K=2) | first sync, cold discovery | 9 | 4 | 2 | 11 | 0 | 2 |",
    );
    expect(block).toContain("first sync besides applies: GET App;");
    expect(rowOf(block, "guestbook")).toBe(
      "| guestbook | first sync | 2 | 117 ms / 141 ms | 20.0 ms / 25.0 ms | 7–9 | 0 | 0 |",
    );
    expect(block).toContain("ls-refs through the Git client 2.2 ms CPU (4.4 ms wall)");
    expect(rowOf(block, "no-op: reconcile NS/NAME (guestbook)")).toBe(
      "| no-op: reconcile NS/NAME (guestbook) | 3 | 220 ms | 210–230 ms | 91.0 MiB | 440 ms | Reconciled 3 |",
    );
    expect(block).toContain("Ratio tick ÷ serve: 7.78×");
    expect(rowOf(block, "Node, helper process")).toBe(
      "| Node, helper process | plumb-kustomize | 95.0 ms | 40.0 ms | 51.0 ms / 152 ms | helper peak RSS 28.00 MiB |",
    );
    expect(block).toContain("Overlay ÷ guestbook: 1.35× CPU; the engine's share");
    // A `|` in a condition's message stays inside its cell.
    expect(rowOf(block, "big-configmap: a chart rendering one ConfigMap of 1,000,000 keys")).toBe(
      "| big-configmap: a chart rendering one ConfigMap of 1,000,000 keys | not Ready: RenderFailed (exit 1) | 153.0 MiB | under 512.0 MiB | object over the 3145728-byte cap \\| rendered by helm |",
    );
    expect(rowOf(block, "1,000")).toBe(
      "| 1,000 | 2 | 95.0 s (1000/1000 Ready, 2 ticks) | 60.0 s | 160, 170 MiB | 126 | 0 |",
    );
    expect(block).toContain("so 4 shards finish in 9 min and 16 in 2 min, each ≤ 170 MiB");
    expect(rowOf(block, "Worker cron handler (workerd)")).toContain(
      "| 590 ms | 50.0 ms | 12.1 → 15.6 |",
    );
    // The model's Flux CPU is the measured p50 of the Flux section, not a constant.
    expect(rowOf(block, "CPU")).toContain("130 ms per reconcile");
    expect(rowOf(block, "guestbook (plain manifests, 2 objects), 3 reconciles")).toBe(
      "| guestbook (plain manifests, 2 objects), 3 reconciles | 130 ms | 13 (GET 2, PATCH 10, POST 1) | 200 ms (1 no-ops of 1) | 4 | 1.54× |",
    );
    expect(block).toContain("None: every phase of the run finished.");
  });

  it("says so for each section the run did not measure", () => {
    const only: Results = {
      ...fullResults(),
      requests: [],
      timings: [],
      cpuBreakdown: undefined,
      webhook: [],
      cron: [],
      comparison: [],
      burst: undefined,
      scale: undefined,
      engines: undefined,
      process: undefined,
      tickCost: undefined,
      renderNode: undefined,
      renderWorkerd: undefined,
      flux: undefined,
      errors: [{ phase: "burst: 1000 Apps", error: "timed out after 900 s\nstack" }],
      // As `--render-only` leaves them: no cluster was started.
      cluster: { kubeconfig: "", owned: false },
      durationMs: 46_000,
    };
    const b = costBlock(only, "bench/results/x.json");
    expect(b.split("\n")[0]).toContain("one run of 2026-12-03 14:05:09 UTC, 46 s,");
    expect(b.split("\n")[0]).toContain("8.0 GiB, without a cluster.");
    const section = (title: string) => {
      const at = b.indexOf(`#### ${title}`);
      expect(at, title).toBeGreaterThanOrEqual(0);
      const next = b.indexOf("\n#### ", at + 1);
      return b.slice(at, next < 0 ? undefined : next);
    };
    for (const title of [
      "API requests per run",
      "Time and CPU per reconcile",
      "One cron tick over N small Apps",
      "10,000 Apps",
      "Bursts of new Apps",
      "Render engines as a user pays them",
      "Flux's kustomize-controller beside plumb's no-op CLI runs",
    ])
      expect(section(title)).toContain(NOT_MEASURED);
    // The measured ones still carry their figures; a failed phase is listed.
    expect(section("Hostile inputs")).toContain("153.0 MiB");
    expect(section("Hostile inputs")).not.toContain(NOT_MEASURED);
    expect(section("Phases that failed")).toContain("- burst: 1000 Apps: timed out after 900 s");
    expect(b).not.toContain("stack");
  });
});

describe("writing the block into the README", () => {
  const readme = [
    "# plumb",
    "",
    "## What a reconcile costs",
    "",
    "Why things cost what they cost.",
    "",
    BEGIN,
    "old figures",
    END,
    "",
    "More prose.",
    "",
  ].join("\n");
  const block = costBlock(fullResults(), "bench/results/a.json");

  it("replaces what is between the markers and keeps the prose around them", () => {
    const out = replaceCostBlock(readme, block);
    expect(out).not.toContain("old figures");
    expect(
      out.startsWith("# plumb\n\n## What a reconcile costs\n\nWhy things cost what they cost.\n\n"),
    ).toBe(true);
    expect(out).toContain(`${BEGIN}\n\n${block}\n\n${END}\n\nMore prose.\n`);
  });

  it("gives the same README when run twice", () => {
    const once = replaceCostBlock(readme, block);
    expect(replaceCostBlock(once, costBlock(fullResults(), "bench/results/a.json"))).toBe(once);
  });

  it("refuses a README without the markers, or with two blocks", () => {
    expect(() => replaceCostBlock("# plumb\n", block)).toThrow(/no "<!-- bench:begin -->"/);
    expect(() => replaceCostBlock(`${END}\n${BEGIN}\n`, block)).toThrow(/no "<!-- bench:begin/);
    expect(() => replaceCostBlock(`${readme}\n${BEGIN}\n${END}\n`, block)).toThrow(/more than one/);
  });

  it("reads the newest results file by default", () => {
    expect(
      newestResults([
        ".gitkeep",
        "2026-12-03T14-05-09Z.json",
        "2026-12-04T01-00-00Z.json",
        "2026-11-30T23-59-59Z.json",
      ]),
    ).toBe("2026-12-04T01-00-00Z.json");
    expect(newestResults([".gitkeep"])).toBeUndefined();
  });
});
