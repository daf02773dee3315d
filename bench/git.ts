// Client of bench/git-child.ts: a Git smart-HTTP server (git http-backend) in a child process.
import { type ChildProcess, fork } from "node:child_process";
import { join } from "node:path";

export interface BenchRepo {
  name: string;
  url: string;
  head: string;
}

export interface GitRequestKinds {
  fetch: number;
  lsRefs: number;
  other: number;
}

export interface BenchGit {
  url: string;
  createRepo(name: string, files: Record<string, string>): Promise<BenchRepo>;
  /** Commits `files` (null deletes) to the repo's main branch; resolves to the new SHA. */
  commit(name: string, files: Record<string, string | null>): Promise<string>;
  /** Requests the server has answered so far. */
  requests(): Promise<number>;
  /** The same, by kind: fetches (upload-pack with a pack), ls-refs, and the rest (GETs). */
  requestKinds(): Promise<GitRequestKinds>;
  stop(): Promise<void>;
}

const CALL_TIMEOUT_MS = 60_000;

export async function startBenchGit(): Promise<BenchGit> {
  const child: ChildProcess = fork(join(import.meta.dirname, "git-child.ts"), [], {
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  let next = 1;
  const pending = new Map<
    number,
    { resolve: (v: unknown) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }
  >();
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("git server did not start")), 20_000);
    child.once("message", (m: { ready?: boolean; url?: string }) => {
      clearTimeout(timer);
      if (m.ready && m.url) resolve(m.url);
      else reject(new Error("git server: unexpected first message"));
    });
    child.once("exit", (code) => reject(new Error(`git server exited (${code})`)));
  });
  child.on("message", (m: { id?: number; ok?: boolean; value?: unknown; error?: string }) => {
    if (m.id === undefined) return;
    const p = pending.get(m.id);
    if (!p) return;
    pending.delete(m.id);
    clearTimeout(p.timer);
    if (m.ok) p.resolve(m.value);
    else p.reject(new Error(m.error ?? "git server error"));
  });
  const call = <T>(op: string, ...args: unknown[]): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const id = next++;
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new Error(`git server: ${op} timed out`));
      }, CALL_TIMEOUT_MS);
      pending.set(id, { resolve: resolve as (v: unknown) => void, reject, timer });
      child.send({ id, op, args });
    });
  return {
    url,
    async createRepo(name, files) {
      const r = await call<{ url: string; head: string }>("createRepo", name, files);
      return { name, ...r };
    },
    commit: (name, files) => call<string>("commit", name, files),
    requests: () => call<number>("requests"),
    requestKinds: () => call<GitRequestKinds>("requestKinds"),
    async stop() {
      await call("stop").catch(() => undefined);
      if (child.exitCode === null) child.kill();
    },
  };
}
