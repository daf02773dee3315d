#!/usr/bin/env node
// plumb CLI: `plumb reconcile NAMESPACE/NAME`, `plumb reconcile --all [--force]`, `plumb serve --port N`.
import { parseArgs } from "node:util";
import { isDue } from "../src/plan/index.ts";
import { reconcileApp, reconcileMany, skippedResult } from "../src/reconcile/index.ts";
import { parseRuntimeConfig } from "../src/runtime/config.ts";
import { nodePorts } from "./node-ports.ts";

const USAGE = `usage:
  plumb reconcile NAMESPACE/NAME [--kubeconfig FILE]
  plumb reconcile --all [--force] [--namespace NS] [--kubeconfig FILE]
  plumb serve [--port N] [--kubeconfig FILE]`;

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      all: { type: "boolean", default: false },
      force: { type: "boolean", default: false },
      namespace: { type: "string" },
      kubeconfig: { type: "string" },
      port: { type: "string", default: "8080" },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  const [command, target] = positionals;
  if (values.help || !command) {
    console.log(USAGE);
    return values.help ? 0 : 2;
  }
  const config = parseRuntimeConfig(process.env);
  const kubeconfig = values.kubeconfig ?? process.env["KUBECONFIG"];
  if (command === "serve") {
    const { serve } = await import("./node.ts");
    await serve(Number(values.port), kubeconfig, config);
    return 0;
  }
  if (command !== "reconcile") {
    console.error(`unknown command "${command}"\n${USAGE}`);
    return 2;
  }
  const ports = nodePorts(kubeconfig, config);
  const print = (r: object) => console.log(JSON.stringify(r));
  if (values.all) {
    // A scheduled run: due Apps are reconciled, the others get a Skipped line (--force: all).
    const now = new Date();
    const apps = await ports().kube.listApps(values.namespace);
    const due = values.force ? apps : apps.filter((a) => isDue(a, now));
    for (const app of apps) if (!due.includes(app)) print(skippedResult(app));
    const refs = due.map((a) => ({ namespace: a.metadata.namespace, name: a.metadata.name }));
    const results = await reconcileMany(refs, ports, () => new Date(), print, config.concurrency);
    return results.some((r) => r.outcome === "Failed") ? 1 : 0;
  }
  const m = /^([a-z0-9-]+)\/([a-z0-9.-]+)$/.exec(target ?? "");
  if (!m) {
    console.error(`expected NAMESPACE/NAME, got "${target ?? ""}"\n${USAGE}`);
    return 2;
  }
  const result = await reconcileApp({ namespace: m[1]!, name: m[2]! }, ports(), new Date());
  print(result);
  return result.outcome === "Failed" ? 1 : 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    console.error(JSON.stringify({ error: err instanceof Error ? err.message : String(err) }));
    process.exitCode = 1;
  },
);
