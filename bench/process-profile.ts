// Where the CPU of a no-op CLI run goes: runs `plumb reconcile NS/NAME` of guestbook (settled, as
// bench/process.ts does) under `node --cpu-prof` and sums each profile's self time by what the
// code belongs to: Node's start-up and module loader, its TLS/HTTP/stream code, each package in
// the CLI bundle (mapped back through esbuild's per-module `// path` comments), plumb's own
// code, the garbage collector, and "(program)" (V8 itself: parsing, compiling, the runtime).
// The CPU of the whole process (/usr/bin/time) is printed beside it: the profiler starts after
// Node's bootstrap and misses helper threads, so the two differ by that much.
// Standalone: `node bench/process-profile.ts [runs]` (uses $KUBECONFIG, else starts a control
// plane); the profiles are kept in the directory it prints.
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { guestbook } from "./fixtures.ts";
import { benchCli, timeProcess } from "./process.ts";
import { ms } from "./stats.ts";

const run = promisify(execFile);

/** One node of a V8 .cpuprofile (the fields used here). */
interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

/** A V8 .cpuprofile: nodes, the node of each sample and the µs before it. */
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/**
 * The module of each line of a bundle file: esbuild (without minification) opens each input's
 * code with a `// <path>` comment line. Returns a lookup from a 0-based line to that path.
 */
export function bundleModules(source: string): (line: number) => string {
  const starts: { line: number; path: string }[] = [];
  const lines = source.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const m = /^\/\/ ((?:node_modules|src|functions|scripts)\/\S+|node-builtin:\S+)$/.exec(
      lines[i]!,
    );
    if (m) starts.push({ line: i, path: m[1]! });
  }
  return (line) => {
    let lo = 0;
    let hi = starts.length - 1;
    let found = "bundle (glue)";
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (starts[mid]!.line <= line) {
        found = starts[mid]!.path;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found;
  };
}

const PACKAGE_GROUPS: Record<string, string> = {
  "isomorphic-git": "isomorphic-git",
  pako: "pako",
  "async-lock": "isomorphic-git",
  "sha.js": "isomorphic-git",
  diff3: "isomorphic-git",
  pify: "isomorphic-git",
  "clean-git-ref": "isomorphic-git",
  "crc-32": "isomorphic-git",
  ignore: "isomorphic-git",
  minimisted: "isomorphic-git",
  "simple-get": "isomorphic-git",
  memfs: "memfs",
  "tree-dump": "memfs",
  thingies: "memfs",
  "@jsonjoy.com": "memfs",
  tslib: "memfs",
  zod: "zod",
  yaml: "YAML",
};

/**
 * The group a profile node's self time counts for: a Node built-in's area, a package (some
 * folded into the library that brings them), plumb's own code by top directory, or V8's
 * pseudo-nodes as they are.
 */
export function groupOf(
  url: string,
  fn: string,
  moduleAt: (url: string, line: number) => string,
  line: number,
): string {
  if (url === "") {
    if (fn === "(garbage collector)") return "GC";
    if (fn === "(program)") return "(program): V8 parse/compile/runtime";
    if (fn === "(idle)") return "(idle)";
    return `V8 ${fn}`;
  }
  if (url.startsWith("node:")) {
    const p = url.slice(5);
    if (/^internal\/(modules|bootstrap|main|process\/pre_execution|vm|source_map)/.test(p))
      return "Node start-up + module loader";
    if (
      /(tls|_tls|https?|_http|net|stream|crypto|dns|undici|webstreams|streams|url|buffer|zlib)/.test(
        p,
      )
    )
      return "Node TLS/HTTP/net/streams/crypto";
    return "Node other";
  }
  const path = url.startsWith("file://") || url.startsWith("/") ? moduleAt(url, line) : url;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path)?.[1];
  if (pkg) return PACKAGE_GROUPS[pkg] ?? PACKAGE_GROUPS[pkg.split("/")[0]!] ?? `pkg ${pkg}`;
  if (path.startsWith("node-builtin:")) return "Node TLS/HTTP/net/streams/crypto";
  const own = /^(src\/[^/]+|functions|scripts)/.exec(path)?.[1];
  if (own) return `plumb ${own}`;
  return path.includes("/dist/cli/") ? "bundle (glue)" : path;
}

/** Self time (ms) by group, summed over profiles, without "(idle)". */
export function summarise(
  profiles: CpuProfile[],
  moduleAt: (url: string, line: number) => string,
): Map<string, number> {
  const by = new Map<string, number>();
  for (const p of profiles) {
    const group = new Map<number, string>();
    for (const n of p.nodes) {
      group.set(
        n.id,
        groupOf(n.callFrame.url, n.callFrame.functionName, moduleAt, n.callFrame.lineNumber),
      );
    }
    for (let i = 0; i < p.samples.length; i++) {
      const g = group.get(p.samples[i]!) ?? "?";
      if (g === "(idle)") continue;
      by.set(g, (by.get(g) ?? 0) + (p.timeDeltas[i] ?? 0) / 1000);
    }
  }
  return by;
}

