// Pure parts of the plumb CLI: argument validation, the kubeconfig check and the single-target
// result. No I/O here (the file system is passed in), so all of it is unit-tested.
import { join } from "node:path";
import { parseArgs } from "node:util";
import { parseDuration } from "../src/app/duration.ts";
import { HELP_TOPICS } from "./cli-help.ts";
import {
  isVerb,
  parseTarget,
  parseVerbArgs,
  VERB_ONLY_OPTIONS,
  VERBS_USAGE,
  type VerbArgs,
} from "./cli-verbs-args.ts";

export const USAGE = `usage:
  plumb reconcile [NAMESPACE/]NAME [-n NS] [--force] [--kubeconfig FILE]
  plumb reconcile --all [--force] [-n NS | -A] [--every DURATION] [--shard I/N] [--kubeconfig FILE]
  plumb serve [--port N] [--schedule [--tick DURATION]] [--kubeconfig FILE]
${VERBS_USAGE}
  plumb help [COMMAND]      (or plumb COMMAND --help: options, environment, output, exit codes)`;

/** What the command line asks for, or why it is a usage error (exit code 2). */
export type CliArgs =
  | VerbArgs
  /** `plumb help [COMMAND]`, or --help anywhere: the command's page (the overview for none). */
  | { kind: "help"; command: string | undefined }
  | { kind: "usage"; error: string }
  | {
      kind: "serve";
      port: number;
      /** Run the schedule in this process: every `tickMs`, reconcile the due Apps. */
      schedule: boolean;
      tickMs: number;
      kubeconfig: string | undefined;
    }
  | {
      kind: "reconcile";
      /** undefined: the kubeconfig context's namespace (NAME without -n, as kubectl reads it). */
      namespace: string | undefined;
      name: string;
      /** Accepted for one App too: a run a person asks for is always a full one. */
      force: boolean;
      kubeconfig: string | undefined;
    }
  | {
      kind: "reconcile-all";
      force: boolean;
      namespace: string | undefined;
      kubeconfig: string | undefined;
      /** --every: how often the scheduler runs this command, ms (undefined: one minute). */
      everyMs?: number | undefined;
      /** --shard I/N: only the Apps of shard I of N (an Indexed Job's completion index). */
      shard?: { index: number; count: number } | undefined;
    };

