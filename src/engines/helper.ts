// A native engine helper (plumb-kustomize, plumb-helm) as a child process: started once, kept
// for the life of the plumb process, one render at a time over JSON lines (the protocol in
// src/engines/protocol/serve.go; the shapes in wire.ts). Two limits, counted apart: loading
// (spawn to the helper's ready line) and each render (request written to response read). A
// render past its limit kills the helper, since nothing else stops a Go render that loops, and
// a fresh one is started at once, so the next render finds an engine already loaded.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { EngineError } from "../render/engine.ts";
import { PROTOCOL_VERSION } from "./wire.ts";

export interface HelperOptions {
  /** The engine's name in messages: "Kustomize", "Helm". */
  name: string;
  /** What a render is called in messages: "kustomize build", "helm template". */
  action: string;
  /** The helper's executable and arguments. */
  command: string;
  args?: string[];
  /** The helper's whole environment (it is given none of plumb's settings or secrets). */
  env?: Record<string, string>;
  /** Time limit of one render, ms. */
  renderTimeoutMs: number;
  /** Time limit of loading the helper, ms. */
  loadTimeoutMs: number;
  /** The message when `command` does not exist (how to build it). */
  notBuilt: string;
}

/** What a helper has done, for measurements (loads counts every start, restarts included). */
export interface HelperStats {
  loads: number;
  renders: number;
  /** Spawn to ready of the last load, ms. */
  lastLoadMs?: number;
  /** Request to response of the last successful render, ms. */
  lastRenderMs?: number;
}

interface Pending {
  resolve: (response: unknown) => void;
  reject: (e: Error) => void;
}

/** One running helper process and what is waiting on it. */
class Child {
  readonly proc: ChildProcess;
  readonly ready: Promise<void>;
  readonly pending = new Map<number, Pending>();
  stderr = "";
  exited = false;
  private chunks: string[] = [];
  private onReady!: (ok: true | Error) => void;

  constructor(proc: ChildProcess) {
    this.proc = proc;
    this.ready = new Promise<void>((resolve, reject) => {
      this.onReady = (r) => (r === true ? resolve() : reject(r));
    });
    this.ready.catch(() => {}); // observed by whoever awaits it
  }

  /** Splits stdout into lines, scanning each chunk once (a response can be megabytes). */
  data(chunk: string, onLine: (line: string) => void): void {
    let nl = chunk.indexOf("\n");
    while (nl >= 0) {
      this.chunks.push(chunk.slice(0, nl));
      const line = this.chunks.join("");
      this.chunks = [];
      onLine(line);
      chunk = chunk.slice(nl + 1);
      nl = chunk.indexOf("\n");
    }
    if (chunk) this.chunks.push(chunk);
  }

  settleReady(r: true | Error): void {
    this.onReady(r);
  }

  failAll(e: Error): void {
    const all = [...this.pending.values()];
    this.pending.clear();
    for (const p of all) p.reject(e);
  }
}

/** Helpers alive in this process: ended before it exits (see endOnExit). */
const live = new Set<ChildProcess>();
let exitHook = false;

/**
 * Before Node exits on its own (its event loop empty), each helper's stdin is closed and the
 * process waits for it to end: no helper outlives plumb, and its CPU time is counted in
 * plumb's (a parent's rusage includes the children it has reaped), as a user pays it.
 */
function endOnExit(proc: ChildProcess): void {
  live.add(proc);
  proc.once("exit", () => live.delete(proc));
  if (exitHook) return;
  exitHook = true;
  process.on("beforeExit", () => {
    for (const p of live) {
      live.delete(p);
      p.ref();
      p.stdin?.end();
      const kill = setTimeout(() => p.kill("SIGKILL"), 2_000);
      p.once("exit", () => clearTimeout(kill));
    }
  });
}

/** Runs calls one at a time: a helper renders one request at a time, and a limit must not count queueing. */
class Serial {
  private tail: Promise<unknown> = Promise.resolve();
  run<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.tail.then(fn, fn);
    this.tail = next.catch(() => undefined);
    return next;
  }
}

const seconds = (ms: number) => `${Number((ms / 1000).toFixed(3))}s`;

/** A native engine helper; nothing starts until the first load or render. */
export class HelperProcess {
  private child: Child | undefined;
  private readonly serial = new Serial();
  private nextId = 0;
  private readonly counts: HelperStats = { loads: 0, renders: 0 };
  private readonly options: HelperOptions;

  constructor(options: HelperOptions) {
    this.options = options;
  }

  /**
   * Renders one request (the engine request's JSON text) and resolves with the engine's
   * response value (decoded by wire.ts). Loads the helper first when none runs.
   * @throws EngineError "unavailable" (not built, could not start, crashed), "timeout" (the
   *   load or the render passed its limit; the message says which)
   */
  render(request: string): Promise<unknown> {
    return this.serial.run(async () => {
      const child = await this.loaded();
      return this.send(child, request);
    });
  }

  /** Loads the helper when none runs (resolves once it is ready). @throws as render does */
  async load(): Promise<void> {
    await this.loaded();
  }

  /** The helper's process id while one runs. */
  pid(): number | undefined {
    return this.child && !this.child.exited ? this.child.proc.pid : undefined;
  }

  stats(): HelperStats {
    return { ...this.counts };
  }

  /** Stops the helper (a render in progress fails as a crash would). */
  async stop(): Promise<void> {
    const c = this.child;
    this.child = undefined;
    if (!c || c.exited) return;
    const gone = new Promise<void>((resolve) => c.proc.once("exit", () => resolve()));
    c.proc.kill("SIGKILL");
    await gone;
  }

