// Measurement 6: peak memory of one first-sync reconcile of the 50-object App, in a child process.
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { generated50 } from "./fixtures.ts";
import type { BenchGit } from "./git.ts";
import type { Kube } from "./kube.ts";

const run = promisify(execFile);

export interface MemoryResult {
  app: string;
  outcome: string;
  wallMs: number;
  samples: number;
  /** process.resourceUsage().maxRSS after the run minus before it (bytes). */
  maxRssDelta: number;
  /** Sampled peak heapUsed minus the baseline after start-up and GC (bytes). */
  heapPeakDelta: number;
  /** Sampled peak RSS minus the baseline RSS (bytes). */
  rssPeakDelta: number;
  baseline: { rss: number; heapUsed: number; maxRSS: number };
  peak: { heapUsed: number; rss: number; maxRSS: number };
  error?: string;
}

export async function memoryPeak(
  kube: Kube,
  git: BenchGit,
  kubeconfig: string,
): Promise<MemoryResult> {
  const ns = "bench-memory";
  const repo = await git.createRepo("memory", generated50.files());
  await kube.namespace(ns);
  await kube.createApp(ns, "generated-50", {
    source: { git: { url: repo.url, ref: "main" } },
    interval: "1h",
  });
  const { stdout } = await run(
    process.execPath,
    ["--expose-gc", join(import.meta.dirname, "memory-child.ts"), kubeconfig, ns, "generated-50"],
    { timeout: 120_000, maxBuffer: 1024 * 1024 },
  );
  const m = JSON.parse(stdout.trim().split("\n").pop()!) as Omit<
    MemoryResult,
    "app" | "maxRssDelta" | "heapPeakDelta" | "rssPeakDelta"
  >;
  return {
    ...m,
    app: `${ns}/generated-50`,
    maxRssDelta: m.peak.maxRSS - m.baseline.maxRSS,
    heapPeakDelta: m.peak.heapUsed - m.baseline.heapUsed,
    rssPeakDelta: m.peak.rss - m.baseline.rss,
  };
}
