// Scale target 5: the scheduled tick over 10,000 App objects. On Workers: the Worker's cron
// handler in workerd (wrangler dev, a configuration without the queue consumer, so only the tick
// runs), its time, the isolate's heap (V8 inspector, Runtime.getHeapUsage, sampled), workerd's
// CPU and the API requests it made. On Node: the same tick code (planTick, resolveSources) in
// this process, with the requests and the heap it took.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { createKubePort } from "../src/kube/index.ts";
import { tickAt } from "../src/plan/index.ts";
import { planTick, resolveSources } from "../src/reconcile/index.ts";
import { startFaultProxy } from "../test/support/fault-proxy.ts";
import { capture, freePort, stopChild } from "../test/support/workerd.ts";
import { cronFiles } from "./fixtures.ts";
import type { BenchGit } from "./git.ts";
import { type Kube, pool, recordingTransport, sleep, waitFor } from "./kube.ts";

export const TEN_K = 10_000;
const NAMESPACES = 20;
const REPOS = 10;
const INTERVAL = "5m";

export interface TickFigure {
  wallMs: number;
  cpuMs: number;
  /** Peak JS heap used during the tick, and before it (MiB). */
  heapPeakMiB: number;
  heapBaseMiB: number;
  /** API requests (list pages, Secrets) and Git requests (ls-refs) of the tick. */
  requests: number;
  gitRequests: number;
  due: number;
  listed: number;
  pages: number;
  sources: number;
  /** Queue messages sent (workerd). */
  messages?: number;
  /** workerd's resident memory before the tick and its peak during it (MiB). */
  rssBaseMiB?: number;
  rssPeakMiB?: number;
}

export interface TickResult {
  apps: number;
  setupMs: number;
  node?: TickFigure | undefined;
  workerd?: TickFigure | undefined;
  errors: string[];
}

/**
 * TEN_K Apps over NAMESPACES namespaces and REPOS repositories, interval 5m, each with a status
 * as a steady run leaves it (observed, healthy), so a tick finds a fifth of them due by slot.
 */
export async function createTenK(kube: Kube, git: BenchGit): Promise<number> {
  const t0 = performance.now();
  const repos: Array<{ url: string }> = [];
  for (let r = 0; r < REPOS; r++) repos.push(await git.createRepo(`tick-${r}`, cronFiles(1)));
  for (let n = 0; n < NAMESPACES; n++) await kube.namespace(`bench-10k-${n}`);
  const now = new Date().toISOString();
  await pool(
    Array.from({ length: TEN_K }, (_, i) => i),
    32,
    async (i) => {
      const ns = `bench-10k-${i % NAMESPACES}`;
      const name = `a-${i}`;
      await kube.createApp(ns, name, {
        source: { git: { url: repos[i % REPOS]!.url, ref: "main", path: "c/0" } },
        interval: INTERVAL,
      });
      await kube.api(
        "PATCH",
        `/apis/plumb.dev/v1alpha1/namespaces/${ns}/apps/${name}/status`,
        {
          status: {
            observedGeneration: 1,
            syncStatus: "Synced",
            healthStatus: "Healthy",
            lastReconciledAt: now,
          },
        },
        "application/merge-patch+json",
      );
    },
  );
  return performance.now() - t0;
}

/** The tick in this process: the compact list in pages, the due Apps, one lookup per source. */
export async function tickNode(kube: Kube, git: BenchGit): Promise<TickFigure> {
  const rec = recordingTransport(kube.raw);
  const { createGitPort } = await import("../src/source/git.ts");
  const ports = { kube: createKubePort(rec.transport), git: createGitPort() };
  const heap = () => process.memoryUsage().heapUsed / 1048576;
  const base = heap();
  let peak = base;
  const sampler = setInterval(() => {
    peak = Math.max(peak, heap());
  }, 2);
  const g0 = await git.requests();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const plan = await planTick(ports, tickAt(new Date()));
  peak = Math.max(peak, heap());
  const hints = await resolveSources(ports, plan.due);
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  clearInterval(sampler);
  return {
    wallMs,
    cpuMs: (cpu.user + cpu.system) / 1000,
    heapPeakMiB: Math.max(peak, heap()),
    heapBaseMiB: base,
    requests: rec.log.length,
    gitRequests: (await git.requests()) - g0,
    due: plan.due.length,
    listed: plan.listed,
    pages: plan.pages,
    sources: hints.size,
  };
}