  /** The running helper once ready, starting one when there is none (or the last has died). */
  private async loaded(): Promise<Child> {
    if (!this.child || this.child.exited) this.child = this.start();
    const child = this.child;
    try {
      await child.ready;
    } catch (e) {
      if (this.child === child) this.child = undefined;
      throw e;
    }
    return child;
  }

  private start(): Child {
    const o = this.options;
    if (!existsSync(o.command)) throw new EngineError("unavailable", o.notBuilt);
    const started = performance.now();
    this.counts.loads++;
    const proc = spawn(o.command, o.args ?? [], {
      stdio: ["pipe", "pipe", "pipe"],
      env: o.env ?? {},
    });
    const child = new Child(proc);
    const loadTimer = setTimeout(() => {
      child.settleReady(
        new EngineError(
          "timeout",
          `the ${o.name} engine did not load within ${seconds(o.loadTimeoutMs)} (its start-up limit; the machine may be overloaded); the render did not start`,
        ),
      );
      proc.kill("SIGKILL");
    }, o.loadTimeoutMs);
    let ready = false;
    proc.stdout?.setEncoding("utf8");
    proc.stdout?.on("data", (chunk: string) =>
      child.data(chunk, (line) => {
        let msg: {
          ready?: { engine?: string; protocol?: number };
          id?: number;
          response?: unknown;
        };
        try {
          msg = JSON.parse(line);
        } catch {
          return this.broken(child, `sent a line that is not JSON: ${line.slice(0, 200)}`);
        }
        if (!ready && msg.ready) {
          ready = true;
          clearTimeout(loadTimer);
          if (msg.ready.protocol !== PROTOCOL_VERSION) {
            child.settleReady(
              new EngineError(
                "unavailable",
                `the ${o.name} engine speaks protocol ${msg.ready.protocol}, plumb ${PROTOCOL_VERSION}: rebuild it with \`npm run build:engines\``,
              ),
            );
            proc.kill("SIGKILL");
            return;
          }
          this.counts.lastLoadMs = performance.now() - started;
          child.settleReady(true);
          return;
        }
        const waiting = typeof msg.id === "number" ? child.pending.get(msg.id) : undefined;
        if (!waiting || !("response" in msg)) {
          return this.broken(child, `sent a message plumb did not ask for: ${line.slice(0, 200)}`);
        }
        child.pending.delete(msg.id!);
        waiting.resolve(msg.response);
      }),
    );
    proc.stderr?.setEncoding("utf8");
    proc.stderr?.on("data", (chunk: string) => {
      child.stderr = (child.stderr + chunk).slice(-2000);
    });
    const why = () => (child.stderr.trim() ? `: ${child.stderr.trim()}` : "");
    proc.on("error", (err) => {
      clearTimeout(loadTimer);
      child.exited = true;
      const e = new EngineError(
        "unavailable",
        `the ${o.name} engine could not start (${err.message})`,
      );
      child.settleReady(e);
      child.failAll(e);
    });
    proc.on("exit", (code, signal) => {
      clearTimeout(loadTimer);
      child.exited = true;
      const how = signal ?? `code ${code}`;
      child.settleReady(
        new EngineError(
          "unavailable",
          `the ${o.name} engine exited while loading (${how})${why()}`,
        ),
      );
      child.failAll(
        new EngineError(
          "unavailable",
          `the ${o.name} engine exited during the render (${how})${why()}; it is started again for the next render`,
        ),
      );
    });
    proc.stdin?.on("error", () => {}); // EPIPE after a crash: reported by "exit"
    for (const s of [proc.stdin, proc.stdout, proc.stderr]) {
      (s as unknown as { unref?: () => void } | null)?.unref?.();
    }
    // Idle, the helper does not keep plumb alive; while a load or render runs, its timer does.
    proc.unref();
    endOnExit(proc);
    return child;
  }

  private send(child: Child, request: string): Promise<unknown> {
    const o = this.options;
    const id = ++this.nextId;
    return new Promise<unknown>((resolve, reject) => {
      let started = 0;
      const timer = setTimeout(() => {
        child.pending.delete(id);
        reject(
          new EngineError(
            "timeout",
            `${o.action} did not finish within ${seconds(o.renderTimeoutMs)} (the render's limit, PLUMB_RENDER_TIMEOUT; loading the engine is not counted); the engine was restarted`,
          ),
        );
        this.restart(child);
      }, o.renderTimeoutMs);
      child.pending.set(id, {
        resolve: (response) => {
          clearTimeout(timer);
          this.counts.renders++;
          this.counts.lastRenderMs = performance.now() - started;
          resolve(response);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      started = performance.now();
      child.proc.stdin?.write(`{"id":${id},"request":${request}}\n`);
    });
  }

  /** Kills a helper whose render ran out of time and starts the next one now. */
  private restart(child: Child): void {
    if (this.child === child) this.child = undefined;
    child.proc.kill("SIGKILL");
    try {
      const next = this.start();
      this.child = next;
      next.ready.catch(() => {
        if (this.child === next) this.child = undefined;
      });
    } catch {
      // not built any more: the next render says so
    }
  }

  /** A helper that broke the protocol: stopped, and what waits on it fails. */
  private broken(child: Child, what: string): void {
    const e = new EngineError(
      "unavailable",
      `the ${this.options.name} engine ${what}; rebuild it with \`npm run build:engines\``,
    );
    child.settleReady(e);
    child.failAll(e);
    if (this.child === child) this.child = undefined;
    child.proc.kill("SIGKILL");
  }
}
