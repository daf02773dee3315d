// `plumb diff`: what applying an App's source (a revision, or a local directory) would change,
// printed as unified diffs or JSON. Reads the cluster, writes nothing (src/reconcile/diff.ts).
// Loaded only when the verb runs.
import type { Redactor } from "../src/core/index.ts";
import type { RuntimeConfig } from "../src/runtime/config.ts";
import type { VerbArgs } from "./cli-verbs-args.ts";

/** Exit codes of `plumb diff`, as `kubectl diff` and `flux diff` give them. */
export const DIFF_EXIT = { unchanged: 0, changed: 1, error: 2 } as const;

/**
 * Runs `plumb diff` against the cluster of `kubeconfig`: the report on stdout (text, or JSON
 * with `changed`), an error on stderr ("plumb: ..."; every line redacted with `redactor`).
 * @returns 0 nothing would change, 1 something would, 2 an error (the App missing, a failed
 *   step, an object whose dry run the API server refused, a request that failed)
 */
export async function runDiff(
  args: Extract<VerbArgs, { kind: "diff" }>,
  kubeconfig: string | undefined,
  config: RuntimeConfig,
  redactor: Redactor,
): Promise<number> {
  const [{ nodePorts }, loop, plan, node, local] = await Promise.all([
    import("./node-ports.ts"),
    import("../src/reconcile/index.ts"),
    import("../src/plan/index.ts"),
    import("../src/kube/node.ts"),
    import("../src/source/local-dir.ts"),
  ]);
  const namespace = args.namespace ?? node.kubeconfigNamespace(kubeconfig);
  const id = `${namespace}/${args.name}`;
  const ports = nodePorts(kubeconfig, config, redactor)();
  if (args.path !== undefined) ports.git = local.createLocalGitPort(args.path);
  const error = (message: string) => {
    console.error(redactor.redact(`plumb: diff of ${id}: ${message}`));
    return DIFF_EXIT.error;
  };
  let outcome: Awaited<ReturnType<typeof loop.diffApp>>;
  try {
    outcome = await loop.diffApp({ namespace, name: args.name }, ports, new Date(), {
      ref: args.revision,
      local: args.path !== undefined,
    });
  } catch (e) {
    return error(e instanceof Error ? e.message : String(e));
  }
  if (!outcome.ok) {
    if (outcome.notFound) return error(outcome.error);
    return error(`${outcome.reason}: ${outcome.error}`);
  }
  const { report } = outcome;
  const changed = plan.hasChanges(report);
  if (args.output === "json") {
    // Redacted value by value: a short secret quoted in the JSON text ("app") would otherwise
    // be taken for one of its keys.
    console.log(JSON.stringify(redactor.redactValue({ ...report, changed }), null, 2));
  } else {
    process.stdout.write(redactor.redact(plan.formatDiff(report).text));
  }
  if (report.counts.fail > 0) {
    return error(
      `the API server refused the dry run of ${report.counts.fail} object(s): applying would fail`,
    );
  }
  return changed ? DIFF_EXIT.changed : DIFF_EXIT.unchanged;
}
