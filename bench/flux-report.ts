// Flux's kustomize-controller side by side with plumb's no-op CLI runs (bench/flux.ts): the
// pure parts — the artifact's digest and the GitRepository status source-controller would write,
// reading a process's CPU from /proc/<pid>/stat and the controller's API requests from its
// metrics, and the report and targets of the section.
import { createHash } from "node:crypto";
import { type ProcessSample, summary } from "./process-report.ts";
import { ms, percentile, table } from "./stats.ts";

/** The kustomize-controller built by scripts/build-flux.sh (its Go module's version). */
export const FLUX_VERSION = "v1.9.6";

/** One requested no-op reconcile of a Kustomization, seen from outside the controller. */
export interface FluxSample {
  /**
   * The controller's CPU (utime + stime of the whole process, /proc/<pid>/stat) from the
   * `reconcile.fluxcd.io/requestedAt` annotation until `status.lastHandledReconcileAt` showed
   * it, plus a short settle for the Event it sends after its status patch; ms.
   */
  cpuMs: number;
  /** The wall time of that window, ms. */
  wallMs: number;
  /** The controller's CPU over an idle window of the same wall time right after, ms. */
  idleCpuMs: number;
  /** The controller's API requests in the window by method (its rest_client_requests_total). */
  requests: Record<string, number>;
  /** Downloads of the artifact in the window (the served .tar.gz). */
  artifactGets: number;
}

/** One workload: Flux's reconciles and plumb's no-op CLI runs, alternated. */
export interface FluxCase {
  name: string;
  /** What the workload is ("guestbook (plain manifests, 2 objects)"). */
  label: string;
  flux: FluxSample[];
  plumb: ProcessSample[];
}

export interface FluxResult {
  version: string;
  /** The controller's binary that ran. */
  binary: string;
  /** The controller's peak RSS (VmHWM) at the end, MiB. */
  peakMiB?: number | undefined;
  /** os.loadavg() (1, 5, 15 min) when the section started and when it ended. */
  loadAverage?: { before: number[]; after: number[] } | undefined;
  cases: FluxCase[];
}

