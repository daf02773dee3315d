// Measurement 7: the cost of a run as a whole process, from start to exit,
// as a CronJob pays it — the `plumb` bin measured from outside by /usr/bin/time (user + system
// CPU, peak RSS): a no-op `reconcile NS/NAME` of guestbook, and `reconcile --all` over 100
// Apps (first sync, a tick with nothing due, a forced tick).
// Set PLUMB_BENCH_CLI to another CLI entry file (e.g. an older checkout's functions/cli.ts) to
// measure that one instead: a before/after comparison on the same cluster.
// Standalone: `node bench/process.ts` (uses $KUBECONFIG, else starts a control plane);
// PLUMB_BENCH_PROCESS_NOOP_ONLY=1 measures only the no-op run and `node -e 0`.
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { cronFiles, guestbook } from "./fixtures.ts";
import type { BenchGit } from "./git.ts";
import type { Kube } from "./kube.ts";
import {
  NODE_BASELINE,
  type ProcessCase,
  type ProcessResult,
  type ProcessSample,
  processReport,
  processTargets,
  summary,
} from "./process-report.ts";
import { ms } from "./stats.ts";

const run = promisify(execFile);
const TIME = "/usr/bin/time";
const ALL_APPS = 100;
const ALL_NS = "bench-proc-all";
const NOOP_NS = "bench-proc";

/** The CLI measured: PLUMB_BENCH_CLI, else the bin (functions/plumb.mjs). */
export function benchCli(root: string): string {
  return resolve(process.env["PLUMB_BENCH_CLI"] ?? join(root, "functions/plumb.mjs"));
}

