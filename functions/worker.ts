// Cloudflare Worker: fetch (the Hono app), scheduled (cron: enqueue due Apps), queue (one
// message = a few Apps on one source and revision, reconciled in turn so they share one fetch).
// Configuration comes from bindings, validated per isolate.
import { Redactor } from "../src/core/index.ts";
import { cloudflareDnsSettings } from "../src/dns/index.ts";
import { type ServiceBinding, serviceBindingEngines } from "../src/engines/binding.ts";
import {
  createHttpApp,
  DEFAULT_NAMESPACE,
  parseHttpConfig,
  unavailable,
} from "../src/http/index.ts";
import {
  createDestinations,
  createFetchTransport,
  createKubePort,
  fetchDestinationTransport,
  type KubeAppStore,
  withRetries,
} from "../src/kube/index.ts";
import { createNotifier, jsonPoster } from "../src/notify/index.ts";
import {
  batchBySource,
  cronPeriodMs,
  DEFAULT_TICK_MS,
  type GitSourceRef,
  type SourceHint,
} from "../src/plan/index.ts";
import {
  createInventoryIndex,
  type DestinationPort,
  hintFor,
  type Ports,
  planTick,
  type RunOptions,
  reconcileApp,
  resolveSources,
} from "../src/reconcile/index.ts";
import { kubeRetryOptions, parseRuntimeConfig } from "../src/runtime/config.ts";
import { createGitPort } from "../src/source/git.ts";
import { createImagePort } from "../src/source/image.ts";
import { forgePreviewer } from "./previews.ts";

/**
 * A queue message: Apps to reconcile in turn (Apps on one Git source and revision
 * travel together, so the consumer fetches the revision once), why, and the revision resolved
 * for their source. `namespace` and `name` alone are the one-App form of earlier versions.
 */
export interface ReconcileMessage {
  apps?: Array<{ namespace: string; name: string; compare?: boolean }>;
  namespace?: string;
  name?: string;
  reason: string;
  source?: SourceHint;
}

interface QueueBinding {
  sendBatch(messages: Array<{ body: ReconcileMessage; delaySeconds?: number }>): Promise<void>;
}

/** The longest delay Cloudflare Queues accept on a message (12 hours). */
const MAX_DELAY_SECONDS = 43_200;

export interface Env {
  /** API server URL with a publicly trusted certificate (Workers VPC or a tunnel hostname). */
  KUBE_API_URL: string;
  /** ServiceAccount token of plumb's identity (secret). */
  KUBE_TOKEN: string;
  RECONCILE_QUEUE?: QueueBinding;
  /** The render Worker (Kustomize), a service binding to plumb-render. */
  RENDER?: ServiceBinding;
  [key: string]: unknown;
}

interface Ctx {
  waitUntil(p: Promise<unknown>): void;
}

/**
 * The isolate's secret values: runs register theirs, and every log line, result
 * line and HTTP error answer of this isolate is redacted with it.
 */
const redactor = new Redactor();
const logLine = (entry: unknown) => console.log(JSON.stringify(redactor.redactValue(entry)));

/** How long a webhook waits for its sources' lookups before it triggers without them. */
const SOURCE_DEADLINE_MS = 3_000;
/**
 * The isolate's Git port: a fetched revision is kept (a few, by commit) and shared by the runs
 * of every invocation this isolate serves. Workers have 128 MB: keep the in-memory pack well
 * under it.
 */
// (A Kustomize source's whole repository goes to the render Worker: same bound.)
const git = createGitPort({
  maxDownloadBytes: 8 * 1024 * 1024,
  maxRepositoryBytes: 8 * 1024 * 1024,
  sharedFetches: 2,
});

/** Apps a webhook reconciles at once in waitUntil; the rest go to the queue. */
const INLINE_RECONCILES = 3;
/** Queue sendBatch limit (Cloudflare Queues: 100 messages per batch). */
const BATCH = 100;
/**
 * Apps per queue message. A consumer invocation takes up to max_batch_size (10) messages, so
 * 250 runs of about 8 API requests and 15 ms CPU each: inside the paid plan's 10,000
 * subrequests and 30 s CPU per invocation.
 */
const APPS_PER_MESSAGE = 25;

/**
 * What keeps the Worker from serving: each required binding that is missing and each setting
 * that does not parse, by name (the parsers never quote a value). Empty when all is well.
 */
