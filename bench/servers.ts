// The two long-running plumb servers the webhook and cron measurements drive: `plumb serve`
// (Node) and the Worker in workerd (wrangler dev, reaching the API server through the
// plain-HTTP kube proxy of test/support, as test/e2e/worker.test.ts does).
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "yaml";
import { type KubeProxy, startKubeProxy } from "../test/support/kube-proxy.ts";
import { fileExists, ROOT, sleep, waitFor } from "./kube.ts";

export const WEBHOOK_SECRET = "bench-webhook-secret";
const API_TOKENS = JSON.stringify([{ name: "bench", token: "bench-api-token-0123456789" }]);

export interface Server {
  base: string;
  /** Output so far (stdout and stderr), last 200 kB. */
  output(): string;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

function capture(child: ChildProcess): () => string {
  let out = "";
  const add = (d: Buffer) => {
    out += d.toString();
    if (out.length > 400_000) out = out.slice(-200_000);
  };
  child.stdout?.on("data", add);
  child.stderr?.on("data", add);
  return () => out;
}

async function stopChild(child: ChildProcess, signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  child.kill(signal);
  const timer = sleep(10_000).then(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
  await Promise.race([exited, timer]);
}

/** `node functions/cli.ts serve --port P --kubeconfig K`. */
export async function startNodeServer(kubeconfig: string): Promise<Server> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [join(ROOT, "functions/cli.ts"), "serve", "--port", String(port), "--kubeconfig", kubeconfig],
    {
      cwd: ROOT,
      env: { ...process.env, GITHUB_WEBHOOK_SECRET: WEBHOOK_SECRET, PLUMB_API_TOKENS: API_TOKENS },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const output = capture(child);
  const base = `http://127.0.0.1:${port}`;
  try {
    await waitFor(
      "plumb serve up",
      async () => (await fetch(`${base}/healthz`).catch(() => undefined))?.ok,
      30_000,
    );
  } catch (err) {
    await stopChild(child);
    throw new Error(`${String(err)}\n${output().slice(-2000)}`);
  }
  return { base, output, stop: () => stopChild(child) };
}

/** Whether the workerd path can run: it needs the cluster's bearer token and CA (cluster.sh writes both). */
export function workerdPrerequisites(dir: string): string | undefined {
  for (const f of ["token", "ca.crt"])
    if (!fileExists(join(dir, f))) return `${join(dir, f)} not found (needed for the kube proxy)`;
  return undefined;
}

/** wrangler dev (workerd) with the kube proxy in front of the API server. */
export async function startWorkerd(
  kubeconfig: string,
  dir: string,
): Promise<Server & { proxy: KubeProxy }> {
  const kc = parse(readFileSync(kubeconfig, "utf8")) as {
    clusters: Array<{ cluster: { server: string } }>;
  };
  const proxy = await startKubeProxy(kc.clusters[0]!.cluster.server, join(dir, "ca.crt"));
  const token = readFileSync(join(dir, "token"), "utf8").trim();
  const port = await freePort();
  const inspector = await freePort();
  const persist = mkdtempSync(join(tmpdir(), "plumb-bench-wrangler-"));
  const vars = {
    KUBE_API_URL: proxy.url,
    KUBE_TOKEN: token,
    GITHUB_WEBHOOK_SECRET: WEBHOOK_SECRET,
    PLUMB_API_TOKENS: API_TOKENS,
  };
  const args = [
    join(ROOT, "node_modules/wrangler/bin/wrangler.js"),
    "dev",
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
  for (const [k, v] of Object.entries(vars)) args.push("--var", `${k}:${v}`);
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
      120_000,
      250,
    );
  } catch (err) {
    await stop();
    throw new Error(`${String(err)}\n${output().slice(-3000)}`);
  }
  return { base, output, stop, proxy };
}
