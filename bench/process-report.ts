// The report and targets of the whole-process measurements (bench/process.ts) and the Worker's
// cold start (bench/cold-start.ts): pure, from their results.
import { ms, percentile, table } from "./stats.ts";

const TARGET_CPU_MS = 200;
const TARGET_PEAK_MIB = 100;
/** The no-op run's CPU may also be at most this many times that of `node -e 0`. */
const NODE_RATIO = 4;
/** The name of the baseline case: Node starting and exiting. */
export const NODE_BASELINE = "baseline: node -e 0";

/** One process: CPU (user + system), peak RSS, wall time, exit code, outcomes of its lines. */
export interface ProcessSample {
  cpuMs: number;
  peakMiB: number;
  wallMs: number;
  exit: number;
  outcomes: Record<string, number>;
  /** API writes the runs reported (a no-op writes none). */
  writes: number;
  /** API requests of every verb the runs reported (absent in results of older runs). */
  requests?: number;
}

export interface ProcessCase {
  name: string;
  command: string;
  samples: ProcessSample[];
}

export interface ProcessResult {
  cli: string;
  cases: ProcessCase[];
}

export interface ColdStartResult {
  /** ms from spawning workerd to the first 200 from GET /healthz, per run. */
  plumbMs: number[];
  /** The same for an empty Worker (workerd's own start-up). */
  emptyMs: number[];
}

/** Medians of CPU, peak RSS and wall time. */
export function summary(samples: readonly ProcessSample[]) {
  const med = (f: (s: ProcessSample) => number) => percentile(samples.map(f), 50);
  return {
    cpuMs: med((s) => s.cpuMs),
    peakMiB: med((s) => s.peakMiB),
    wallMs: med((s) => s.wallMs),
  };
}

const range = (xs: number[], fmt: (x: number) => string) =>
  `${fmt(Math.min(...xs))}–${fmt(Math.max(...xs))}`;

/**
 * The whole-process (target 1) rows for the Targets table.
 * @param fluxCpuMs Flux's kustomize-controller CPU per no-op reconcile of guestbook, ms,
 *   measured in the same run (bench/flux.ts); undefined when that section did not run (the
 *   fixed-cost row then rests on the `node -e 0` ratio alone)
 */
export function processTargets(
  r: ProcessResult | undefined,
  fluxCpuMs?: number,
): Array<{ target: string; measured: string; pass: boolean | undefined }> {
  const noop = r?.cases.find((c) => c.name.startsWith("no-op"));
  if (!noop) {
    return [
      {
        target: `no-op CLI run ≤ ${TARGET_CPU_MS} ms CPU (whole process)`,
        measured: "not measured",
        pass: undefined,
      },
      {
        target: `no-op CLI run ≤ ${TARGET_PEAK_MIB} MiB peak RSS (whole process)`,
        measured: "not measured",
        pass: undefined,
      },
    ];
  }
  // Only runs that were no-ops count (a health change recorded in status is a write); the
  // target is missed when fewer than half of the runs were.
  const noops = noop.samples.filter((x) => x.exit === 0 && x.writes === 0);
  const enough = noops.length * 2 >= noop.samples.length;
  const s = summary(noops);
  const left = noop.samples.length - noops.length;
  const note =
    left === 0 ? "" : ` (${left} of ${noop.samples.length} runs failed or wrote: left out)`;
  const figure = (value: string, xs: number[], digits: number, unit: string) =>
    noops.length === 0
      ? `no run was a no-op${note}`
      : `median ${value} (${range(xs, (x) => x.toFixed(digits))} ${unit}, n=${noops.length})${note}`;
  const base = r?.cases.find((c) => c.name === NODE_BASELINE);
  const baseCpu = base ? summary(base.samples).cpuMs : undefined;
  const flux = fluxCpuMs === undefined ? "Flux not measured" : `Flux ${fluxCpuMs.toFixed(0)} ms`;
  const fixed = {
    target: `no-op CLI run ≤ Flux kustomize-controller's CPU per reconcile (measured) or ≤ ${NODE_RATIO}× \`node -e 0\` — guestbook`,
    measured:
      noops.length === 0
        ? `no run was a no-op${note}`
        : `plumb ${s.cpuMs.toFixed(0)} ms, ${flux}, node -e 0 ${baseCpu === undefined ? "not measured" : `${baseCpu.toFixed(0)} ms, ratio ${(s.cpuMs / baseCpu).toFixed(2)}×`}${note}`,
    pass:
      enough &&
      ((fluxCpuMs !== undefined && s.cpuMs <= fluxCpuMs) ||
        (baseCpu !== undefined && s.cpuMs <= NODE_RATIO * baseCpu)),
  };
  return [
    fixed,
    {
      target: `no-op CLI run ≤ ${TARGET_CPU_MS} ms CPU (whole process) — guestbook`,
      measured: figure(
        `${s.cpuMs.toFixed(0)} ms`,
        noops.map((x) => x.cpuMs),
        0,
        "ms",
      ),
      pass: enough && s.cpuMs <= TARGET_CPU_MS,
    },
    {
      target: `no-op CLI run ≤ ${TARGET_PEAK_MIB} MiB peak RSS (whole process) — guestbook`,
      measured: figure(
        `${s.peakMiB.toFixed(1)} MiB`,
        noops.map((x) => x.peakMiB),
        1,
        "MiB",
      ),
      pass: enough && s.peakMiB <= TARGET_PEAK_MIB,
    },
  ];
}

/** The report section: every case, medians and outcomes. */
export function processReport(r: ProcessResult | undefined): string[] {
  if (!r) return ["not measured"];
  return [
    `CLI: ${r.cli} (Node ${process.version}); /usr/bin/time, user + system CPU and peak RSS of the process`,
    table(
      ["run", "n", "CPU p50", "CPU min–max", "peak RSS p50", "wall p50", "outcomes"],
      r.cases.map((c) => {
        const s = summary(c.samples);
        const outcomes: Record<string, number> = {};
        for (const x of c.samples)
          for (const [o, n] of Object.entries(x.outcomes)) outcomes[o] = (outcomes[o] ?? 0) + n;
        return [
          c.name,
          c.samples.length,
          ms(s.cpuMs),
          range(
            c.samples.map((x) => x.cpuMs),
            (x) => x.toFixed(0),
          ),
          `${s.peakMiB.toFixed(1)} MiB`,
          ms(s.wallMs),
          Object.entries(outcomes)
            .map(([o, n]) => `${o} ${n}`)
            .join(", "),
        ];
      }),
    ),
  ];
}

/** "plumb 412 ms (empty Worker 180 ms; median of 5)". */
export function coldStartLine(r: ColdStartResult | undefined): string {
  if (!r) return "not measured";
  const p = percentile(r.plumbMs, 50);
  const e = percentile(r.emptyMs, 50);
  return `${ms(p)} to the first answer (an empty Worker: ${ms(e)}; plumb's share ${ms(p - e)}; median of ${r.plumbMs.length})`;
}
