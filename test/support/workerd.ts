// The Worker in workerd (`wrangler dev`) against a local control plane, for tests and the
// benchmark. The API server is reached through the plain-HTTP fault proxy: workerd's fetch will
// not trust the cluster's private CA.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { stripVTControlCharacters } from "node:util";
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
 * wrangler dev's words for a build that did not succeed: esbuild's "Build failed with N
 * error(s)" (wrangler then waits for a file to change, serving nothing) and a failed
 * `[build] command` (wrangler then exits). Matched on the output without colour codes.
 */
const BUILD_FAILED = /Build failed with \d+ error|Running custom build `[^`]*` failed/;

/** `s` without ANSI colour and style sequences. */
const plain = (s: string) => stripVTControlCharacters(s);

export interface WorkerdOptions {
  /**
   * The wrangler configuration files, relative to the checkout or absolute (default: the main
   * Worker and the render Worker, wrangler.toml and wrangler.render.toml).
   */
  configs?: string[];
  /**
   * Secret bindings, given to wrangler in an env file as `.dev.vars` gives them (a deployed
   * Worker's `wrangler secret put`), not on its command line, where every process listing
   * shows them. KUBE_TOKEN is always one.
   */
  secrets?: Record<string, string>;
}

/**
 * Starts `wrangler dev --test-scheduled` (the main Worker and the render Worker, whose build
 * command builds the Kustomize engine if needed) with its own state directory and ports, bound to the
 * cluster whose admin kubeconfig is `kubeconfig` (DIR/token and DIR/ca.crt beside it, as
 * test/cluster writes them). `vars` are extra bindings (webhook secrets, API tokens).
 * Resolves when GET /healthz answers.
 * @throws Error with wrangler's output as soon as a build fails or wrangler exits, not after
 *   the wait limit: a Worker that does not build never serves
 */
export async function startWorkerd(
  kubeconfig: string,
  vars: Record<string, string>,
  options: WorkerdOptions = {},
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
    ...(options.configs ?? ["wrangler.toml", "wrangler.render.toml"]).flatMap((c) => ["-c", c]),
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
  for (const [k, v] of Object.entries({ KUBE_API_URL: proxy.url, ...vars })) {
    args.push("--var", `${k}:${v}`);
  }
  const secrets = { KUBE_TOKEN: token, ...options.secrets };
  const envFile = join(persist, "secrets.env");
  // dotenv: a single-quoted value is taken as it is.
  writeFileSync(
    envFile,
    Object.entries(secrets)
      .map(([k, v]) => {
        if (v.includes("'") || /[\r\n]/.test(v)) throw new Error(`${k}: no quote or newline`);
        return `${k}='${v}'\n`;
      })
      .join(""),
  );
  args.push("--env-file", envFile);
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
  // What ends the wait for /healthz early: wrangler gone, or a build it reported failed.
  const dead = new AbortController();
  const onExit = (code: number | null, signal: NodeJS.Signals | null) =>
    dead.abort(new Error(`wrangler dev exited (${signal ?? `code ${code}`}) before serving`));
  const onData = () => {
    if (BUILD_FAILED.test(plain(output()))) {
      dead.abort(new Error("wrangler dev: the Worker's build failed"));
    }
  };
  child.once("exit", onExit);
  child.stdout?.on("data", onData);
  child.stderr?.on("data", onData);
  try {
    await waitFor(
      "wrangler dev up",
      // wrangler's own server holds a request until the Worker is built: the signal ends it.
      async () =>
        (await fetch(`${base}/healthz`, { signal: dead.signal }).catch(() => undefined))?.ok,
      { signal: dead.signal },
    );
  } catch (err) {
    await stop();
    const reason = err instanceof Error ? err.message : String(err);
    throw new Error(`${reason}\n${plain(output()).slice(-6000)}`);
  } finally {
    child.off("exit", onExit);
    child.stdout?.off("data", onData);
    child.stderr?.off("data", onData);
  }
  return { base, proxy, output, stop };
}