function configurationProblems(env: Env): string[] {
  const problems: string[] = [];
  for (const name of ["KUBE_API_URL", "KUBE_TOKEN"] as const) {
    const v = env[name];
    if (typeof v !== "string" || v === "") {
      const where =
        name === "KUBE_TOKEN"
          ? "wrangler secret put KUBE_TOKEN; for wrangler dev, .dev.vars"
          : "wrangler.toml [vars]; for wrangler dev, .dev.vars";
      problems.push(`${name} is not set (${where})`);
    }
  }
  for (const parse of [parseRuntimeConfig, parseHttpConfig]) {
    try {
      parse(env);
    } catch (err) {
      problems.push(err instanceof Error ? err.message : String(err));
    }
  }
  return problems;
}

function required(env: Env, name: "KUBE_API_URL" | "KUBE_TOKEN"): string {
  const v = env[name];
  if (typeof v !== "string" || v === "") throw new Error(`${name}: required binding is missing`);
  return v;
}

/** Remote destinations, one per isolate (its discovery cache outlives a request). */
let destinations: DestinationPort | undefined;

function portsFor(env: Env): Ports & { kube: KubeAppStore } {
  const config = parseRuntimeConfig(env);
  const dns = cloudflareDnsSettings(config.dns);
  if (config.dns) redactor.add(config.dns.apiToken);
  // Other clusters (spec.destination.cluster): a bearer token to a publicly trusted certificate.
  destinations ??= createDestinations({
    transport: fetchDestinationTransport((server, token) => createFetchTransport(server, token)),
    allowInsecureSkipTLSVerify: config.allowInsecureDestinations,
    retry: kubeRetryOptions(config, logLine),
  });
  const transport = withRetries(
    createFetchTransport(required(env, "KUBE_API_URL"), required(env, "KUBE_TOKEN")),
    kubeRetryOptions(config, logLine),
  );
  return {
    kube: createKubePort(transport),
    git,
    image: createImagePort(),
    // Kustomize through the render Worker; Helm needs Node (a clear condition says so).
    engines: env.RENDER
      ? serviceBindingEngines(env.RENDER, { timeoutMs: config.renderTimeoutMs })
      : {},
    notify: createNotifier(),
    holder: `plumb-worker-${crypto.randomUUID().slice(0, 8)}`,
    allowedDestinations: config.allowedDestinations,
    allowedClusterKinds: config.allowedClusterKinds,
    ingress: config.ingress,
    ...(dns ? { dns } : {}),
    destinations,
    allowCascadingPrune: config.allowCascadingPrune,
    log: logLine,
    redactor,
  };
}

/** An App to reconcile, whether it owes a full comparison, and its Git source (for batching). */
type Target = {
  namespace: string;
  name: string;
  compare?: boolean;
  source?: GitSourceRef | undefined;
};

async function enqueue(
  env: Env,
  targets: ReadonlyArray<Target>,
  hints: ReadonlyMap<string, SourceHint>,
  reason: string,
): Promise<number> {
  const queue = env.RECONCILE_QUEUE;
  if (!queue) throw new Error("RECONCILE_QUEUE binding is missing");
  const messages = batchBySource(targets, APPS_PER_MESSAGE).map((apps): ReconcileMessage => {
    const body: ReconcileMessage = {
      apps: apps.map((a) => ({
        namespace: a.namespace,
        name: a.name,
        ...(a.compare ? { compare: true } : {}),
      })),
      reason,
    };
    const hint = apps[0] ? hintFor(hints, apps[0]) : undefined;
    if (hint) body.source = hint;
    return body;
  });
  for (let i = 0; i < messages.length; i += BATCH) {
    await queue.sendBatch(messages.slice(i, i + BATCH).map((body) => ({ body })));
  }
  return messages.length;
}

/**
 * Reconciles one App and logs its line. A run that asks for a follow-up (its objects are still
 * Progressing) queues a message delayed by that many seconds, so health is looked at again
 * without waiting for the cron to find the App due. A run that made the App Ready queues the
 * Apps that depend on it (spec.dependsOn), each owing a full comparison.
 * @param options what the trigger knows (a full comparison owed, the resolved revision)
 * @param ports shared by the runs of one queue invocation (one fetch per revision)
 */
