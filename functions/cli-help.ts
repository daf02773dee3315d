// `plumb help [COMMAND]` and `plumb COMMAND --help`: per command, what it does, its
// options, the environment it reads, what it prints and its exit codes. Pure text.
import { VERBS_USAGE } from "./cli-verbs-args.ts";

const KUBE = `  KUBECONFIG                   the cluster (else ~/.kube/config, else the in-cluster service
                               account); --kubeconfig FILE wins`;

const RUN_ENV = `${KUBE}
  PLUMB_ALLOWED_DESTINATIONS   namespaces an App may deploy to besides its own (comma list, or *)
  PLUMB_ALLOWED_CLUSTER_KINDS  cluster-scoped kinds Apps may apply besides Namespaces (Kind,
                               group/Kind, or *)
  PLUMB_CONCURRENCY            Apps reconciled at once (default 4)
  PLUMB_INGRESS_CLASS, PLUMB_CLUSTER_ISSUER
                               how spec.source.app renders Ingresses
  PLUMB_CLOUDFLARE_API_TOKEN, PLUMB_CLOUDFLARE_ZONE_ID, PLUMB_DNS_ZONE, PLUMB_DNS_TARGET,
  PLUMB_DNS_PROXIED            DNS records for the Apps' hosts (all four or none)`;

const RUN_LINE = `Output: one JSON line per App on stdout:
  {"app": "NS/NAME", "outcome": "Reconciled|Failed|Finalized|NotFound|Skipped",
   "syncStatus", "healthStatus", "revision", "error" (when failed), "followUpSeconds" (still
   Progressing: run again then), "requests": {"get", "list", "create", "update", "patch",
   "delete"}}
Logs go to stderr as JSON. Secret values never appear in either.`;

const COMMANDS: Record<string, string> = {
  reconcile: `usage:
  plumb reconcile [NAMESPACE/]NAME [-n NS] [--force] [--kubeconfig FILE]
  plumb reconcile --all [--force] [-n NS | -A] [--every DURATION] [--shard I/N] [--kubeconfig FILE]

Reconciles Apps once: resolve the source, render, apply with server-side apply, prune, check
health, write status, tell Slack about transitions.

  NAMESPACE/NAME   one App, now, always in full: every object is compared with the source, so
                   drift shows at once (--force is accepted and means the same); the App's
                   schedule is derived, not stored, so this does not move it. NAME alone: in
                   -n NS, else in the kubeconfig context's namespace (as kubectl)
  --all            the scheduled tick (a CronJob, cron, Lambda): only the due Apps (their slot
                   in spec.interval fell since the last tick, never reconciled, spec changed, an
                   operation pending, Progressing, a failure's backoff passed, a sync window
                   opened, notifications to redeliver, being deleted); a "Skipped" line with
                   nextReconcileAt for the others
  --force          with --all: every App, each in full
  -n, --namespace NS
                   with --all: only the Apps of NS; with NAME: the App's namespace
  -A, --all-namespaces
                   with --all: every namespace (the default)
  --every DURATION with --all: how often the scheduler runs this (1s to 24h, default 1m); a tick
                   covers the slots of the last period
  --shard I/N      with --all: only shard I of N (by uid), e.g. an Indexed Job's completion index

Environment:
${RUN_ENV}

${RUN_LINE}

Exit codes: 0 every App reconciled; 1 an App failed or does not exist (or the cluster could
not be reached); 2 a usage error.`,

  serve: `usage:
  plumb serve [--port N] [--schedule [--tick DURATION]] [--kubeconfig FILE]

Serves the HTTP API (webhooks, /api/v1, the web page, Slack's buttons, /metrics, /healthz) on
127.0.0.1:N (default 8080) until stopped; triggered reconciles run in this process. A run that
leaves objects Progressing gets its follow-up run by timer.

  --port N         the port (1-65535, default 8080)
  --schedule       also run the schedule here: every tick, reconcile the due Apps (deleted ones
                   among them), as the Worker's cron does; without it, run
                   \`plumb reconcile --all\` from a scheduler
  --tick DURATION  how often with --schedule (1s to 1h, default 1m)

Environment (besides those of \`plumb help reconcile\`):
${KUBE}
  PLUMB_HOST                   the address to listen on (default 127.0.0.1)
  PLUMB_API_TOKENS             JSON array of {name, token, namespaces?}: who may use /api and
                               the web page (none: every such request is 401; a warning says so)
  GITHUB_WEBHOOK_SECRET, GITLAB_WEBHOOK_TOKEN, GITEA_WEBHOOK_SECRET
                               webhook secrets (a provider without one answers 404)
  PLUMB_SESSION_KEY            the web page's session key (32+ characters; unset: no page)
  PLUMB_NAMESPACE              plumb's namespace, where sign-outs of the web page are recorded
                               (default plumb-system)
  PLUMB_SLACK_SIGNING_SECRET, PLUMB_SLACK_APPROVERS, PLUMB_SLACK_RESPONSE_ORIGINS
                               Slack's Approve and Reject buttons

Output: the runs' JSON lines on stdout (see \`plumb help reconcile\`); JSON log lines on
stderr ("listening", warnings, "webhook rejected" with route, status, reason and delivery id).

Exit codes: runs until stopped; 1 when a setting is invalid at start (the message names it);
2 a usage error.`,

  get: `usage:
  plumb get [[NAMESPACE/]NAME] [-n NS | -A] [-o json] [--kubeconfig FILE]

Shows Apps as a table like \`flux get\`: NAME REVISION SYNC HEALTH HELD LAST SYNC MESSAGE
(the Ready condition's message). Talks to the cluster directly; no plumb server needed.

  NAMESPACE/NAME   one App (NAME alone: in -n NS, else in the context's namespace)
  -A, --all-namespaces
                   every namespace (a NAMESPACE column is added)
  -n, --namespace NS
                   the Apps of NS (default: the kubeconfig context's namespace)
  -o json          the HTTP API's summaries instead: {"items": [...]}, or one App's

Environment:
${KUBE}

Exit codes: 0 shown; 1 the App does not exist; 2 a usage error.`,

  operations: `usage:
${VERBS_USAGE.split("\n").slice(1).join("\n")}

Writes spec.operation as the HTTP API does (the same rules: not while frozen or while another
operation is pending; approve and reject name the held revision); the next reconcile carries
it out (\`plumb reconcile NAMESPACE/NAME\` runs one now). The App is NAMESPACE/NAME, or NAME
with -n NS (else in the kubeconfig context's namespace), as kubectl and flux take it.
--revision takes the full revision, its short form or an unambiguous prefix of 7+ hex characters
(what Slack and get show).

  approve          apply the held revision        reject   turn it down (never held again)
  sync             apply the source's revision    restart  restart the workloads
  rollback         apply a previous revision (default: the last one; --revision picks one of
                   status.previousRevisions)

Environment:
${KUBE}
  USER                         recorded as requestedBy: cli:<login name>

Output: one JSON line {"app", "operation", "message"} on stdout; a refusal on stderr.

Exit codes: 0 requested; 1 refused or the App does not exist; 2 a usage error.`,
};

