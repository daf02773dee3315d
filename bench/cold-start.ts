// Measurement 8: the Worker's cold start — time from starting workerd
// with the deployable bundle (wrangler deploy --dry-run's worker.js) to its first answer
// (GET /healthz), beside the same for an empty Worker, so the difference is plumb's own.
// Standalone: `node bench/cold-start.ts path/to/worker.js`.
import { spawn } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { freePort, stopChild } from "../test/support/workerd.ts";
import { ROOT } from "./kube.ts";
import { type ColdStartResult, coldStartLine } from "./process-report.ts";

const WORKERD = join(ROOT, "node_modules/workerd/bin/workerd");
const EMPTY = 'export default { fetch() { return new Response("ok"); } };\n';

/** Starts workerd on `workerJs` `runs` times (and an empty Worker as many), timing each. */
export async function coldStart(workerJs: string, runs = 5): Promise<ColdStartResult> {
  const date = /compatibility_date\s*=\s*"([^"]+)"/.exec(
    readFileSync(join(ROOT, "wrangler.toml"), "utf8"),
  )?.[1];
  if (!date) throw new Error("wrangler.toml has no compatibility_date");
  const dir = mkdtempSync(join(tmpdir(), "plumb-bench-coldstart-"));
  try {
    copyFileSync(workerJs, join(dir, "plumb.js"));
    writeFileSync(join(dir, "empty.js"), EMPTY);
    const result: ColdStartResult = { plumbMs: [], emptyMs: [] };
    for (let i = 0; i < runs; i++) {
      result.plumbMs.push(await firstAnswer(dir, "plumb.js", date));
      result.emptyMs.push(await firstAnswer(dir, "empty.js", date));
    }
    return result;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One workerd start: spawn → first 200 from /healthz (polled every 2 ms), then stop it. */
async function firstAnswer(dir: string, module: string, date: string): Promise<number> {
  const port = await freePort();
  const config = join(dir, `${module}.capnp`);
  writeFileSync(
    config,
    `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [ (name = "main", worker = .w) ],
  sockets = [ (name = "http", address = "127.0.0.1:${port}", http = (), service = "main") ],
);
const w :Workerd.Worker = (
  modules = [ (name = "${module}", esModule = embed "${module}") ],
  compatibilityDate = "${date}",
  compatibilityFlags = ["nodejs_compat"],
  bindings = [ (name = "KUBE_API_URL", text = "https://127.0.0.1:1"), (name = "KUBE_TOKEN", text = "bench") ],
);
`,
  );
  const t0 = performance.now();
  const child = spawn(WORKERD, ["serve", config], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr?.on("data", (d) => (stderr += d));
  try {
    while (performance.now() - t0 < 30_000) {
      const res = await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined);
      if (res) {
        await res.text();
        if (res.status === 200) return performance.now() - t0;
        throw new Error(`workerd answered ${res.status} for ${module}`);
      }
      if (child.exitCode !== null) throw new Error(`workerd exited: ${stderr.slice(-1000)}`);
      await new Promise((r) => setTimeout(r, 2));
    }
    throw new Error(`workerd did not answer within 30 s: ${stderr.slice(-1000)}`);
  } finally {
    await stopChild(child);
  }
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  const file = process.argv[2];
  if (!file) throw new Error("usage: node bench/cold-start.ts path/to/worker.js");
  console.log(coldStartLine(await coldStart(resolve(file))));
}
