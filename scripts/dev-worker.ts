// npm run dev:worker: the Worker in workerd (`wrangler dev`) against the local control plane
// that `npm start` (or `npm run cluster:start`) left running in .plumb/cluster.
// workerd's fetch trusts only publicly trusted certificates, so the API server is reached
// through `kubectl proxy` (plain HTTP on 127.0.0.1, authenticating with the kubeconfig's
// identity). KUBE_API_URL and KUBE_TOKEN are passed to wrangler; the other settings come from
// .dev.vars, which this script writes once (a dev API token and webhook secret) if absent.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "..");
const CLUSTER_DIR = join(ROOT, ".plumb/cluster");
const KUBECONFIG = join(CLUSTER_DIR, "kubeconfig");
const DEV_VARS = join(ROOT, ".dev.vars");
const PORT = process.env["PORT"] ?? "8787";

/** A TCP port free on 127.0.0.1 now. */
function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.once("error", fail);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => ok(port));
    });
  });
}

function clusterRunning(): boolean {
  try {
    execFileSync("bash", [join(ROOT, "test/cluster/cluster.sh"), "status", CLUSTER_DIR], {
      stdio: "ignore",
    });
    return true;
  } catch {
    return false;
  }
}

/** Writes .dev.vars with a fresh API token and GitHub webhook secret, unless it exists. */
function ensureDevVars(): void {
  if (existsSync(DEV_VARS)) {
    console.error(`using ${DEV_VARS}`);
    return;
  }
  const token = `dev-${randomBytes(16).toString("hex")}`;
  const secret = randomBytes(16).toString("hex");
  writeFileSync(
    DEV_VARS,
    [
      "# wrangler dev's secrets (gitignored). KUBE_API_URL and KUBE_TOKEN come from npm run dev:worker.",
      `PLUMB_API_TOKENS=[{"name":"dev","token":"${token}"}]`,
      `GITHUB_WEBHOOK_SECRET=${secret}`,
      "",
    ].join("\n"),
    { mode: 0o600 },
  );
  console.error(`wrote ${DEV_VARS}: API token ${token}, GitHub webhook secret ${secret}`);
}

async function main(): Promise<number> {
  if (!clusterRunning()) {
    console.error(
      "no local control plane in .plumb/cluster: run `npm start` (or `npm run cluster:start`) first",
    );
    return 1;
  }
  ensureDevVars();
  const proxyPort = await freePort();
  const kubectl = join(ROOT, "test/cluster/bin/plumb-cluster");
  const proxy: ChildProcess = spawn(
    kubectl,
    ["kubectl", "proxy", "--port", String(proxyPort), "--kubeconfig", KUBECONFIG],
    { stdio: ["ignore", "ignore", "inherit"] },
  );
  const token = readFileSync(join(CLUSTER_DIR, "token"), "utf8").trim();
  console.error(
    `kubectl proxy on http://127.0.0.1:${proxyPort} → the local control plane; the Worker on http://127.0.0.1:${PORT}
try:  curl http://127.0.0.1:${PORT}/healthz
      curl "http://127.0.0.1:${PORT}/__scheduled?cron=*+*+*+*+*"   (the cron: queues the due Apps)`,
  );
  const wrangler = spawn(
    process.execPath,
    [
      join(ROOT, "node_modules/wrangler/bin/wrangler.js"),
      "dev",
      "-c",
      "wrangler.toml",
      "-c",
      "wrangler.render.toml",
      "--ip",
      "127.0.0.1",
      "--port",
      PORT,
      "--test-scheduled",
      "--var",
      `KUBE_API_URL:http://127.0.0.1:${proxyPort}`,
      "--var",
      `KUBE_TOKEN:${token}`,
    ],
    { cwd: ROOT, stdio: "inherit" },
  );
  const stop = () => wrangler.kill("SIGINT");
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  const code = await new Promise<number>((r) => wrangler.on("exit", (c) => r(c ?? 0)));
  proxy.kill();
  return code;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    console.error(err instanceof Error ? err.message : String(err));
    process.exitCode = 1;
  },
);