/**
 * The Worker's cron handler in workerd over the same Apps: wrangler dev with a configuration of
 * the main Worker and the queue's producer only (no consumer: the tick alone is measured).
 */
export async function tickWorkerd(
  root: string,
  kubeconfig: string,
  git: BenchGit,
): Promise<TickFigure> {
  const dir = join(root, ".plumb/bench-tick");
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const config = join(dir, "wrangler.toml");
  writeFileSync(
    config,
    [
      'name = "plumb-bench-tick"',
      `main = ${JSON.stringify(join(root, "functions/worker.ts"))}`,
      'compatibility_date = "2026-11-01"',
      'compatibility_flags = ["nodejs_compat"]',
      "[[queues.producers]]",
      'queue = "plumb-reconcile"',
      'binding = "RECONCILE_QUEUE"',
      "",
    ].join("\n"),
  );
  const kc = parse(readFileSync(kubeconfig, "utf8")) as {
    clusters: Array<{ cluster: { server: string } }>;
  };
  const clusterDir = join(kubeconfig, "..");
  const proxy = await startFaultProxy({
    server: kc.clusters[0]!.cluster.server,
    caFile: join(clusterDir, "ca.crt"),
  });
  const token = readFileSync(join(clusterDir, "token"), "utf8").trim();
  const port = await freePort();
  const inspector = await freePort();
  const child = spawn(
    process.execPath,
    [
      join(root, "node_modules/wrangler/bin/wrangler.js"),
      "dev",
      "-c",
      config,
      "--ip",
      "127.0.0.1",
      "--port",
      String(port),
      "--inspector-port",
      String(inspector),
      "--persist-to",
      join(dir, "state"),
      "--test-scheduled",
      "--show-interactive-dev-session=false",
      "--var",
      `KUBE_API_URL:${proxy.url}`,
      "--var",
      `KUBE_TOKEN:${token}`,
    ],
    {
      cwd: root,
      env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "true" },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const output = capture(child);
  const base = `http://127.0.0.1:${port}`;
  try {
    await waitFor(
      "wrangler dev up",
      async () => (await fetch(`${base}/healthz`).catch(() => undefined))?.status !== undefined,
    ).catch((e) => {
      throw new Error(`${String(e)}\n${output().slice(-3000)}`);
    });
    const workerd = descendants(child).find((p) => commandOf(p).includes("workerd"));
    if (workerd === undefined) throw new Error("workerd process not found");
    const heap = await heapSampler(inspector);
    const heapBase = await heap.read();
    resetPeak(workerd);
    const rssBase = status(workerd, "VmRSS");
    const cpu0 = cpuMs(workerd);
    const proxied = proxy.requests.length;
    const g0 = await git.requests();
    const logFrom = output().length;
    const sampling = heap.sample(10);
    const t0 = performance.now();
    const res = await fetch(`${base}/__scheduled?cron=*+*+*+*+*`);
    await res.text();
    const wallMs = performance.now() - t0;
    const heapPeak = await sampling.stop();
    const cpu = cpuMs(workerd) - cpu0;
    if (res.status !== 200)
      throw new Error(`/__scheduled: HTTP ${res.status}\n${output().slice(-3000)}`);
    await sleep(300);
    // The cron handler's log line: {"msg":"cron","due":…} (and listed, pages, sources).
    const found = output()
      .slice(logFrom)
      .split("\n")
      .map((l) => l.slice(l.indexOf("{")))
      .find((l) => l.includes('"msg":"cron"'));
    const cron = found ? (JSON.parse(found) as Record<string, number>) : {};
    const requests = proxy.requests.slice(proxied);
    heap.close();
    return {
      wallMs,
      cpuMs: cpu,
      heapPeakMiB: heapPeak,
      heapBaseMiB: heapBase,
      requests: requests.length,
      gitRequests: (await git.requests()) - g0,
      due: cron["due"] ?? Number.NaN,
      listed: cron["listed"] ?? Number.NaN,
      pages: cron["pages"] ?? Number.NaN,
      sources: cron["sources"] ?? Number.NaN,
      messages: cron["messages"] ?? Number.NaN,
      rssBaseMiB: rssBase / 1024,
      rssPeakMiB: status(workerd, "VmHWM") / 1024,
    };
  } finally {
    await stopChild(child, "SIGINT");
    await proxy.stop().catch(() => undefined);
  }
}

/** The processes below `child` (pids), read from /proc. */
function descendants(child: ChildProcess): number[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      parents.set(Number(entry), ppid);
    } catch {
      // gone meanwhile
    }
  }
  const out: number[] = [];
  const walk = (pid: number) => {
    for (const [p, pp] of parents) {
      if (pp === pid) {
        out.push(p);
        walk(p);
      }
    }
  };
  if (child.pid !== undefined) walk(child.pid);
  return out;
}

