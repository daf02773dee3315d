// The report and targets of bench/engines.ts (pure, from its results): a Kustomize overlay's
// no-op CLI run against guestbook's, and the engines under a CPU hog.
import { type ProcessSample, summary } from "./process-report.ts";
import { ms, percentile, table } from "./stats.ts";

const TARGET_RATIO = 1.5;

export interface EngineCliResult {
  guestbook: ProcessSample[];
  podinfo: ProcessSample[];
  /** The overlay's objects committed as plain manifests. */
  plain: ProcessSample[];
}

/** One fresh process that loaded an engine and rendered once (bench/engines-child.ts). */
export interface HogSample {
  ok: boolean;
  error?: string;
  loadMs?: number;
  renderMs?: number;
}

export interface EngineHogResult {
  hogs: number;
  cores: number;
  kustomize: { app: string; runs: ProcessSample[]; renders: HogSample[] };
  helm: { app: string; runs: ProcessSample[]; renders: HogSample[] };
}

/** A CLI run that reconciled (exit 0, outcome Reconciled). */
const succeeded = (s: ProcessSample) =>
  s.exit === 0 && Object.keys(s.outcomes).every((o) => o === "Reconciled");

const figures = (xs: number[]) =>
  xs.length ? `p50 ${ms(percentile(xs, 50))}, max ${ms(Math.max(...xs))}` : "none";

/** The section's lines. */
export function engineReport(
  r: { cli: EngineCliResult; hog?: EngineHogResult | undefined } | undefined,
): string[] {
  if (!r) return ["not measured"];
  const gb = summary(r.cli.guestbook);
  const pd = summary(r.cli.podinfo);
  const pl = summary(r.cli.plain);
  const row = (name: string, xs: ProcessSample[]) => {
    const m = summary(xs);
    const writes = xs.reduce((n, x) => n + x.writes, 0);
    return [name, ms(m.cpuMs), `${m.peakMiB.toFixed(1)} MiB`, ms(m.wallMs), xs.length, writes];
  };
  const lines = [
    table(
      [
        "no-op CLI run (plumb reconcile NS/NAME)",
        "CPU p50",
        "peak RSS p50",
        "wall p50",
        "runs",
        "writes",
      ],
      [
        row("guestbook (plain manifests, 2 objects)", r.cli.guestbook),
        row("podinfo dev overlay (Kustomize, 25 objects)", r.cli.podinfo),
        row("the overlay's 25 objects as plain manifests", r.cli.plain),
      ],
    ),
    `  Kustomize no-op CPU ratio (podinfo dev / guestbook, same run, alternated): ${(pd.cpuMs / gb.cpuMs).toFixed(2)}× (target ≤ ${TARGET_RATIO}×)`,
    `  the engine's share (overlay − the same objects as plain manifests): ${ms(pd.cpuMs - pl.cpuMs)} CPU`,
    "  CPU = user + system of the whole process, the engine helper included (the CLI reaps it before exiting);",
    "  peak RSS = the larger of plumb's and the helper's (getrusage reports the maximum, not the sum).",
  ];
  const h = r.hog;
  if (!h) return [...lines, "CPU hog: not measured"];
  const hogRow = (name: string, e: EngineHogResult["kustomize"]) => {
    const ok = e.renders.filter((x) => x.ok);
    return [
      `${name} (${e.app})`,
      `${e.runs.filter(succeeded).length} of ${e.runs.length}`,
      figures(e.runs.map((s) => s.wallMs)),
      `${ok.length} of ${e.renders.length}`,
      figures(ok.flatMap((x) => (x.renderMs === undefined ? [] : [x.renderMs]))),
      figures(ok.flatMap((x) => (x.loadMs === undefined ? [] : [x.loadMs]))),
    ];
  };
  lines.push(
    "",
    `Under a CPU hog (${h.hogs} × \`yes > /dev/null\` on ${h.cores} cores):`,
    table(
      ["engine", "CLI runs ok", "CLI wall", "cold renders ok", "render time", "engine load"],
      [hogRow("Kustomize", h.kustomize), hogRow("Helm", h.helm)],
    ),
    "  CLI runs: `plumb reconcile NS/NAME`, each a fresh process (engine loaded, overlay or chart rendered, compared);",
    "  cold renders: a fresh process loading the engine and rendering once; render time counts only the build.",
  );
  for (const e of [h.kustomize, h.helm]) {
    for (const s of e.runs.filter((x) => !succeeded(x))) {
      lines.push(`  ${e.app}: a CLI run failed: exit ${s.exit}, ${JSON.stringify(s.outcomes)}`);
    }
    for (const s of e.renders.filter((x) => !x.ok)) lines.push(`  ${e.app}: ${s.error}`);
  }
  return lines;
}

/** The section's rows of the Targets table. */
export function engineTargets(
  r: { cli: EngineCliResult; hog?: EngineHogResult | undefined } | undefined,
): Array<{ target: string; measured: string; pass: boolean | undefined }> {
  const ratioTarget = `Kustomize no-op CLI run ≤ ${TARGET_RATIO}× guestbook's CPU (podinfo dev overlay)`;
  const hogTarget = "under a CPU hog: 10 of 10 Kustomize and Helm CLI runs succeed";
  if (!r) {
    return [
      { target: ratioTarget, measured: "not measured", pass: undefined },
      { target: hogTarget, measured: "not measured", pass: undefined },
    ];
  }
  const gb = summary(r.cli.guestbook);
  const pd = summary(r.cli.podinfo);
  const ratio = pd.cpuMs / gb.cpuMs;
  const out = [
    {
      target: ratioTarget,
      measured: `${ratio.toFixed(2)}× (${ms(pd.cpuMs)} / ${ms(gb.cpuMs)}, medians of ${r.cli.podinfo.length})`,
      pass:
        r.cli.podinfo.every(succeeded) && r.cli.guestbook.every(succeeded) && ratio <= TARGET_RATIO,
    },
  ];
  const h = r.hog;
  if (!h) return [...out, { target: hogTarget, measured: "not measured", pass: undefined }];
  const k = h.kustomize.runs.filter(succeeded).length;
  const m = h.helm.runs.filter(succeeded).length;
  const renderMs = (e: EngineHogResult["kustomize"]) =>
    e.renders.flatMap((x) => (x.ok && x.renderMs !== undefined ? [x.renderMs] : []));
  out.push({
    target: hogTarget,
    measured: `Kustomize ${k}/${h.kustomize.runs.length}, Helm ${m}/${h.helm.runs.length}; render Kustomize ${figures(renderMs(h.kustomize))}, Helm ${figures(renderMs(h.helm))}`,
    pass: k === h.kustomize.runs.length && m === h.helm.runs.length && k >= 10 && m >= 10,
  });
  return out;
}
