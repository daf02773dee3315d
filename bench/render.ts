// Measurement 7: the render engines. On Node (a child process, render-child.ts):
// engine load time, first and warm renders, memory. In workerd: the render Worker under
// `wrangler dev` — first and warm renders of the same overlay over its HTTP interface, the
// engine's linear memory and the workerd process's peak RSS. Bundle sizes are measured by
// bundle.ts for both Worker configurations.
import { execFile, spawn } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { promisify } from "node:util";
import { encodeKustomizeRequest } from "../src/engines/wire.ts";
import type { RepoFile } from "../src/render/engine.ts";
import { capture, freePort, stopChild } from "../test/support/workerd.ts";
import { ROOT, waitFor } from "./kube.ts";
import { type Summary, summarize } from "./stats.ts";

const run = promisify(execFile);
const WARM = 10;

export interface NodeRenderResult {
  kustomize: {
    what: string;
    objects: number;
    loadMs: number;
    firstMs: number;
    warmMs: Summary;
    helperRss?: number;
    helperPeak?: number;
  };
  helm: {
    what: string;
    manifests: number;
    loadMs: number;
    firstMs: number;
    warmMs: Summary;
    helperRss?: number;
    helperPeak?: number;
  };
}

export interface WorkerdRenderResult {
  what: string;
  /** First request to a fresh isolate: instantiating the module and the render. */
  firstMs: number;
  warmMs: Summary;
  /** The engine's WebAssembly memory after the renders (Go's heap only grows: its peak). */
  wasmMemoryBytes: number;
  /** workerd's RSS before the first render and its peak (VmHWM) after the last. */
  workerdRssBefore: number;
  workerdPeak: number;
  requestBytes: number;
}

/** Node engines, measured in a fresh child process. */
export async function renderNode(): Promise<NodeRenderResult> {
  const { stdout } = await run(
    process.execPath,
    ["--expose-gc", join(import.meta.dirname, "render-child.ts")],
    { timeout: 180_000, maxBuffer: 1024 * 1024 },
  );
  return JSON.parse(stdout.trim().split("\n").pop()!) as NodeRenderResult;
}

function files(dir: string, root = dir): RepoFile[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory()
      ? files(p, root)
      : [{ path: relative(root, p).split("\\").join("/"), data: readFileSync(p) }];
  });
}

/** Processes descended from `pid` (from /proc). */
function descendants(pid: number): number[] {
  const parent = new Map<number, number>();
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      parent.set(Number(d), ppid);
    } catch {
      // gone
    }
  }
  const out: number[] = [];
  for (const p of parent.keys()) {
    for (let q = parent.get(p); q !== undefined && q > 1; q = parent.get(q)) {
      if (q === pid) {
        out.push(p);
        break;
      }
    }
  }
  return out;
}

const status = (pid: number, field: string): number => {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(
      readFileSync(`/proc/${pid}/status`, "utf8"),
    );
    return Number(m?.[1] ?? 0) * 1024;
  } catch {
    return 0;
  }
};

/** The render Worker alone under `wrangler dev`, rendering podinfo's dev overlay. */
export async function renderWorkerd(): Promise<WorkerdRenderResult> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [
      join(ROOT, "node_modules/wrangler/bin/wrangler.js"),
      "dev",
      "-c",
      "wrangler.render.toml",
      "--ip",
      "127.0.0.1",
      "--port",
      String(port),
      "--inspector-port",
      String(await freePort()),
      "--show-interactive-dev-session=false",
    ],
    {
      cwd: ROOT,
      env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "true" },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const output = capture(child);
  const url = `http://127.0.0.1:${port}/kustomize`;
  try {
    await waitFor(
      "render Worker up",
      async () => (await fetch(url).catch(() => undefined))?.status === 404,
    ).catch((err) => {
      throw new Error(`${String(err)}\n${output().slice(-2000)}`);
    });
    const workerd = () =>
      descendants(child.pid!).filter((p) => {
        try {
          return readFileSync(`/proc/${p}/cmdline`, "utf8").includes("workerd");
        } catch {
          return false;
        }
      });
    const rssBefore = workerd().reduce((s, p) => s + status(p, "VmRSS"), 0);
    const body = encodeKustomizeRequest({
      files: files(join(ROOT, "test/fixtures/real/podinfo-kustomize-overlays")),
      path: "deploy/overlays/dev",
      maxOutputBytes: 20 << 20,
    });
    let memory = 0;
    const render = async () => {
      const t0 = performance.now();
      const res = await fetch(url, { method: "POST", body });
      const json = (await res.json()) as { ok?: boolean; error?: string };
      if (!json.ok) throw new Error(`render failed: ${json.error ?? res.status}`);
      memory = Number(res.headers.get("x-plumb-wasm-memory-bytes") ?? 0);
      return performance.now() - t0;
    };
    const firstMs = await render();
    const warm: number[] = [];
    for (let i = 0; i < WARM; i++) warm.push(await render());
    return {
      what: "podinfo deploy/overlays/dev",
      firstMs,
      warmMs: summarize(warm),
      wasmMemoryBytes: memory,
      workerdRssBefore: rssBefore,
      workerdPeak: workerd().reduce((s, p) => s + status(p, "VmHWM"), 0),
      requestBytes: body.length,
    };
  } finally {
    await stopChild(child, "SIGINT");
  }
}
