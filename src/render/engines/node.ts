// The render engines on Node: Kustomize as WebAssembly in a worker thread, Helm as a native
// helper process (scripts/build-engines.sh builds both into dist/engines/). Each is started on
// first use and kept for the life of the process; a render past its time limit kills it (the
// next render starts a fresh one). Neither keeps the process alive when idle.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { EngineError, RENDER_TIMEOUT_MS, type RenderEngines } from "../engine.ts";
import {
  decodeHelmResponse,
  decodeKustomizeResponse,
  encodeHelmRequest,
  encodeKustomizeRequest,
} from "./wire.ts";

export interface NodeEnginesOptions {
  /** Where the built engines are (default PLUMB_ENGINES_DIR, else dist/engines/ of this checkout). */
  dir?: string;
  /** Time limit of one render, ms (default 10 000). */
  timeoutMs?: number;
  /** Heap limit of the Helm helper, MiB (default 1024): past it the render fails. */
  helmMaxHeapMb?: number;
}

export interface NodeEngines extends Required<RenderEngines> {
  /** Starts an engine without rendering (for the benchmark's load time). */
  load(engine: "kustomize" | "helm"): Promise<void>;
  /** Stops the thread and the helper process. */
  close(): Promise<void>;
  /** The Helm helper's process id while it runs (for measurements). */
  helmPid(): number | undefined;
}

const BUILD_HINT = "run `npm run build:engines` (needs Go >= 1.26)";

/** The Kustomize and Helm engines for this Node process; nothing starts until a render. */
export function createNodeEngines(options: NodeEnginesOptions = {}): NodeEngines {
  const dir =
    options.dir ??
    process.env["PLUMB_ENGINES_DIR"] ??
    fileURLToPath(new URL("../../../dist/engines/", import.meta.url));
  const timeoutMs = options.timeoutMs ?? RENDER_TIMEOUT_MS;
  const kustomize = new ThreadHost(dir, timeoutMs);
  const helm = new ProcessHost(join(dir, "plumb-helm"), timeoutMs, options.helmMaxHeapMb ?? 1024);
  return {
    async kustomize(request) {
      return decodeKustomizeResponse(await kustomize.call(encodeKustomizeRequest(request)));
    },
    async helm(request) {
      return decodeHelmResponse(await helm.call(encodeHelmRequest(request)));
    },
    async load(engine) {
      if (engine === "kustomize") await kustomize.call(undefined);
      else await helm.call("{}");
    },
    async close() {
      await kustomize.stop();
      helm.stop();
    },
    helmPid: () => helm.pid(),
  };
}

/** Runs calls one at a time: the engines are single-threaded, and a time limit must not count queueing. */
class Serial {
  private tail: Promise<unknown> = Promise.resolve();
  run<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.tail.then(fn, fn);
    this.tail = next.catch(() => undefined);
    return next;
  }
}

/**
 * The thread's module: kustomize-thread.ts beside this file when it runs from source, or the
 * bundle's kustomize-thread.js (an entry point of scripts/build-cli.ts, written next to the
 * chunk this code is bundled into).
 */
const THREAD = new URL(
  import.meta.url.endsWith(".ts") ? "./kustomize-thread.ts" : "./kustomize-thread.js",
  import.meta.url,
);

/** kustomize.wasm in a worker thread (kustomize-thread.ts). */
class ThreadHost {
  private worker: Worker | undefined;
  private readonly serial = new Serial();
  private nextId = 0;
  private pending:
    | { id: number; resolve: (s: string) => void; reject: (e: Error) => void }
    | undefined;

  private readonly dir: string;
  private readonly timeoutMs: number;

  constructor(dir: string, timeoutMs: number) {
    this.dir = dir;
    this.timeoutMs = timeoutMs;
  }

  call(request: string | undefined): Promise<string> {
    return this.serial.run(() => this.send(request));
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    for (const f of ["kustomize.wasm", "wasm_exec.js"]) {
      if (!existsSync(join(this.dir, f))) {
        throw new EngineError(
          "unavailable",
          `the Kustomize engine is not built (${f}): ${BUILD_HINT}`,
        );
      }
    }
    const worker = new Worker(THREAD);
    worker.on("message", (msg: { id: number; response?: string; error?: string }) => {
      const p = this.pending;
      if (!p || p.id !== msg.id) return;
      this.pending = undefined;
      if (msg.error !== undefined) p.reject(new EngineError("unavailable", msg.error));
      else p.resolve(msg.response ?? "");
    });
    const gone = (why: string) => {
      if (this.worker === worker) this.worker = undefined;
      const p = this.pending;
      this.pending = undefined;
      p?.reject(new EngineError("unavailable", why));
    };
    worker.on("error", (err) => gone(`the Kustomize engine crashed: ${err.message}`));
    worker.on("exit", (code) => gone(`the Kustomize engine exited (code ${code})`));
    worker.unref(); // after the listeners: adding one refs the worker again
    this.worker = worker;
    return worker;
  }

