// `plumb serve` (the bin) as a child process for e2e tests: a free port, its output kept, stopped after.
import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";
import { join, resolve } from "node:path";
import { waitFor } from "./wait.ts";

const ROOT = resolve(import.meta.dirname, "../..");

export interface Served {
  /** http://127.0.0.1:PORT */
  base: string;
  port: number;
  /** What the server printed so far (stdout and stderr). */
  output(): string;
  stop(): Promise<void>;
}

/** A TCP port free on 127.0.0.1 right now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const address = server.address();
  await new Promise<void>((r) => server.close(() => r()));
  if (typeof address !== "object" || address === null) throw new Error("no port");
  return address.port;
}

/**
 * Starts `plumb serve` against `kubeconfig` with `env` added and `args` (e.g. --schedule);
 * resolves once /healthz answers.
 */
export async function startServe(
  kubeconfig: string,
  env: Record<string, string>,
  args: string[] = [],
): Promise<Served> {
  const port = await freePort();
  let output = "";
  const child: ChildProcess = spawn(
    process.execPath,
    [
      join(ROOT, "functions/plumb.mjs"),
      "serve",
      "--port",
      String(port),
      "--kubeconfig",
      kubeconfig,
      ...args,
    ],
    { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] },
  );
  child.stdout?.on("data", (d) => (output += d));
  child.stderr?.on("data", (d) => (output += d));
  const base = `http://127.0.0.1:${port}`;
  await waitFor("plumb serve up", async () => {
    if (child.exitCode !== null) throw new Error(`plumb serve exited: ${output}`);
    return (await fetch(`${base}/healthz`).catch(() => undefined))?.ok;
  });
  return {
    base,
    port,
    output: () => output,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once("exit", r));
      child.kill();
      await exited;
    },
  };
}