/** A Flux artifact digest: `sha256:<hex>` of the archive's bytes (what the fetcher verifies). */
export function artifactDigest(bytes: Uint8Array): string {
  return `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
}

/**
 * The status of a GitRepository as source-controller writes it once it has stored an artifact
 * (source.toolkit.fluxcd.io/v1): `artifact` with url, revision (`<branch>@sha1:<commit>`),
 * digest, lastUpdateTime, path and size, and Ready=True. kustomize-controller reads only the
 * artifact (and the source's readiness for dependencies), then fetches `url` and checks
 * `digest`.
 * @param now the time written as lastUpdateTime and lastTransitionTime
 */
export function gitRepositoryStatus(a: {
  url: string;
  path: string;
  branch: string;
  commit: string;
  digest: string;
  size: number;
  generation: number;
  now: Date;
}): Record<string, unknown> {
  const revision = `${a.branch}@sha1:${a.commit}`;
  const at = a.now.toISOString().replace(/\.\d+Z$/, "Z");
  return {
    observedGeneration: a.generation,
    artifact: {
      path: a.path,
      url: a.url,
      revision,
      digest: a.digest,
      lastUpdateTime: at,
      size: a.size,
    },
    conditions: [
      {
        type: "Ready",
        status: "True",
        reason: "Succeeded",
        message: `stored artifact for revision '${revision}'`,
        lastTransitionTime: at,
        observedGeneration: a.generation,
      },
      {
        type: "ArtifactInStorage",
        status: "True",
        reason: "Succeeded",
        message: `stored artifact for revision '${revision}'`,
        lastTransitionTime: at,
        observedGeneration: a.generation,
      },
    ],
  };
}

/**
 * utime + stime of a process, in clock ticks, from the text of /proc/<pid>/stat (fields 14 and
 * 15, counted after the command name, which may hold spaces and parentheses; proc(5)).
 * @throws when the text is not a stat line
 */
export function procCpuTicks(stat: string): number {
  const close = stat.lastIndexOf(")");
  const fields = stat.slice(close + 2).split(" ");
  // fields[0] is field 3 (state): utime is field 14, stime field 15.
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  if (close < 0 || !Number.isFinite(utime) || !Number.isFinite(stime)) {
    throw new Error(`not a /proc/<pid>/stat line: ${stat.slice(0, 80)}`);
  }
  return utime + stime;
}

/**
 * The API requests a controller-runtime process has made, by HTTP method, from its Prometheus
 * metrics text (`rest_client_requests_total{code,host,method}`, client-go's metric).
 */
export function restClientRequests(metrics: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of metrics.split("\n")) {
    if (!line.startsWith("rest_client_requests_total{")) continue;
    const method = /method="([^"]*)"/.exec(line)?.[1] ?? "?";
    const value = Number(line.slice(line.lastIndexOf(" ") + 1));
    if (Number.isFinite(value)) out[method] = (out[method] ?? 0) + value;
  }
  return out;
}

/** after − before, per key (keys with no change left out). */
export function countsDelta(
  before: Record<string, number>,
  after: Record<string, number>,
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(after)) {
    const d = v - (before[k] ?? 0);
    if (d !== 0) out[k] = d;
  }
  return out;
}

const sum = (r: Record<string, number>) => Object.values(r).reduce((a, b) => a + b, 0);

/** A CLI run that was a no-op: exit 0, every outcome Reconciled, nothing written. */
const noop = (s: ProcessSample) =>
  s.exit === 0 && s.writes === 0 && Object.keys(s.outcomes).every((o) => o === "Reconciled");

/** Medians of one case: Flux's CPU per reconcile (idle subtracted), plumb's per no-op run. */
export function fluxFigures(c: FluxCase) {
  const net = c.flux.map((s) => Math.max(0, s.cpuMs - s.idleCpuMs));
  const plumbRuns = c.plumb.filter(noop);
  return {
    fluxCpuMs: percentile(net, 50),
    fluxGrossCpuMs: percentile(
      c.flux.map((s) => s.cpuMs),
      50,
    ),
    fluxIdleCpuMs: percentile(
      c.flux.map((s) => s.idleCpuMs),
      50,
    ),
    fluxWallMs: percentile(
      c.flux.map((s) => s.wallMs),
      50,
    ),
    fluxRequests: percentile(
      c.flux.map((s) => sum(s.requests)),
      50,
    ),
    plumbCpuMs: summary(plumbRuns).cpuMs,
    plumbRequests: percentile(
      plumbRuns.flatMap((s) => (s.requests === undefined ? [] : [s.requests])),
      50,
    ),
    plumbNoops: plumbRuns.length,
  };
}

/**
 * Flux's CPU per no-op reconcile of guestbook, ms (p50, idle subtracted), when the section ran:
 * the figure other sections compare with (the no-op CLI target, the monthly cost model).
 */
export function fluxCpuMs(r: FluxResult | undefined): number | undefined {
  const c = r?.cases.find((x) => x.name === "guestbook");
  if (!c || c.flux.length === 0) return undefined;
  const v = fluxFigures(c).fluxCpuMs;
  return Number.isFinite(v) ? v : undefined;
}

/** The section's lines. */
export function fluxReport(r: FluxResult | undefined): string[] {
  if (!r) return ["not measured"];
  // p50 per method over every sample (a sample without the method counts 0).
  const methods = (c: FluxCase) =>
    [...new Set(c.flux.flatMap((s) => Object.keys(s.requests)))]
      .sort()
      .map(
        (m) =>
          `${m} ${percentile(
            c.flux.map((s) => s.requests[m] ?? 0),
            50,
          )}`,
      )
      .join(", ");
  const rows = r.cases.map((c) => {
    const f = fluxFigures(c);
    return [
      c.label,
      ms(f.fluxCpuMs),
      ms(f.fluxGrossCpuMs),
      ms(f.fluxIdleCpuMs),
      ms(f.fluxWallMs),
      `${f.fluxRequests} (${methods(c)})`,
      c.flux.length,
      ms(f.plumbCpuMs),
      Number.isNaN(f.plumbRequests) ? "?" : f.plumbRequests,
      `${f.plumbNoops} of ${c.plumb.length}`,
      `${(f.plumbCpuMs / f.fluxCpuMs).toFixed(2)}×`,
    ];
  });
  const load = (xs: number[]) => xs.map((x) => x.toFixed(2)).join(", ");
  return [
    `Flux kustomize-controller ${r.version} (${r.binary}), one process, --concurrent=1; peak RSS ${r.peakMiB === undefined ? "not read" : `${r.peakMiB.toFixed(0)} MiB`}`,
    ...(r.loadAverage
      ? [`load average ${load(r.loadAverage.before)} before, ${load(r.loadAverage.after)} after`]
      : []),
    table(
      [
        "workload",
        "Flux CPU p50",
        "gross",
        "idle",
        "Flux wall",
        "Flux API requests p50",
        "n",
        "plumb CPU p50",
        "plumb API requests p50",
        "plumb no-ops",
        "plumb ÷ Flux",
      ],
      rows,
    ),
    "  Flux: a requested reconcile (reconcile.fluxcd.io/requestedAt) of a Kustomization that is already applied,",
    "  from the annotation to status.lastHandledReconcileAt (+250 ms for its Event); CPU = utime + stime of the",
    "  controller from /proc/<pid>/stat; Flux CPU = gross − idle, idle = the controller's CPU over the same wall",
    "  time with nothing to do, right after. Its source is a served artifact (.tar.gz over HTTP, digest checked),",
    "  named by a GitRepository whose status is written as source-controller would (source-controller not run).",
    "  API requests from the controller's rest_client_requests_total. plumb: a no-op `plumb reconcile NS/NAME`",
    "  CLI run of the same files, a whole process under /usr/bin/time, alternated with Flux's reconciles.",
  ];
}

/** The section's rows of the Targets table (issue-level goals: plumb's no-op ≤ Flux's). */
export function fluxTargets(
  r: FluxResult | undefined,
): Array<{ target: string; measured: string; pass: boolean | undefined }> {
  const goals = [
    { name: "podinfo-dev", target: "Kustomize no-op CLI run ≤ Flux's CPU per reconcile" },
    { name: "guestbook", target: "guestbook no-op CLI run ≤ Flux's CPU per reconcile" },
  ];
  return goals.map(({ name, target }) => {
    const c = r?.cases.find((x) => x.name === name);
    const full = `${target} (${c?.label ?? name}, kustomize-controller ${FLUX_VERSION}, same run)`;
    if (!c || c.flux.length === 0)
      return { target: full, measured: "not measured", pass: undefined };
    const f = fluxFigures(c);
    if (f.plumbNoops === 0) {
      return { target: full, measured: "no plumb run was a no-op", pass: false };
    }
    const left = c.plumb.length - f.plumbNoops;
    return {
      target: full,
      measured: `plumb ${ms(f.plumbCpuMs)}, Flux ${ms(f.fluxCpuMs)}: ratio ${(f.plumbCpuMs / f.fluxCpuMs).toFixed(2)}× (medians; n=${f.plumbNoops}/${c.flux.length})${left ? ` (${left} plumb runs failed or wrote: left out)` : ""}`,
      pass: f.plumbNoops * 2 >= c.plumb.length && f.plumbCpuMs <= f.fluxCpuMs,
    };
  });
}