  private send(request: string | undefined): Promise<string> {
    const worker = this.start();
    const id = ++this.nextId;
    return new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending = undefined;
        this.worker = undefined;
        void worker.terminate();
        reject(
          new EngineError(
            "timeout",
            `kustomize build did not finish within ${this.timeoutMs / 1000}s; the engine was stopped`,
          ),
        );
      }, this.timeoutMs);
      this.pending = {
        id,
        resolve: (s) => {
          clearTimeout(timer);
          resolve(s);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      };
      worker.postMessage({ id, dir: this.dir, request });
    });
  }

  async stop(): Promise<void> {
    const w = this.worker;
    this.worker = undefined;
    if (w) await w.terminate();
  }
}

/** The plumb-helm helper: one JSON request per line on stdin, one response per line on stdout. */
class ProcessHost {
  private child: ChildProcess | undefined;
  private readonly serial = new Serial();
  private buffer = "";
  private stderr = "";
  private waiting: { resolve: (s: string) => void; reject: (e: Error) => void } | undefined;

  private readonly bin: string;
  private readonly timeoutMs: number;
  private readonly maxHeapMb: number;

  constructor(bin: string, timeoutMs: number, maxHeapMb: number) {
    this.bin = bin;
    this.timeoutMs = timeoutMs;
    this.maxHeapMb = maxHeapMb;
  }

  call(line: string): Promise<string> {
    return this.serial.run(() => this.send(line));
  }

  private start(): ChildProcess {
    if (this.child) return this.child;
    if (!existsSync(this.bin)) {
      throw new EngineError(
        "unavailable",
        `the Helm engine is not built (plumb-helm): ${BUILD_HINT}`,
      );
    }
    // A clean environment: the helper needs none of plumb's settings or secrets.
    const child = spawn(this.bin, [], {
      stdio: ["pipe", "pipe", "pipe"],
      env: { PLUMB_HELM_MAX_HEAP_MB: String(this.maxHeapMb) },
    });
    this.buffer = "";
    this.stderr = "";
    child.stdout?.setEncoding("utf8");
    child.stdout?.on("data", (chunk: string) => {
      this.buffer += chunk;
      const nl = this.buffer.indexOf("\n");
      if (nl < 0) return;
      const line = this.buffer.slice(0, nl);
      this.buffer = this.buffer.slice(nl + 1);
      const w = this.waiting;
      this.waiting = undefined;
      w?.resolve(line);
    });
    child.stderr?.setEncoding("utf8");
    child.stderr?.on("data", (chunk: string) => {
      this.stderr = (this.stderr + chunk).slice(-2000);
    });
    const gone = (why: string) => {
      if (this.child === child) this.child = undefined;
      const w = this.waiting;
      this.waiting = undefined;
      w?.reject(
        new EngineError("unavailable", `${why}${this.stderr ? `: ${this.stderr.trim()}` : ""}`),
      );
    };
    child.on("error", (err) => gone(`the Helm engine could not start (${err.message})`));
    child.on("exit", (code, signal) =>
      gone(`the Helm engine exited (${signal ?? `code ${code}`})`),
    );
    child.stdin?.on("error", () => {}); // EPIPE after a crash: reported by "exit"
    for (const s of [child.stdin, child.stdout, child.stderr]) {
      (s as unknown as { unref?: () => void } | null)?.unref?.();
    }
    child.unref();
    this.child = child;
    return child;
  }

  private send(line: string): Promise<string> {
    const child = this.start();
    return new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting = undefined;
        this.child = undefined;
        child.kill("SIGKILL");
        reject(
          new EngineError(
            "timeout",
            `helm template did not finish within ${this.timeoutMs / 1000}s; the engine was stopped`,
          ),
        );
      }, this.timeoutMs);
      this.waiting = {
        resolve: (s) => {
          clearTimeout(timer);
          resolve(s);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      };
      child.stdin?.write(`${line}\n`);
    });
  }

  pid(): number | undefined {
    return this.child?.pid;
  }

  stop(): void {
    const c = this.child;
    this.child = undefined;
    c?.kill("SIGKILL");
  }
}
