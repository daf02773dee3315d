import { describe, expect, it } from "vitest";
import {
  artifactDigest,
  countsDelta,
  type FluxCase,
  type FluxResult,
  type FluxSample,
  fluxCpuMs,
  fluxFigures,
  fluxReport,
  fluxTargets,
  gitRepositoryStatus,
  procCpuTicks,
  restClientRequests,
} from "./flux-report.ts";
import { type ProcessSample, processTargets } from "./process-report.ts";
import { costModel, type ScaleResults, scaleReport } from "./scale-report.ts";

const flux = (cpuMs: number, idleCpuMs: number, get = 9): FluxSample => ({
  cpuMs,
  wallMs: 400,
  idleCpuMs,
  requests: { GET: get, PATCH: 3, POST: 1 },
  artifactGets: 1,
});
const plumb = (cpuMs: number, writes = 0): ProcessSample => ({
  cpuMs,
  peakMiB: 80,
  wallMs: 600,
  exit: 0,
  outcomes: { Reconciled: 1 },
  writes,
  requests: 3 + writes,
});
const result = (cases: FluxCase[]): FluxResult => ({
  version: "v1.9.6",
  binary: "dist/flux/kustomize-controller",
  peakMiB: 61.5,
  loadAverage: { before: [1.5, 1, 0.5], after: [2, 1.25, 0.5] },
  cases,
});

