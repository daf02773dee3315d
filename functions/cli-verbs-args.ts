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

export const VERBS_USAGE = `  plumb get [[NAMESPACE/]NAME] [-n NS | -A] [-o json] [--kubeconfig FILE]
  plumb approve|reject [NAMESPACE/]NAME [-n NS] [--revision R] [--kubeconfig FILE]
  plumb sync|restart [NAMESPACE/]NAME [-n NS] [--kubeconfig FILE]
  plumb rollback [NAMESPACE/]NAME [-n NS] [--revision R] [--kubeconfig FILE]
  plumb diff [NAMESPACE/]NAME [-n NS] [--revision REF | --path DIR] [-o json] [--kubeconfig FILE]`;

/**
 * An App named on the command line: NAMESPACE/NAME, or NAME in the namespace of -n/--namespace,
 * else (namespace undefined) in the kubeconfig context's namespace, as kubectl and flux read it.
 */
export interface AppTarget {
  namespace: string | undefined;
  name: string;
}

/** What a verb asks for. */
export type VerbArgs =
  | {
      kind: "get";
      /** One App, or undefined for a list. */
      target: AppTarget | undefined;
      /** -A/--all-namespaces: every namespace. */
      allNamespaces: boolean;
      /** -n/--namespace of a list; undefined: the kubeconfig context's namespace. */
      namespace: string | undefined;
      output: "table" | "json";
      kubeconfig: string | undefined;
    }
  | {
      /** `plumb diff`: what applying a revision (or a local directory) would change. */
      kind: "diff";
      /** undefined: the kubeconfig context's namespace (see {@link AppTarget}). */
      namespace: string | undefined;
      name: string;
      /** --revision: a Git ref (branch, tag, commit) instead of the App's. */
      revision: string | undefined;
      /** --path: a local directory rendered in place of the App's Git path. */
      path: string | undefined;
      output: "text" | "json";
      kubeconfig: string | undefined;
    }
  | {
      kind: "operate";
      type: (typeof OPERATION_VERBS)[OperationVerb];
      /** undefined: the kubeconfig context's namespace (see {@link AppTarget}). */
      namespace: string | undefined;
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
  path?: string | undefined;
  kubeconfig?: string | undefined;
}

/** Options only the verbs take: refused by `reconcile` and `serve`. */
export const VERB_ONLY_OPTIONS = ["output", "revision", "path"] as const;

/** A Namespace's name (an RFC 1123 label). */
const NAMESPACE = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;
/** An App's name (an RFC 1123 subdomain). */
const NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

/**
 * The App `target` names (NAMESPACE/NAME or NAME) with `namespace` (-n/--namespace, if given),
 * or a usage error: a malformed target or namespace, or both NAMESPACE/ and -n.
 */
export function parseTarget(
  target: string,
  namespace: string | undefined,
): AppTarget | { error: string } {
  if (namespace !== undefined && !NAMESPACE.test(namespace)) {
    return { error: `--namespace must be a namespace name, got ${JSON.stringify(namespace)}` };
  }
  const slash = target.indexOf("/");
  const ns = slash < 0 ? undefined : target.slice(0, slash);
  const name = slash < 0 ? target : target.slice(slash + 1);
  if ((ns !== undefined && !NAMESPACE.test(ns)) || !NAME.test(name)) {
    return { error: `expected NAME or NAMESPACE/NAME, got ${JSON.stringify(target)}` };
  }
  if (ns === undefined) return { namespace, name };
  if (namespace !== undefined) return { error: "give NAMESPACE/NAME or --namespace, not both" };
  return { namespace: ns, name };
}

/** Whether `command` is one of the verbs of this file. */
export function isVerb(command: string): boolean {
  return command === "get" || command === "diff" || Object.hasOwn(OPERATION_VERBS, command);
}

/**
 * Validates a verb's arguments. An App is NAMESPACE/NAME or NAME with -n/--namespace (or the
 * context's namespace), as kubectl and flux spell it ({@link parseTarget}). Usage errors:
 * extra positionals, a bad target (or a missing one for operations), `-A` with a target or
 * with -n, -A for an operation or diff (they act on one App), `-o` other than json,
 * --revision on a verb that takes none (sync, restart, get), a revision longer than 256
 * characters, --path but on diff (and with --revision), and options of other commands
 * (--all, --force, --port, --schedule, --tick).
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
  const all = values["all-namespaces"] === true;
  if (all && values.namespace !== undefined) return usage("give --namespace or -A, not both");
  let ref: AppTarget | undefined;
  if (target !== undefined) {
    const parsed = parseTarget(target, values.namespace);
    if ("error" in parsed) return usage(parsed.error);
    ref = parsed;
  } else if (values.namespace !== undefined && !NAMESPACE.test(values.namespace)) {
    return usage(`--namespace must be a namespace name, got ${JSON.stringify(values.namespace)}`);
  }
  const revision = values.revision;
  if (revision !== undefined && (revision === "" || revision.length > 256)) {
    return usage("--revision must be 1 to 256 characters");
  }

  if (values.path !== undefined && command !== "diff") {
    return usage(`--path is not an option of ${command}`);
  }
  if (command === "diff") {
    if (all) return usage("--all-namespaces is not an option of diff (it acts on one App)");
    if (!ref) return usage("diff needs NAME or NAMESPACE/NAME");
    if (values.output !== undefined && values.output !== "json") {
      return usage(
        `-o must be json (the default is a unified diff), got ${JSON.stringify(values.output)}`,
      );
    }
    if (values.path === "") return usage("--path needs a directory");
    if (values.path !== undefined && revision !== undefined) {
      return usage("give --revision or --path, not both");
    }
    return {
      kind: "diff",
      ...ref,
      revision,
      path: values.path,
      output: values.output === "json" ? "json" : "text",
      kubeconfig: values.kubeconfig,
    };
  }

  if (command === "get") {
    if (revision !== undefined) return usage("--revision is not an option of get");
    if (all && ref) return usage("give NAMESPACE/NAME or -A, not both");
    if (values.output !== undefined && values.output !== "json") {
      return usage(
        `-o must be json (the default is a table), got ${JSON.stringify(values.output)}`,
      );
    }
    return {
      kind: "get",
      target: ref,
      allNamespaces: all,
      namespace: ref ? undefined : values.namespace,
      output: values.output === "json" ? "json" : "table",
      kubeconfig: values.kubeconfig,
    };
  }

  const type = OPERATION_VERBS[command as OperationVerb];
  if (all) return usage(`--all-namespaces is not an option of ${command} (it acts on one App)`);
  if (values.output !== undefined) return usage(`--output is not an option of ${command}`);
  if (!ref) return usage(`${command} needs NAME or NAMESPACE/NAME`);
  if (revision !== undefined && (type === "Sync" || type === "Restart")) {
    return usage(`--revision is not an option of ${command}`);
  }
  return { kind: "operate", type, ...ref, revision, kubeconfig: values.kubeconfig };
}
