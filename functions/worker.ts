// Cloudflare Worker: fetch (the Hono app), scheduled (cron: enqueue due Apps), queue (one
// message = one App reconcile). Configuration comes from bindings, validated per isolate.
import { Redactor } from "../src/core/index.ts";
import { cloudflareDnsSettings } from "../src/dns/index.ts";
import { createHttpApp, parseHttpConfig, unavailable } from "../src/http/index.ts";
import {
  createDestinations,
  createFetchTransport,
  createKubePort,
  fetchDestinationTransport,
  type KubeAppStore,
  withRetries,
} from "../src/kube/index.ts";
import { createSlackNotifier } from "../src/notify/index.ts";
import { type DestinationPort, dueApps, type Ports, reconcileApp } from "../src/reconcile/index.ts";
import { type ServiceBinding, serviceBindingEngines } from "../src/render/engines/binding.ts";
import { kubeRetryOptions, parseRuntimeConfig } from "../src/runtime/config.ts";
import { createGitPort } from "../src/source/git.ts";
import { createImagePort } from "../src/source/image.ts";

/** A queue message: one App to reconcile. */
export interface ReconcileMessage {
  namespace: string;
  name: string;
  reason: string;
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
 * The isolate's secret values (issue 11): runs register theirs, and every log line, result
 * line and HTTP error answer of this isolate is redacted with it.
 */
const redactor = new Redactor();
const logLine = (entry: unknown) => console.log(JSON.stringify(redactor.redactValue(entry)));

/** Apps a webhook reconciles at once in waitUntil; the rest go to the queue. */
const INLINE_RECONCILES = 3;
/** Queue sendBatch limit (Cloudflare Queues: 100 messages per batch). */
const BATCH = 100;

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
    // Workers have 128 MB: keep the in-memory pack well under it.
    // (A Kustomize source's whole repository goes to the render Worker: same bound.)
    git: createGitPort({ maxDownloadBytes: 8 * 1024 * 1024, maxRepositoryBytes: 8 * 1024 * 1024 }),
    image: createImagePort(),
    // Kustomize through the render Worker; Helm needs Node (a clear condition says so).
    engines: env.RENDER ? serviceBindingEngines(env.RENDER) : {},
    notify: createSlackNotifier(),
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

async function enqueue(
  env: Env,
  refs: ReadonlyArray<{ namespace: string; name: string }>,
  reason: string,
): Promise<void> {
  const queue = env.RECONCILE_QUEUE;
  if (!queue) throw new Error("RECONCILE_QUEUE binding is missing");
  for (let i = 0; i < refs.length; i += BATCH) {
    await queue.sendBatch(
      refs
        .slice(i, i + BATCH)
        .map((r) => ({ body: { namespace: r.namespace, name: r.name, reason } })),
    );
  }
}

/**
 * Reconciles one App and logs its line. A run that asks for a follow-up (its objects are still
 * Progressing) queues a message delayed by that many seconds, so health is looked at again
 * without waiting for the cron to find the App due (issue 9).
 */
async function reconcileLogged(env: Env, ref: { namespace: string; name: string }) {
  const result = await reconcileApp(ref, portsFor(env), new Date());
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
  return result;
}

export default {
  async fetch(request: Request, env: Env, ctx: Ctx): Promise<Response> {
    // Every missing or invalid binding is named, at /healthz too, with 503 (issue 9).
    const problems = configurationProblems(env);
    if (problems.length > 0) return unavailable(new URL(request.url).pathname, problems);
    const ports = portsFor(env);
    const app = createHttpApp({
      apps: ports.kube,
      config: parseHttpConfig(env),
      now: () => new Date(),
      log: logLine,
      redactor,
      // Work after the response (Slack's 3-second limit) runs in waitUntil.
      defer: (task) => ctx.waitUntil(task),
      slackRespond: createSlackNotifier().slack,
      async trigger(apps, reason) {
        // Webhook latency: reconcile the first few now (after the response), queue the rest.
        const inline = env.RECONCILE_QUEUE ? apps.slice(0, INLINE_RECONCILES) : apps;
        for (const a of inline) ctx.waitUntil(reconcileLogged(env, a));
        if (apps.length > inline.length) await enqueue(env, apps.slice(inline.length), reason);
      },
    });
    return app.fetch(request);
  },

  async scheduled(_event: unknown, env: Env, ctx: Ctx): Promise<void> {
    const ports = portsFor(env);
    const due = await dueApps(ports, new Date());
    logLine({ msg: "cron", due: due.length });
    if (env.RECONCILE_QUEUE) await enqueue(env, due, "schedule");
    else for (const ref of due) ctx.waitUntil(reconcileLogged(env, ref));
  },

  async queue(
    batch: { messages: Array<{ body: ReconcileMessage; ack(): void; retry(): void }> },
    env: Env,
  ): Promise<void> {
    for (const msg of batch.messages) {
      const result = await reconcileLogged(env, msg.body).catch(() => undefined);
      if (!result || result.retryable) msg.retry();
      else msg.ack();
    }
  },
};