/** The functions with the most self time (ms), summed over profiles. */
function hottest(
  profiles: CpuProfile[],
  moduleAt: (url: string, line: number) => string,
  n: number,
) {
  const by = new Map<string, number>();
  for (const p of profiles) {
    const name = new Map<number, string>();
    for (const x of p.nodes) {
      const { url, functionName, lineNumber } = x.callFrame;
      const where =
        url.startsWith("file://") || url.startsWith("/") ? moduleAt(url, lineNumber) : url;
      name.set(x.id, `${functionName || "(anonymous)"} ${where}`);
    }
    for (let i = 0; i < p.samples.length; i++) {
      const k = name.get(p.samples[i]!) ?? "?";
      if (k.startsWith("(idle)")) continue;
      by.set(k, (by.get(k) ?? 0) + (p.timeDeltas[i] ?? 0) / 1000);
    }
  }
  return [...by].sort((a, b) => b[1] - a[1]).slice(0, n);
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  const runs = Number(process.argv.find((a) => /^\d+$/.test(a)) ?? 5);
  const { Kube, ROOT, startCluster } = await import("./kube.ts");
  const { startBenchGit } = await import("./git.ts");
  const log = (s: string) => process.stderr.write(`${s}\n`);
  const cluster = startCluster(log);
  const git = await startBenchGit();
  const ns = `bench-prof-${Date.now().toString(36)}`;
  try {
    const kube = new Kube(cluster.kubeconfig);
    await kube.installCrd();
    const cli = benchCli(ROOT);
    const k = ["--kubeconfig", cluster.kubeconfig];
    const repo = await git.createRepo(ns, guestbook.files());
    await kube.namespace(ns);
    await kube.createApp(ns, "guestbook", {
      source: { git: { url: repo.url, ref: "main" } },
      interval: "1h",
    });
    const target = `${ns}/guestbook`;
    for (let i = 0, quiet = 0; i < 30 && quiet < 3; i++) {
      const s = await timeProcess(cli, ["reconcile", target, ...k]);
      quiet = s.exit === 0 && s.writes === 0 ? quiet + 1 : 0;
      if (quiet < 3) await new Promise((r) => setTimeout(r, 300));
    }
    if (process.argv.includes("--hold")) {
      // For experiments by hand: the settled App stays, with its Git server, until killed.
      console.log(`node ${cli} reconcile ${target} ${k.join(" ")}`);
      await new Promise(() => undefined);
    }
    const dir = mkdtempSync(join(tmpdir(), "plumb-cpu-prof-"));
    const cpu: number[] = [];
    for (let i = 0; i < runs; i++) {
      const s = await timeProcess(cli, ["reconcile", target, ...k], {
        NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${dir} --cpu-prof-interval=200`,
      });
      if (s.exit !== 0 || s.writes !== 0)
        throw new Error(`run ${i}: exit ${s.exit}, ${s.writes} writes`);
      cpu.push(s.cpuMs);
    }
    const base: number[] = [];
    for (let i = 0; i < runs; i++) base.push((await timeProcess("-e", ["0"])).cpuMs);
    const profiles = readdirSync(dir)
      .filter((f) => f.endsWith(".cpuprofile"))
      .map((f) => JSON.parse(readFileSync(join(dir, f), "utf8")) as CpuProfile);
    const bundles = new Map<string, (line: number) => string>();
    const moduleAt = (url: string, line: number) => {
      let m = bundles.get(url);
      if (!m) {
        // A file URL (an ES module), or a plain path (the CommonJS bundle run by vm.Script).
        const file = url.startsWith("/") ? url : new URL(url).pathname;
        m = existsSync(file) ? bundleModules(readFileSync(file, "utf8")) : () => file;
        bundles.set(url, m);
      }
      return m(line);
    };
    const by = summarise(profiles, moduleAt);
    const total = [...by.values()].reduce((a, b) => a + b, 0);
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const [load] = (await run("cat", ["/proc/loadavg"])).stdout.split(" ");
    console.log(`profiles in ${dir}; load average ${load}`);
    console.log(
      `whole process CPU (/usr/bin/time, profiled): p50 ${ms(median(cpu))}; node -e 0 p50 ${ms(median(base))}; sampled on the main thread: ${ms(total / profiles.length)} per run`,
    );
    for (const [g, t] of [...by].sort((a, b) => b[1] - a[1])) {
      console.log(
        `${(t / profiles.length).toFixed(1).padStart(8)} ms ${((100 * t) / total).toFixed(1).padStart(5)}%  ${g}`,
      );
    }
    console.log("\nhottest functions (self ms per run):");
    for (const [f, t] of hottest(profiles, moduleAt, 30)) {
      console.log(`${(t / profiles.length).toFixed(1).padStart(8)} ms  ${f}`);
    }
    if (!cluster.owned) await kube.cleanup([ns]);
  } finally {
    await git.stop();
    if (cluster.owned) cluster.stop();
  }
}
