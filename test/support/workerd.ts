// The Worker in workerd (`wrangler dev`) against a local control plane, for tests and the
// benchmark. The API server is reached through the plain-HTTP fault proxy: workerd's fetch will
// not trust the cluster's private CA.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { parse } from "yaml";
import { type FaultProxy, startFaultProxy } from "./fault-proxy.ts";
import { sleep, waitFor } from "./wait.ts";

const ROOT = resolve(import.meta.dirname, "../..");

/** A free TCP port on 127.0.0.1. */
export async function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.once("error", fail);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => ok(port));
    });
  });
}

/** Collects a child's stdout and stderr (the last 200 kB). */
export function capture(child: ChildProcess): () => string {
  let out = "";
  const add = (d: Buffer) => {
    out += d.toString();
    if (out.length > 400_000) out = out.slice(-200_000);
  };
  child.stdout?.on("data", add);
  child.stderr?.on("data", add);
  return () => out;
}

/** Signals a child and waits for it to exit (SIGKILL after 10 s). */
export async function stopChild(
  child: ChildProcess,
  signal: NodeJS.Signals = "SIGTERM",
): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  child.kill(signal);
  const timer = sleep(10_000).then(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
  await Promise.race([exited, timer]);
}

export interface Workerd {
  /** http://127.0.0.1:<port> of the Worker. */
  base: string;
  /** The proxy the Worker talks through (its request log, fault injection). */
  proxy: FaultProxy;
  /** wrangler's output so far. */
  output(): string;
  stop(): Promise<void>;
}

/**
 * Starts `wrangler dev --test-scheduled` (the main Worker and the render Worker, whose build
 * command builds the Kustomize engine if needed) with its own state directory and ports, bound to the
 * cluster whose admin kubeconfig is `kubeconfig` (DIR/token and DIR/ca.crt beside it, as
 * test/cluster writes them). `vars` are extra bindings (webhook secrets, API tokens).
 * Resolves when GET /healthz answers.
 */
export async function startWorkerd(
  kubeconfig: string,
  vars: Record<string, string>,
): Promise<Workerd> {
  const dir = dirname(kubeconfig);
  const kc = parse(readFileSync(kubeconfig, "utf8")) as {
    clusters: Array<{ cluster: { server: string } }>;
  };
  const proxy = await startFaultProxy({
    server: kc.clusters[0]!.cluster.server,
    caFile: join(dir, "ca.crt"),
  });
  const token = readFileSync(join(dir, "token"), "utf8").trim();
  const port = await freePort();
  const inspector = await freePort();
  const persist = mkdtempSync(join(tmpdir(), "plumb-wrangler-"));
  const args = [
    join(ROOT, "node_modules/wrangler/bin/wrangler.js"),
    "dev",
    // The main Worker and the render Worker (Kustomize), bound by the RENDER service binding.
    "-c",
    "wrangler.toml",
    "-c",
    "wrangler.render.toml",
    "--ip",
    "127.0.0.1",
    "--port",
    String(port),
    "--inspector-port",
    String(inspector),
    "--persist-to",
    persist,
    "--test-scheduled",
    "--show-interactive-dev-session=false",
  ];
  for (const [k, v] of Object.entries({ KUBE_API_URL: proxy.url, KUBE_TOKEN: token, ...vars })) {
    args.push("--var", `${k}:${v}`);
  }
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "true" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output = capture(child);
  const base = `http://127.0.0.1:${port}`;
  const stop = async () => {
    await stopChild(child, "SIGINT");
    await Promise.race([proxy.stop().catch(() => undefined), sleep(3000)]);
    rmSync(persist, { recursive: true, force: true });
  };
  try {
    await waitFor(
      "wrangler dev up",
      async () => (await fetch(`${base}/healthz`).catch(() => undefined))?.ok,
    );
  } catch (err) {
    await stop();
    throw new Error(`${String(err)}\n${output().slice(-3000)}`);
  }
  return { base, proxy, output, stop };
}