const DEFAULT_PORT = 8080;
/** `serve --schedule` looks for due Apps every minute unless --tick says otherwise (the Worker's cron). */
export const DEFAULT_TICK_MS = 60_000;
const NAMESPACE = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * Validates `argv` (without node and the script). An App is NAMESPACE/NAME or NAME with
 * -n/--namespace (else the context's namespace), -A is --all-namespaces, as kubectl and flux
 * spell them. Refused (kind "usage"): unknown options or a missing option value, an unknown or
 * missing command, extra positionals, a bad or missing target, a target together with --all,
 * -n without a NAME or --all, -A without --all or with -n, options of the other command
 * (--port with reconcile; --all, --force, -n, -A with serve), and a
 * --port that is not an integer in 1–65535, an --every that is not a duration from 1s to 24h,
 * a --shard that is not I/N with 0 ≤ I < N ≤ 1000. `kubeconfig` is the --kubeconfig value as
 * given.
 */
export function parseCliArgs(argv: readonly string[]): CliArgs {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (err) {
    // parseArgs throws TypeError (ERR_PARSE_ARGS_UNKNOWN_OPTION, ..._INVALID_OPTION_VALUE).
    return { kind: "usage", error: err instanceof Error ? err.message : String(err) };
  }
  const { values, positionals } = parsed;
  if (values.help) {
    return { kind: "help", command: positionals[0] === "help" ? positionals[1] : positionals[0] };
  }
  const [command, ...rest] = positionals;
  if (command === "help") {
    if (rest.length > 1) return extra(rest.slice(1));
    const topic = rest[0];
    if (topic !== undefined && !HELP_TOPICS.includes(topic)) {
      return { kind: "usage", error: `no help for ${JSON.stringify(topic)}: unknown command` };
    }
    return { kind: "help", command: topic };
  }
  const kubeconfig = values.kubeconfig;
  if (kubeconfig === "") return { kind: "usage", error: "--kubeconfig needs a file name" };
  if (command === undefined) return { kind: "usage", error: "missing command" };
  if (isVerb(command)) return parseVerbArgs(command, rest, values);
  const verbOnly = VERB_ONLY_OPTIONS.find((o) => values[o] !== undefined);
  if (verbOnly) return { kind: "usage", error: `--${verbOnly} is not an option of ${command}` };

  if (command === "serve") {
    if (rest.length > 0) return extra(rest);
    const misplaced = (
      ["all", "force", "namespace", "all-namespaces", "every", "shard"] as const
    ).find((o) => values[o] !== undefined);
    if (misplaced) return { kind: "usage", error: `--${misplaced} is not an option of serve` };
    let port = DEFAULT_PORT;
    if (values.port !== undefined) {
      if (
        !/^[0-9]{1,5}$/.test(values.port) ||
        Number(values.port) < 1 ||
        Number(values.port) > 65535
      ) {
        return {
          kind: "usage",
          error: `--port must be an integer from 1 to 65535, got ${JSON.stringify(values.port)}`,
        };
      }
      port = Number(values.port);
    }
    let tickMs = DEFAULT_TICK_MS;
    if (values.tick !== undefined) {
      if (!values.schedule) return { kind: "usage", error: "--tick needs --schedule" };
      const ms = durationMs(values.tick);
      if (ms === undefined || ms < 1000 || ms > 3_600_000) {
        return {
          kind: "usage",
          error: `--tick must be a duration from 1s to 1h such as 30s or 1m, got ${JSON.stringify(values.tick)}`,
        };
      }
      tickMs = ms;
    }
    return { kind: "serve", port, schedule: values.schedule === true, tickMs, kubeconfig };
  }

  if (command !== "reconcile") {
    return { kind: "usage", error: `unknown command ${JSON.stringify(command)}` };
  }
  for (const o of ["port", "schedule", "tick"] as const) {
    if (values[o] !== undefined) return { kind: "usage", error: `--${o} is an option of serve` };
  }
  const [target, ...more] = rest;
  if (more.length > 0) return extra(more);
  if (values["all-namespaces"] && values.namespace !== undefined) {
    return { kind: "usage", error: "give --namespace or -A, not both" };
  }
  if (values.all) {
    if (target !== undefined) {
      return {
        kind: "usage",
        error: `give NAMESPACE/NAME or --all, not both (got ${JSON.stringify(target)})`,
      };
    }
    const namespace = values.namespace;
    if (namespace !== undefined && !NAMESPACE.test(namespace)) {
      return {
        kind: "usage",
        error: `--namespace must be a namespace name, got ${JSON.stringify(namespace)}`,
      };
    }
    const everyMs = values.every === undefined ? undefined : boundedDurationMs(values.every);
    if (everyMs === null) {
      return {
        kind: "usage",
        error: `--every must be a duration from 1s to 24h (how often this command runs), got ${JSON.stringify(values.every)}`,
      };
    }
    const shard = values.shard === undefined ? undefined : parseShard(values.shard);
    if (shard === null) {
      return {
        kind: "usage",
        error: `--shard must be I/N with 0 <= I < N <= ${MAX_SHARDS}, got ${JSON.stringify(values.shard)}`,
      };
    }
    return {
      kind: "reconcile-all",
      force: values.force === true,
      namespace,
      kubeconfig,
      everyMs,
      shard,
    };
  }
  if (values.every !== undefined) return { kind: "usage", error: "--every needs --all" };
  if (values.shard !== undefined) return { kind: "usage", error: "--shard needs --all" };
  if (values["all-namespaces"]) {
    return {
      kind: "usage",
      error: "-A needs --all (plumb reconcile --all reconciles the due Apps of every namespace)",
    };
  }
  if (target === undefined) {
    return {
      kind: "usage",
      error:
        values.namespace === undefined
          ? "expected NAME, NAMESPACE/NAME or --all"
          : "--namespace needs a NAME or --all (plumb reconcile --all -n NS reconciles the due Apps of NS)",
    };
  }
  const app = parseTarget(target, values.namespace);
  if ("error" in app) return { kind: "usage", error: app.error };
  return { kind: "reconcile", ...app, force: values.force === true, kubeconfig };
}

function parse(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    allowPositionals: true,
    strict: true,
    options: {
      all: { type: "boolean" },
      force: { type: "boolean" },
      namespace: { type: "string", short: "n" },
      every: { type: "string" },
      shard: { type: "string" },
      kubeconfig: { type: "string" },
      port: { type: "string" },
      schedule: { type: "boolean" },
      tick: { type: "string" },
      "all-namespaces": { type: "boolean", short: "A" },
      output: { type: "string", short: "o" },
      revision: { type: "string" },
      path: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
}

/** Most shards `--shard` takes (an Indexed Job's completions). */
const MAX_SHARDS = 1000;

/** A Go duration from 1s to 24h in ms, or null. */
function boundedDurationMs(text: string): number | null {
  try {
    const ms = parseDuration(text);
    return ms >= 1000 && ms <= 86_400_000 ? ms : null;
  } catch {
    return null;
  }
}

/** "I/N" with 0 ≤ I < N ≤ MAX_SHARDS, or null. */
function parseShard(text: string): { index: number; count: number } | null {
  const m = /^([0-9]{1,4})\/([0-9]{1,4})$/.exec(text);
  if (!m) return null;
  const index = Number(m[1]);
  const count = Number(m[2]);
  return count >= 1 && count <= MAX_SHARDS && index < count ? { index, count } : null;
}

/** Milliseconds of a Go-style duration ("30s", "1m", "1m30s"), or undefined. */
function durationMs(text: string): number | undefined {
  try {
    return parseDuration(text);
  } catch {
    return undefined;
  }
}

function extra(args: readonly string[]): CliArgs {
  return { kind: "usage", error: `unexpected argument ${JSON.stringify(args[0])}` };
}

/** Where the service-account token of a Pod is mounted (in-cluster configuration). */
export const SERVICE_ACCOUNT_TOKEN = "/var/run/secrets/kubernetes.io/serviceaccount/token";

export const NO_KUBECONFIG =
  "no kubeconfig: set KUBECONFIG or pass --kubeconfig (npm start runs a local control plane)";

/**
 * The kubeconfig to load: --kubeconfig, else $KUBECONFIG, else undefined (the client's default
 * rules: ~/.kube/config, then the in-cluster service account).
 * @returns `{ error }` when none of those exists, where the client would fall back to
 *   http://localhost:8080 and fail with a confusing TLS message.
 */
export function findKubeconfig(
  flag: string | undefined,
  env: Record<string, string | undefined>,
  exists: (path: string) => boolean,
): { path: string | undefined } | { error: string } {
  if (flag) return { path: flag };
  const fromEnv = env["KUBECONFIG"];
  if (fromEnv) return { path: fromEnv };
  const home = env["HOME"] || env["USERPROFILE"];
  if (home && exists(join(home, ".kube", "config"))) return { path: undefined };
  if (exists(SERVICE_ACCOUNT_TOKEN)) return { path: undefined };
  return { error: NO_KUBECONFIG };
}

/** What the CLI reads of a reconcile result. */
export interface RunLine {
  app: string;
  outcome: string;
  error?: string;
}

/**
 * The JSON line and exit code of a single-target reconcile: 1 when it failed or the App does
 * not exist (with `error: "App ns/name not found"`), else 0.
 */
export function singleResult<T extends RunLine>(result: T): { line: T; code: number } {
  if (result.outcome === "NotFound") {
    return { line: { ...result, error: `App ${result.app} not found` }, code: 1 };
  }
  return { line: result, code: result.outcome === "Failed" ? 1 : 0 };
}