describe("flux: what stands in for source-controller", () => {
  it("the artifact digest is sha256 of the archive's bytes, prefixed as Flux writes it", () => {
    // sha256("abc"), FIPS 180-2 appendix B.1.
    expect(artifactDigest(new TextEncoder().encode("abc"))).toBe(
      "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    );
  });

  it("the GitRepository status carries the artifact and Ready=True as source-controller's", () => {
    const commit = "0123456789abcdef0123456789abcdef01234567";
    const s = gitRepositoryStatus({
      url: "http://127.0.0.1:8080/gitrepository/ns/gb/x.tar.gz",
      path: "gitrepository/ns/gb/x.tar.gz",
      branch: "main",
      commit,
      digest: "sha256:ab",
      size: 512,
      generation: 1,
      now: new Date("2026-01-02T03:04:05.678Z"),
    });
    expect(s["artifact"]).toEqual({
      path: "gitrepository/ns/gb/x.tar.gz",
      url: "http://127.0.0.1:8080/gitrepository/ns/gb/x.tar.gz",
      revision: `main@sha1:${commit}`,
      digest: "sha256:ab",
      lastUpdateTime: "2026-01-02T03:04:05Z",
      size: 512,
    });
    expect(s["observedGeneration"]).toBe(1);
    expect(s["conditions"]).toContainEqual(
      expect.objectContaining({ type: "Ready", status: "True", reason: "Succeeded" }),
    );
  });
});

describe("flux: reading the controller from outside", () => {
  it("utime + stime from /proc/<pid>/stat, a command name with spaces and parentheses", () => {
    const stat =
      "4242 (kustomize (ctl) x) S 1 4242 4242 0 -1 4194560 9812 0 3 0 731 152 0 0 20 0 14 0 8812 1400000000 15000 18446744073709551615";
    expect(procCpuTicks(stat)).toBe(731 + 152);
    expect(() => procCpuTicks("garbage")).toThrow(/not a \/proc/);
  });

  it("API requests by method from client-go's rest_client_requests_total", () => {
    const metrics = [
      "# HELP rest_client_requests_total Number of HTTP requests, partitioned by status code, method, and host.",
      "# TYPE rest_client_requests_total counter",
      'rest_client_requests_total{code="200",host="127.0.0.1:6443",method="GET"} 41',
      'rest_client_requests_total{code="404",host="127.0.0.1:6443",method="GET"} 2',
      'rest_client_requests_total{code="200",host="127.0.0.1:6443",method="PATCH"} 7',
      'rest_client_requests_total{code="201",host="127.0.0.1:6443",method="POST"} 1',
      'rest_client_request_duration_seconds_bucket{host="127.0.0.1:6443",verb="GET",le="0.005"} 40',
    ].join("\n");
    const before = restClientRequests(metrics);
    expect(before).toEqual({ GET: 43, PATCH: 7, POST: 1 });
    expect(countsDelta(before, { GET: 50, PATCH: 7, POST: 2, DELETE: 0 })).toEqual({
      GET: 7,
      POST: 1,
    });
  });
});

describe("flux: the side by side's figures and targets", () => {
  const gb: FluxCase = {
    name: "guestbook",
    label: "guestbook (plain manifests, 2 objects)",
    flux: [flux(120, 10), flux(100, 0), flux(140, 20)],
    plumb: [plumb(90), plumb(300, 1), plumb(95), plumb(100)],
  };
  const kz: FluxCase = {
    name: "podinfo-dev",
    label: "podinfo dev overlay (Kustomize, 25 objects)",
    flux: [flux(200, 0), flux(210, 10), flux(190, 0)],
    plumb: [plumb(400), plumb(420), plumb(410)],
  };

  it("Flux's CPU per reconcile is the p50 of gross − idle; plumb's counts only no-op runs", () => {
    const f = fluxFigures(gb);
    expect(f.fluxCpuMs).toBe(110); // 110, 100, 120
    expect(f.fluxGrossCpuMs).toBe(120);
    expect(f.fluxIdleCpuMs).toBe(10);
    expect(f.fluxRequests).toBe(13);
    expect(f.plumbCpuMs).toBe(95); // the run that wrote is left out
    expect(f.plumbNoops).toBe(3);
    expect(f.plumbRequests).toBe(3);
    expect(fluxCpuMs(result([gb, kz]))).toBe(110);
    expect(fluxCpuMs(undefined)).toBeUndefined();
  });

  it("PASS when plumb's no-op is at most Flux's reconcile, MISS above, with the ratio", () => {
    const [kustomize, guestbook] = fluxTargets(result([gb, kz]));
    expect(kustomize?.target).toContain("Kustomize no-op CLI run ≤ Flux's CPU per reconcile");
    expect(kustomize?.measured).toContain("plumb 410 ms, Flux 200 ms: ratio 2.05×");
    expect(kustomize?.pass).toBe(false);
    expect(guestbook?.measured).toContain("plumb 95.0 ms, Flux 110 ms: ratio 0.86×");
    expect(guestbook?.measured).toContain("1 plumb runs failed or wrote: left out");
    expect(guestbook?.pass).toBe(true);
  });

  it("not measured when the section did not run", () => {
    const rows = fluxTargets(undefined);
    expect(rows).toHaveLength(2);
    for (const r of rows) {
      expect(r.measured).toBe("not measured");
      expect(r.pass).toBeUndefined();
    }
    expect(fluxReport(undefined)).toEqual(["not measured"]);
  });

  it("the report prints per-method request medians and the ratio per workload", () => {
    const lines = fluxReport(result([gb, kz])).join("\n");
    expect(lines).toContain("kustomize-controller v1.9.6");
    expect(lines).toContain("peak RSS 62 MiB");
    expect(lines).toContain("load average 1.50, 1.00, 0.50 before, 2.00, 1.25, 0.50 after");
    expect(lines).toContain("13 (GET 9, PATCH 3, POST 1)");
    expect(lines).toContain("0.86×");
  });

  it("the whole-process target compares with the measured Flux figure, not a constant", () => {
    const process = {
      cli: "functions/plumb.mjs",
      cases: [
        { name: "no-op: reconcile NS/NAME (guestbook)", command: "", samples: [plumb(150)] },
        { name: "baseline: node -e 0", command: "", samples: [plumb(30)] },
      ],
    };
    const fixed = (flux?: number) => processTargets(process, flux)[0]!;
    expect(fixed(160).pass).toBe(true);
    expect(fixed(160).measured).toContain("Flux 160 ms");
    expect(fixed(140).pass).toBe(false); // 150 > 140 and 150 > 4 × 30
    expect(fixed(undefined).measured).toContain("Flux not measured");
    expect(fixed(undefined).pass).toBe(false);
  });
});

describe("flux: the monthly cost model takes Flux's measured figure", () => {
  // A steady interval and the Node tick, as bench/scale.ts and bench/scale-tick.ts record them.
  const git = { fetch: 6, lsRefs: 6, other: 12 };
  const scale: ScaleResults = {
    interval: {
      apps: 100,
      intervalS: 60,
      tickS: 10,
      ticks: [],
      reconciled: 100,
      writes: 0,
      totals: { wallMs: 900, cpuMs: 400, reads: 200, git },
    },
    tick: {
      apps: 10_000,
      setupMs: 1000,
      errors: [],
      node: {
        wallMs: 371,
        cpuMs: 50,
        heapPeakMiB: 48,
        heapBaseMiB: 42,
        requests: 25,
        gitRequests: 20,
        due: 3000,
        listed: 10_000,
        pages: 25,
        sources: 13,
      },
    },
  };

  it("10,000 Apps every 5 min at 100 ms per reconcile: 2,400 CPU-hours a month", () => {
    // 10,000 / 300 s × 0.1 s × 30 days (2,592,000 s) / 3,600.
    expect(costModel(scale, { cpuMs: 100 })?.fluxCpuHoursPerMonth).toBeCloseTo(2400, 6);
    const line = scaleReport(scale, { cpuMs: 100, peakMiB: 137.4 }).find((l) =>
      l.includes("Flux (kustomize-controller"),
    );
    expect(line).toContain("100 ms CPU per no-op reconcile of guestbook, measured in this run");
    expect(line).toContain("137 MiB peak RSS");
    expect(line).toContain("2400 CPU-hours/month");
  });

  it("without the section: no Flux figure, and the report says it was not measured", () => {
    expect(costModel(scale)?.fluxCpuHoursPerMonth).toBeUndefined();
    expect(scaleReport(scale, { cpuMs: undefined }).join("\n")).toContain(
      "Flux (kustomize-controller): not measured in this run",
    );
  });
});
