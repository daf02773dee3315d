// The two long-running plumb servers the webhook and cron measurements drive: `plumb serve`
// (Node) and the Worker in workerd (wrangler dev, reaching the API server through the
// plain-HTTP fault proxy of test/support, as test/e2e/worker.test.ts does).
import { spawn } from "node:child_process";
import { join } from "node:path";
import {
  capture,
  freePort,
  startWorkerd as startWorkerdWith,
  stopChild,
  type Workerd,
} from "../test/support/workerd.ts";
import { fileExists, ROOT, waitFor } from "./kube.ts";

export const WEBHOOK_SECRET = "bench-webhook-secret";
const API_TOKENS = JSON.stringify([{ name: "bench", token: "bench-api-token-0123456789" }]);

export interface Server {
  base: string;
  /** Output so far (stdout and stderr), last 200 kB. */
  output(): string;
  stop(): Promise<void>;
}

/** `node functions/plumb.mjs serve --port P --kubeconfig K` (the bin). */
export async function startNodeServer(kubeconfig: string): Promise<Server> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [
      join(ROOT, "functions/plumb.mjs"),
      "serve",
      "--port",
      String(port),
      "--kubeconfig",
      kubeconfig,
    ],
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
    if (!fileExists(join(dir, f))) return `${join(dir, f)} not found (needed for the fault proxy)`;
  return undefined;
}

/** The Worker in workerd with the benchmark's webhook secret and API token. */
export function startWorkerd(kubeconfig: string): Promise<Workerd> {
  return startWorkerdWith(kubeconfig, {
    GITHUB_WEBHOOK_SECRET: WEBHOOK_SECRET,
    PLUMB_API_TOKENS: API_TOKENS,
  });
}