async function reconcileLogged(
  env: Env,
  ref: { namespace: string; name: string },
  options: RunOptions = {},
  ports: Ports = portsFor(env),
) {
  const result = await reconcileApp(ref, ports, new Date(), options);
  logLine(result);
  const delay = result.followUpSeconds;
  if (delay !== undefined && env.RECONCILE_QUEUE) {
    const body = { namespace: ref.namespace, name: ref.name, reason: "follow-up" };
    await env.RECONCILE_QUEUE.sendBatch([
      { body, delaySeconds: Math.min(delay, MAX_DELAY_SECONDS) },
    ]).catch((err) =>
      logLine({ msg: "follow-up not queued", app: result.app, error: String(err) }),
    );
  }
  const dependants = (result.dependants ?? []).map((id) => {
    const slash = id.indexOf("/");
    return { namespace: id.slice(0, slash), name: id.slice(slash + 1), compare: true };
  });
  if (dependants.length > 0 && env.RECONCILE_QUEUE) {
    // The App became Ready: the Apps that wait for it run now, not at their slot.
    await enqueue(env, dependants, new Map(), "dependency ready").catch((err) =>
      logLine({ msg: "dependants not queued", app: result.app, error: String(err) }),
    );
  }
  return result;
}

export default {
  async fetch(request: Request, env: Env, ctx: Ctx): Promise<Response> {
    // Every missing or invalid binding is named, at /healthz too, with 503.
    const problems = configurationProblems(env);
    if (problems.length > 0) return unavailable(new URL(request.url).pathname, problems);
    const ports = portsFor(env);
    const config = parseHttpConfig(env);
    const app = createHttpApp({
      apps: ports.kube,
      config,
      now: () => new Date(),
      log: logLine,
      redactor,
      // Work after the response (Slack's 3-second limit) runs in waitUntil.
      defer: (task) => ctx.waitUntil(task),
      slackRespond: jsonPoster(),
      // Pull request previews run after the answer, in waitUntil (through `defer`), as the
      // first Apps of a push do: a preview is one render and dry run per App of the PR's base.
      previewPullRequest: forgePreviewer(
        () => ports,
        config.namespace ?? DEFAULT_NAMESPACE,
        logLine,
        env,
      ),
      async trigger(apps, reason) {
        // One lookup per Git source, handed to every run on it.
        const hints = await resolveSources(ports, apps, { deadlineMs: SOURCE_DEADLINE_MS });
        // Webhook latency: reconcile the first few now (after the response), queue the rest.
        const inline = env.RECONCILE_QUEUE ? apps.slice(0, INLINE_RECONCILES) : apps;
        for (const a of inline) {
          ctx.waitUntil(reconcileLogged(env, a, { source: hintFor(hints, a) }));
        }
        if (apps.length > inline.length) {
          await enqueue(env, apps.slice(inline.length), hints, reason);
        }
      },
    });
    return app.fetch(request);
  },

  async scheduled(event: { scheduledTime?: number; cron?: string }, env: Env, ctx: Ctx) {
    const ports = portsFor(env);
    // Ticks on the cron's grid; the slots of (previous tick, this tick] are due.
    const periodMs = (event.cron && cronPeriodMs(event.cron)) || DEFAULT_TICK_MS;
    const at = event.scheduledTime ?? Math.floor(Date.now() / periodMs) * periodMs;
    const plan = await planTick(ports, { at, periodMs });
    const hints = await resolveSources(ports, plan.due);
    const messages = env.RECONCILE_QUEUE ? await enqueue(env, plan.due, hints, "schedule") : 0;
    logLine({
      msg: "cron",
      due: plan.due.length,
      listed: plan.listed,
      pages: plan.pages,
      sources: hints.size,
      messages,
    });
    if (!env.RECONCILE_QUEUE) {
      for (const d of plan.due) {
        ctx.waitUntil(reconcileLogged(env, d, { compare: d.compare, source: hintFor(hints, d) }));
      }
    }
  },

  async queue(
    batch: { messages: Array<{ body: ReconcileMessage; ack(): void; retry(): void }> },
    env: Env,
  ): Promise<void> {
    // One set of ports per invocation: its Apps share the fetched revision (the isolate's Git
    // port) and one read of the Apps' inventories.
    const ports = { ...portsFor(env), inventories: createInventoryIndex() };
    for (const msg of batch.messages) {
      const { apps, namespace, name, source } = msg.body;
      const targets = apps ?? (namespace && name ? [{ namespace, name }] : []);
      let retry = false;
      for (const t of targets) {
        const ref = { namespace: t.namespace, name: t.name };
        const options: RunOptions = { compare: "compare" in t && t.compare === true, source };
        const result = await reconcileLogged(env, ref, options, ports).catch(() => undefined);
        if (!result || result.retryable) retry = true;
      }
      // A run that ended before recording its outcome: the message comes again (its other
      // Apps' runs find nothing new and write nothing).
      if (retry) msg.retry();
      else msg.ack();
    }
  },
};