COMMANDS["diff"] = `usage:
  plumb diff [NAMESPACE/]NAME [-n NS] [--revision REF | --path DIR] [-o json] [--kubeconfig FILE]

Shows what applying the App's source would change, before it is merged or synced: the
revision is rendered as a reconcile renders it and each object is compared with the cluster
the way drift is found (a server-side-apply dry run, dryRun=All, field manager plumb; fields
the reconcile ignores are left out). Writes nothing to the cluster: no apply, no status, no
Event. Talks to the cluster directly; no plumb server needed.

  NAMESPACE/NAME   the App (NAME alone: in -n NS, else in the context's namespace)
  --revision REF   a branch, tag or commit of the App's Git repository (default: the App's
                   spec.source.git.ref now)
  --path DIR       a local directory rendered in place of the App's Git path (plain
                   manifests, a Kustomize overlay whose bases sit in the same Git working tree,
                   or a Helm chart), as argocd app diff --local and flux diff --path do
  -o json          the report instead of text: {"app", "revision", "changed",
                   "counts": {"create", "change", "prune", "fail"}, "objects": [{"action",
                   "apiVersion", "kind", "namespace", "name", "fields": [{"path", "live",
                   "desired", "manager"}], "message", "diff"}]}

Output: a first line "NS/NAME at REVISION: N to create, N to change, N to prune", then one
unified diff per object (--- live, +++ desired; /dev/null for an object created or pruned).
A Secret's values are masked ("++++++++": the same mask for the same value); no secret value
appears.

Environment:
${KUBE}

Exit codes: 0 nothing would change; 1 something would; 2 an error (the App does not exist, the
source or render failed, the API server refused an object's dry run, a usage error).`;

/** Each operation verb has the operations' page. */
for (const verb of ["approve", "reject", "sync", "rollback", "restart"]) {
  COMMANDS[verb] = COMMANDS["operations"]!;
}

/** The commands `plumb help` knows, in the order the overview lists them. */
export const HELP_TOPICS = [
  "reconcile",
  "serve",
  "get",
  "approve",
  "reject",
  "sync",
  "rollback",
  "restart",
  "diff",
];

/** The overview: every command's usage line, and where to read more. */
export const OVERVIEW = `usage:
  plumb reconcile [NAMESPACE/]NAME [-n NS] [--force] [--kubeconfig FILE]
  plumb reconcile --all [--force] [-n NS | -A] [--kubeconfig FILE]
  plumb serve [--port N] [--schedule [--tick DURATION]] [--kubeconfig FILE]
${VERBS_USAGE}
  plumb help [COMMAND]      (or plumb COMMAND --help)

plumb is a serverless GitOps reconciler: each run reads App custom resources, renders them,
applies with server-side apply, prunes, checks health and writes status back.
\`plumb help COMMAND\` lists a command's options, environment, output and exit codes.
Exit codes: 0 ok; 1 an App failed, was not found or was refused; 2 a usage error.`;

/** The help text for `command` (the overview for none or an unknown one). */
export function helpText(command: string | undefined): string {
  return (command !== undefined && COMMANDS[command]) || OVERVIEW;
}
