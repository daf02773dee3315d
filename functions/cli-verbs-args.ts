// Pure argument checks of the CLI verbs for people: `plumb get` and the operations.
// No I/O here; functions/cli-verbs.ts carries them out.

/** The verbs that request an operation, and the operation each writes. */
export const OPERATION_VERBS = {
  approve: "Approve",
  reject: "Reject",
  sync: "Sync",
  rollback: "Rollback",
  restart: "Restart",
} as const;
export type OperationVerb = keyof typeof OPERATION_VERBS;

export const VERBS_USAGE = `  plumb get [NAMESPACE/NAME] [-A | --namespace NS] [-o json] [--kubeconfig FILE]
  plumb approve|reject NAMESPACE/NAME [--revision R] [--kubeconfig FILE]
  plumb sync|restart NAMESPACE/NAME [--kubeconfig FILE]
  plumb rollback NAMESPACE/NAME [--revision R] [--kubeconfig FILE]`;

/** What a verb asks for. */
export type VerbArgs =
  | {
      kind: "get";
      /** One App, or undefined for a list. */
      target: { namespace: string; name: string } | undefined;
      /** -A: every namespace. */
      allNamespaces: boolean;
      /** --namespace; undefined: the kubeconfig context's namespace. */
      namespace: string | undefined;
      output: "table" | "json";
      kubeconfig: string | undefined;
    }
  | {
      kind: "operate";
      type: (typeof OPERATION_VERBS)[OperationVerb];
      namespace: string;
      name: string;
      revision: string | undefined;
      kubeconfig: string | undefined;
    };

/** The parsed options verbs read (a subset of the CLI's parseArgs values). */
export interface VerbOptions {
  all?: boolean | undefined;
  force?: boolean | undefined;
  port?: string | undefined;
  schedule?: boolean | undefined;
  tick?: string | undefined;
  namespace?: string | undefined;
  "all-namespaces"?: boolean | undefined;
  output?: string | undefined;
  revision?: string | undefined;
  kubeconfig?: string | undefined;
}

/** Options only the verbs take: refused by `reconcile` and `serve`. */
export const VERB_ONLY_OPTIONS = ["all-namespaces", "output", "revision"] as const;

const TARGET = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?)\/([a-z0-9]([-a-z0-9.]*[a-z0-9])?)$/;
const NAMESPACE = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

/** Whether `command` is one of the verbs of this file. */
export function isVerb(command: string): boolean {
  return command === "get" || Object.hasOwn(OPERATION_VERBS, command);
}

/**
 * Validates a verb's arguments. Usage errors: extra positionals, a bad NAMESPACE/NAME (or a
 * missing one for operations), `-A` with a target or with --namespace, `-o` other than json,
 * --revision on a verb that takes none (sync, restart, get), a revision longer than 256
 * characters, and options of other commands (--all, --force, --port, --schedule, --tick).
 */
export function parseVerbArgs(
  command: string,
  rest: readonly string[],
  values: VerbOptions,
): VerbArgs | { kind: "usage"; error: string } {
  const usage = (error: string) => ({ kind: "usage" as const, error });
  const misplaced = (["all", "force", "port", "schedule", "tick"] as const).find(
    (o) => values[o] !== undefined,
  );
  if (misplaced) return usage(`--${misplaced} is not an option of ${command}`);
  const [target, ...more] = rest;
  if (more.length > 0) return usage(`unexpected argument ${JSON.stringify(more[0])}`);
  const m = target === undefined ? undefined : TARGET.exec(target);
  if (target !== undefined && (!m?.[1] || !m[3] || target.length > 317)) {
    return usage(`expected NAMESPACE/NAME, got ${JSON.stringify(target)}`);
  }
  const ref = m?.[1] && m[3] ? { namespace: m[1], name: m[3] } : undefined;
  const revision = values.revision;
  if (revision !== undefined && (revision === "" || revision.length > 256)) {
    return usage("--revision must be 1 to 256 characters");
  }

  if (command === "get") {
    if (revision !== undefined) return usage("--revision is not an option of get");
    const all = values["all-namespaces"] === true;
    if (all && ref) return usage("give NAMESPACE/NAME or -A, not both");
    if (all && values.namespace !== undefined) return usage("give --namespace or -A, not both");
    if (ref && values.namespace !== undefined)
      return usage("give NAMESPACE/NAME or --namespace, not both");
    if (values.namespace !== undefined && !NAMESPACE.test(values.namespace)) {
      return usage(`--namespace must be a namespace name, got ${JSON.stringify(values.namespace)}`);
    }
    if (values.output !== undefined && values.output !== "json") {
      return usage(
        `-o must be json (the default is a table), got ${JSON.stringify(values.output)}`,
      );
    }
    return {
      kind: "get",
      target: ref,
      allNamespaces: all,
      namespace: values.namespace,
      output: values.output === "json" ? "json" : "table",
      kubeconfig: values.kubeconfig,
    };
  }

  const type = OPERATION_VERBS[command as OperationVerb];
  for (const o of ["all-namespaces", "output", "namespace"] as const) {
    if (values[o] !== undefined) return usage(`--${o} is not an option of ${command}`);
  }
  if (!ref) return usage(`${command} needs NAMESPACE/NAME`);
  if (revision !== undefined && (type === "Sync" || type === "Restart")) {
    return usage(`--revision is not an option of ${command}`);
  }
  return { kind: "operate", type, ...ref, revision, kubeconfig: values.kubeconfig };
}
