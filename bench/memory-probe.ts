// The memory of a first sync in one process, A/B: `node bench/memory-probe.ts N [ROUNDS]`.
// Each run gets a fresh namespace of N Apps of Flux's shape (bench/burst.ts, its own repository)
// and one `plumb reconcile --all` process syncs them all (one shard), under
// bench/memory-sampler.cjs. The CLIs alternate within each round, so load affects them alike:
// PLUMB_PROBE_CLIS="before=/path/to/functions/plumb.mjs,after=functions/plumb.mjs" (default:
// this checkout's bundle; `label=path|--node-flag ...` adds Node options to that CLI's runs). Prints, per run: peak RSS (/usr/bin/time), CPU, wall, the peaks of
// heapTotal/heapUsed/external/arrayBuffers, and the outcomes; then the medians per CLI.
// PLUMB_PROBE_OUT=DIR keeps each run's memoryUsage() samples there (<namespace>.memory.json),
// and with PLUMB_PROBE_HEAP_PROFILE=1 its sampling heap profile (<namespace>.heapprofile, which
// bench/heap-profile.ts reads). Uses $KUBECONFIG's cluster.
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fluxShapeFiles } from "./burst.ts";
import { startBenchGit } from "./git.ts";
import { Kube, pool, ROOT } from "./kube.ts";
import { timedCli } from "./scale-process.ts";

const apps = Number(process.argv[2] ?? 100);
const rounds = Number(process.argv[3] ?? 1);
const kubeconfig = process.env["KUBECONFIG"];
if (!kubeconfig)
  throw new Error("set KUBECONFIG to a running cluster (test/cluster/cluster.sh start)");
const clis = (process.env["PLUMB_PROBE_CLIS"] ?? `this=${join(ROOT, "functions/plumb.mjs")}`)
  .split(",")
  .map((s) => {
    const eq = s.indexOf("=");
    const [path, flags = ""] = s.slice(eq + 1).split("|");
    return { label: s.slice(0, eq), path: resolve(path!), flags };
  });
const outDir = process.env["PLUMB_PROBE_OUT"];
if (outDir) mkdirSync(outDir, { recursive: true });
const heapProfile = outDir !== undefined && process.env["PLUMB_PROBE_HEAP_PROFILE"] === "1";
const sampler = join(import.meta.dirname, "memory-sampler.cjs");

const kube = new Kube(kubeconfig);
await kube.installCrd();
const git = await startBenchGit();
// Built once before the first measured run, so no run pays the bundle's build.
for (const c of clis) await timedCli(c.path, ["--help"]);

interface Row {
  cli: string;
  round: number;
  peakMiB: number;
  cpuMs: number;
  wallMs: number;
  heapTotalMiB: number;
  heapUsedMiB: number;
  externalMiB: number;
  arrayBuffersMiB: number;
  outcomes: Record<string, number>;
  requests: number;
  errors: string[];
}
const rows: Row[] = [];
const mib = (b: number) => b / 1048576;
const tag = Date.now().toString(36);
for (let round = 0; round < rounds; round++) {
  for (const c of clis) {
    const ns = `mem-${tag}-${round}-${c.label}`.slice(0, 60);
    const repo = await git.createRepo(ns, fluxShapeFiles(apps, ns));
    await kube.namespace(ns);
    await pool(
      Array.from({ length: apps }, (_, i) => i),
      16,
      (i) =>
        kube.createApp(ns, `podinfo-${i}`, {
          source: { git: { url: repo.url, ref: "main", path: `c/${i}` } },
          interval: "60m",
        }),
    );
    const dir = mkdtempSync(join(tmpdir(), "plumb-mem-"));
    const out = join(outDir ?? dir, `${ns}.memory.json`);
    const env: Record<string, string> = {
      NODE_OPTIONS: `${process.env["PLUMB_PROBE_NODE_OPTIONS"] ?? ""} ${c.flags} --require ${sampler}`,
      PLUMB_PROBE_MEMORY_OUT: out,
    };
    if (heapProfile) env["PLUMB_PROBE_HEAP_PROFILE"] = join(outDir, `${ns}.heapprofile`);
    const fig = await timedCli(
      c.path,
      ["reconcile", "--all", "--namespace", ns, "--kubeconfig", kubeconfig],
      env,
    );
    const m = JSON.parse(readFileSync(out, "utf8")) as {
      peak: Record<"heapTotal" | "heapUsed" | "external" | "arrayBuffers", number>;
    };
    rmSync(dir, { recursive: true, force: true });
    const row: Row = {
      cli: c.label,
      round,
      peakMiB: fig.peakMiB,
      cpuMs: fig.cpuMs,
      wallMs: fig.wallMs,
      heapTotalMiB: mib(m.peak.heapTotal),
      heapUsedMiB: mib(m.peak.heapUsed),
      externalMiB: mib(m.peak.external),
      arrayBuffersMiB: mib(m.peak.arrayBuffers),
      outcomes: fig.outcomes,
      requests: fig.reads + fig.writes,
      errors: fig.errors,
    };
    rows.push(row);
    console.log(
      `${c.label} round ${round}: peak ${row.peakMiB.toFixed(0)} MiB, CPU ${(row.cpuMs / 1000).toFixed(1)} s, wall ${(row.wallMs / 1000).toFixed(1)} s, heapTotal ${row.heapTotalMiB.toFixed(0)}, heapUsed ${row.heapUsedMiB.toFixed(0)}, external ${row.externalMiB.toFixed(0)}, arrayBuffers ${row.arrayBuffersMiB.toFixed(0)} MiB, requests ${row.requests}, ${JSON.stringify(row.outcomes)}${row.errors.length ? ` errors: ${row.errors.join(" | ").slice(0, 300)}` : ""}`,
    );
    // The next run's cluster should not carry this one's objects: the Apps' finalizers are
    // removed first, so the namespace's deletion does not wait on a reconcile.
    await pool(await kube.listApps(ns), 8, (a) =>
      kube.api(
        "PATCH",
        `/apis/plumb.dev/v1alpha1/namespaces/${ns}/apps/${a.metadata.name}`,
        { metadata: { finalizers: null } },
        "application/merge-patch+json",
        [404],
      ),
    );
    await kube.api("DELETE", `/api/v1/namespaces/${ns}`, undefined, undefined, [404, 409]);
  }
}
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
for (const c of clis) {
  const r = rows.filter((x) => x.cli === c.label);
  console.log(
    `median ${c.label} (${r.length} runs, ${apps} Apps): peak ${median(r.map((x) => x.peakMiB)).toFixed(0)} MiB, CPU ${(median(r.map((x) => x.cpuMs)) / 1000).toFixed(1)} s, wall ${(median(r.map((x) => x.wallMs)) / 1000).toFixed(1)} s, heapTotal ${median(r.map((x) => x.heapTotalMiB)).toFixed(0)}, external ${median(r.map((x) => x.externalMiB)).toFixed(0)} MiB`,
  );
}
console.log(JSON.stringify({ apps, rounds, rows }));
await git.stop();
process.exit(0);
