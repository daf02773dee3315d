#!/usr/bin/env node
// plumb CLI: `plumb reconcile NAMESPACE/NAME`, `plumb reconcile --all [--force] [--every D]
// [--shard I/N]`, `plumb serve --port N`,
// and the verbs for people (`plumb get`, `plumb approve` ...: functions/cli-verbs.ts;
// `plumb diff`: functions/cli-diff.ts).
// Exit codes: 0 ok, 1 an App failed or was not found (or a fatal error), 2 a usage error
// (`plumb diff`: 0 unchanged, 1 changed, 2 an error).
import { existsSync } from "node:fs";
import { Redactor } from "../src/core/redact.ts";
import { findKubeconfig, parseCliArgs, singleResult, USAGE } from "./cli-args.ts";

/** The process's secret values: every run registers its own; every line printed is redacted. */
const redactor = new Redactor();

/** The exit code of an error main did not expect: 1, or 2 for `plumb diff` (its error code). */
let errorCode = 1;

async function main(argv: string[]): Promise<number> {
  const args = parseCliArgs(argv);
  if (args.kind === "diff") errorCode = 2;
  if (args.kind === "help") {
    const { helpText } = await import("./cli-help.ts");
    console.log(helpText(args.command));
    return 0;
  }
  if (args.kind === "usage") {
    console.error(`plumb: ${args.error}\n${USAGE}`);
    return 2;
  }
  // Loaded after the arguments are checked: a usage error answers at once.
  const { parseRuntimeConfig } = await import("../src/runtime/config.ts");
  const config = parseRuntimeConfig(process.env);
  const found = findKubeconfig(args.kubeconfig, process.env, existsSync);
  if ("error" in found) throw new Error(found.error);
  const kubeconfig = found.path;
  if (args.kind === "diff") {
    const { runDiff } = await import("./cli-diff.ts");
    return runDiff(args, kubeconfig, config, redactor);
  }
  if (args.kind === "get" || args.kind === "operate") {
    const { runVerb } = await import("./cli-verbs.ts");
    return runVerb(args, kubeconfig);
  }
  if (args.kind === "serve") {
    const { serve } = await import("./node.ts");
    await serve(args.port, kubeconfig, config, redactor, {
      ...(args.schedule ? { scheduleEveryMs: args.tickMs } : {}),
    });
    return 0;
  }
  const print = (r: object) => console.log(JSON.stringify(redactor.redactValue(r)));
  if (args.kind === "reconcile-all") {
    // A scheduled tick (cli-tick.ts): loads the reconcile loop only when some App is due.
    const { runTick } = await import("./cli-tick.ts");
    return runTick(args, kubeconfig, config, redactor, print);
  }
  const [loop, { nodePorts }] = await Promise.all([
    import("../src/reconcile/index.ts"),
    import("./node-ports.ts"),
  ]);
  const ports = nodePorts(kubeconfig, config, redactor);
  // One App, asked for by a person (--force or not): always a full comparison (drift is looked
  // for now); it does not move the App's schedule, which is derived, not stored.
  // NAME without -n: the kubeconfig context's namespace, as kubectl reads it.
  const namespace =
    args.namespace ?? (await import("../src/kube/node.ts")).kubeconfigNamespace(kubeconfig);
  const target = { namespace, name: args.name };
  const { line, code } = singleResult(
    await loop.reconcileApp(target, ports(), new Date(), { compare: true }),
  );
  print(line);
  return code;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    const error = redactor.redact(err instanceof Error ? err.message : String(err));
    console.error(JSON.stringify({ error }));
    process.exitCode = errorCode;
  },
);