/** Runs `node cli args` under /usr/bin/time. */
export async function timeProcess(
  cli: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<ProcessSample> {
  if (!existsSync(TIME)) throw new Error(`${TIME} not found (apt-get install time)`);
  const dir = mkdtempSync(join(tmpdir(), "plumb-bench-time-"));
  const out = join(dir, "time");
  try {
    const r = await run(TIME, ["-f", "%U %S %M %e", "-o", out, process.execPath, cli, ...args], {
      env: { ...process.env, ...env },
      maxBuffer: 64 * 1024 * 1024,
      timeout: 600_000,
    }).then(
      (x) => ({ code: 0, stdout: x.stdout }),
      (e: { code?: number; stdout?: string }) => ({ code: e.code ?? -1, stdout: e.stdout ?? "" }),
    );
    const [user, sys, maxKiB, wall] = readFileSync(out, "utf8")
      .trim()
      .split("\n")
      .pop()!
      .split(" ")
      .map(Number);
    const outcomes: Record<string, number> = {};
    let writes = 0;
    let requests = 0;
    for (const line of r.stdout.split("\n").filter(Boolean)) {
      const l = JSON.parse(line) as { outcome?: string; requests?: Record<string, number> };
      outcomes[l.outcome ?? "?"] = (outcomes[l.outcome ?? "?"] ?? 0) + 1;
      const q = l.requests ?? {};
      writes += (q["create"] ?? 0) + (q["update"] ?? 0) + (q["patch"] ?? 0) + (q["delete"] ?? 0);
      requests += Object.values(q).reduce((a, b) => a + b, 0);
    }
    return {
      cpuMs: ((user ?? 0) + (sys ?? 0)) * 1000,
      peakMiB: (maxKiB ?? 0) / 1024,
      wallMs: (wall ?? 0) * 1000,
      exit: r.code,
      outcomes,
      writes,
      requests,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Sets up guestbook (settled: its no-op writes nothing) and 100 one-ConfigMap Apps in one
 * namespace, then measures: `runs` no-op runs of guestbook (after one unmeasured warm-up run,
 * which also builds the bundle), the first `--all` over the 100, `runs` ticks with nothing
 * due, and 3 forced ticks (100 no-op reconciles each).
 */
export async function processCost(
  root: string,
  kube: Kube,
  git: BenchGit,
  kubeconfig: string,
  log: (s: string) => void,
  runs = 10,
): Promise<ProcessResult> {
  const cli = benchCli(root);
  const k = ["--kubeconfig", kubeconfig];
  const cases: ProcessCase[] = [];
  const measure = async (name: string, args: string[], n: number) => {
    const samples: ProcessSample[] = [];
    for (let i = 0; i < n; i++) samples.push(await timeProcess(cli, [...args, ...k]));
    cases.push({ name, command: `plumb ${args.join(" ")}`, samples });
    const s = summary(samples);
    log(
      `  ${name}: CPU ${ms(s.cpuMs)}, peak ${s.peakMiB.toFixed(1)} MiB, wall ${ms(s.wallMs)} (median of ${n})`,
    );
  };

  const repo = await git.createRepo("proc-guestbook", guestbook.files());
  await kube.namespace(NOOP_NS);
  await kube.createApp(NOOP_NS, "guestbook", {
    source: { git: { url: repo.url, ref: "main" } },
    interval: "1h",
  });
  // Settle as reconcile-bench does: until 3 runs in a row write nothing (the Deployment rolled
  // out, health and status unchanged), at most 30 runs.
  const target = `${NOOP_NS}/guestbook`;
  for (let i = 0, quiet = 0; i < 30 && quiet < 3; i++) {
    const s = await timeProcess(cli, ["reconcile", target, ...k]);
    quiet = s.exit === 0 && s.writes === 0 ? quiet + 1 : 0;
    if (quiet < 3) await new Promise((r) => setTimeout(r, 300));
  }
  // With the disk Git cache and without it (a directory that cannot be created: every run
  // fetches, as before the cache), interleaved so that both see the same load on the machine.
  const on: ProcessSample[] = [];
  const off: ProcessSample[] = [];
  for (let i = 0; i < runs; i++) {
    on.push(await timeProcess(cli, ["reconcile", target, ...k]));
    off.push(
      await timeProcess(cli, ["reconcile", target, ...k], {
        PLUMB_CACHE_DIR: "/dev/null/plumb-cache-off",
      }),
    );
  }
  const command = `plumb reconcile ${target}`;
  cases.push({ name: "no-op: reconcile NS/NAME (guestbook)", command, samples: on });
  cases.push({ name: "no-op, disk Git cache off: reconcile NS/NAME", command, samples: off });
  log(
    `  no-op: CPU ${ms(summary(on).cpuMs)}; cache off ${ms(summary(off).cpuMs)} (median of ${runs})`,
  );
  // Node's own start-up and exit on this machine, in this run: what the no-op is compared to.
  const baseline: ProcessSample[] = [];
  for (let i = 0; i < runs; i++) baseline.push(await timeProcess("-e", ["0"]));
  cases.push({ name: NODE_BASELINE, command: "node -e 0", samples: baseline });
  log(`  ${NODE_BASELINE}: CPU ${ms(summary(baseline).cpuMs)} (median of ${runs})`);
  if (process.env["PLUMB_BENCH_PROCESS_NOOP_ONLY"]) return { cli, cases };

  const allRepo = await git.createRepo("proc-all", cronFiles(ALL_APPS));
  await kube.namespace(ALL_NS);
  for (let i = 0; i < ALL_APPS; i += 10) {
    await Promise.all(
      Array.from({ length: 10 }, (_, j) =>
        kube.createApp(ALL_NS, `a-${i + j}`, {
          source: { git: { url: allRepo.url, ref: "main", path: `c/${i + j}` } },
          interval: "1h",
        }),
      ),
    );
  }
  const all = ["reconcile", "--all", "--namespace", ALL_NS];
  await measure(`reconcile --all, ${ALL_APPS} Apps, first sync`, all, 1);
  await measure(`reconcile --all, ${ALL_APPS} Apps, none due`, all, runs);
  await measure(`reconcile --all --force, ${ALL_APPS} Apps (no-op runs)`, [...all, "--force"], 3);
  return { cli, cases };
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  const { Kube, ROOT, startCluster } = await import("./kube.ts");
  const { startBenchGit } = await import("./git.ts");
  const log = (s: string) => process.stderr.write(`${s}\n`);
  const cluster = startCluster(log);
  const git = await startBenchGit();
  try {
    const kube = new Kube(cluster.kubeconfig);
    await kube.installCrd();
    const r = await processCost(ROOT, kube, git, cluster.kubeconfig, log);
    console.log(
      [
        ...processReport(r),
        "",
        ...processTargets(r).map(
          (t) =>
            `${t.pass === undefined ? "-" : t.pass ? "PASS" : "MISS"} ${t.target}: ${t.measured}`,
        ),
      ].join("\n"),
    );
    if (!cluster.owned) await kube.cleanup([NOOP_NS, ALL_NS]);
  } finally {
    await git.stop();
    if (cluster.owned) cluster.stop();
  }
}