function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
  } catch {
    return "";
  }
}

/** A /proc/<pid>/status field in kB. */
function status(pid: number, field: string): number {
  const m = new RegExp(`^${field}:\\s+(\\d+)`, "m").exec(
    readFileSync(`/proc/${pid}/status`, "utf8"),
  );
  return Number(m?.[1] ?? Number.NaN);
}

/** Resets the process's peak RSS (VmHWM) to its current RSS (clear_refs 5). */
function resetPeak(pid: number): void {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, "5");
  } catch {
    // not permitted: VmHWM then includes workerd's start-up
  }
}

/** User + system CPU time of a process, ms (clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** The Worker isolate's heap through the V8 inspector (Runtime.getHeapUsage), MiB. */
async function heapSampler(port: number) {
  const targets = (await (await fetch(`http://127.0.0.1:${port}/json`)).json()) as Array<{
    webSocketDebuggerUrl?: string;
  }>;
  const url = targets.find((t) => t.webSocketDebuggerUrl)?.webSocketDebuggerUrl;
  if (!url) throw new Error("no inspector target");
  // The inspector proxy admits local origins only (miniflare's ALLOWED_ORIGIN_HOSTNAMES).
  const ws = new WebSocket(url, { headers: { origin: "http://localhost" } } as never);
  await new Promise<void>((ok, fail) => {
    ws.addEventListener("open", () => ok());
    ws.addEventListener("error", () => fail(new Error("inspector connection failed")));
  });
  let id = 0;
  const waiting = new Map<number, (v: number) => void>();
  ws.addEventListener("message", (e) => {
    const m = JSON.parse(String(e.data)) as { id?: number; result?: { usedSize?: number } };
    if (m.id !== undefined) waiting.get(m.id)?.((m.result?.usedSize ?? Number.NaN) / 1048576);
  });
  const read = () =>
    new Promise<number>((ok) => {
      const n = ++id;
      waiting.set(n, ok);
      ws.send(JSON.stringify({ id: n, method: "Runtime.getHeapUsage" }));
    });
  return {
    read,
    sample(everyMs: number) {
      let peak = 0;
      let on = true;
      const loop = (async () => {
        while (on) {
          peak = Math.max(peak, await read());
          await sleep(everyMs);
        }
      })();
      return {
        async stop() {
          on = false;
          await loop;
          return Math.max(peak, await read());
        },
      };
    },
    close: () => ws.close(),
  };
}
