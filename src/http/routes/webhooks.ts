// POST /webhooks/{github,gitlab,gitea}: verify, parse, match Apps, trigger, answer 202.
import type { Context, Hono, MiddlewareHandler } from "hono";
import type { AppRow } from "../../app/index.ts";
import { nameOf } from "../../core/index.ts";
import { rowSource } from "../../plan/index.ts";
import { type Delivery, readDelivery } from "../delivery.ts";
import { HttpError } from "../errors.ts";
import {
  appMatchesPush,
  noMatchReason,
  type PushRef,
  pushRepositories,
  sameRepository,
} from "../match.ts";
import type { AppStore, HttpDeps, HttpEnv, PullRequestTarget, TriggerTarget } from "../types.ts";
import { decodeExact, verifyGitea, verifyGitHub, verifyGitLab } from "../verify.ts";
import type { Provider } from "../webhooks.ts";
import {
  isRefDeletion,
  PROVIDERS,
  PULL_REQUEST_EVENTS,
  parsePullRequest,
  parsePush,
  previewsPullRequest,
} from "../webhooks.ts";

/** Per provider: the configured secret, how to authenticate and which event header to read. */
const PROVIDER = {
  github: { secret: "githubWebhookSecret", auth: "X-Hub-Signature-256", event: "X-GitHub-Event" },
  gitlab: { secret: "gitlabWebhookToken", auth: "X-Gitlab-Token", event: "X-Gitlab-Event" },
  gitea: { secret: "giteaWebhookSecret", auth: "X-Gitea-Signature", event: "X-Gitea-Event" },
} as const;

/**
 * A request header of `provider`: Forgejo sends its own X-Forgejo-* beside (or, in later
 * releases, instead of) the X-Gitea-* it inherited, with the same values.
 */
function header(c: Context, provider: Provider, name: string): string | undefined {
  const value = c.req.header(name);
  if (value !== undefined || provider !== "gitea") return value;
  return c.req.header(name.replace(/^X-Gitea-/, "X-Forgejo-"));
}

/** Event header values that announce a push, per provider. */
const PUSH_EVENTS: Record<Provider, readonly string[]> = {
  github: ["push"],
  gitlab: ["Push Hook", "Tag Push Hook"],
  gitea: ["push"],
};

/**
 * Whether the delivery is the provider's: GitHub's HMAC over the raw body, Gitea's over the
 * payload JSON (`delivery.signed`), GitLab's token. False when there is nothing to verify.
 */
async function authentic(
  provider: Provider,
  secret: string,
  c: Context,
  body: Uint8Array<ArrayBuffer>,
  delivery: Delivery | { error: string },
) {
  const auth = header(c, provider, PROVIDER[provider].auth);
  switch (provider) {
    case "github": {
      const text = decodeExact(body);
      return text !== undefined && verifyGitHub(secret, text, auth);
    }
    case "gitlab":
      return verifyGitLab(secret, auth);
    case "gitea":
      return "signed" in delivery && verifyGitea(secret, delivery.signed, auth);
  }
}

/**
 * Registers `POST /webhooks/<provider>` for GitHub, GitLab and Gitea.
 * - 404 when the provider's secret is not configured;
 * - 401 when the signature/token is missing or wrong (checked before the payload is parsed;
 *   nothing is triggered). Bodies are JSON or, from GitHub and Gitea, a form whose `payload`
 *   field is the JSON ({@link readDelivery}: GitHub signs the raw form body, Gitea the JSON);
 *   both are handled alike from there;
 * - GitHub `ping` → 200 {"message":"pong"}; events other than a push → 202 {"ignored": true,
 *   "event"}; a push that deletes its ref → 202 {"ignored": true, "event", "reason"};
 * - 400 for a body that is not UTF-8 JSON of a push (with `issues`), a form without `payload`,
 *   or a form sent to the GitLab route (GitLab only sends JSON);
 * - otherwise every App whose spec.source.git matches ({@link appMatchesPush}) is passed to
 *   `deps.trigger` with its source and the answer is 202 {"apps": ["ns/name", ...], "revision":
 *   <after>, "ref"}; when none matches, also "reason" (the repositories and ref compared,
 *   and how many Apps follow the repository on other refs: {@link noMatchReason}) and
 *   "repositories". The Apps are read as the compact list, in pages (a push costs
 *   kilobytes per hundred Apps, not their statuses).
 */
export function registerWebhookRoutes(
  app: Hono<HttpEnv>,
  deps: HttpDeps,
  limit: MiddlewareHandler,
): void {
  // Every rejected delivery is logged for the operator: route, status, reason and
  // the provider's delivery id; never the body, a header value or the secret.
  app.use("/webhooks/*", async (c, next) => {
    await next();
    if (c.res.status < 400 || c.res.status >= 500) return;
    deps.log?.({
      msg: "webhook rejected",
      route: `${c.req.method} ${c.req.path}`,
      status: c.res.status,
      reason: c.error?.message ?? (c.res.status === 404 ? "no such route" : "rejected"),
      delivery: deliveryId(c),
    });
  });
  for (const provider of PROVIDERS) {
    app.post(`/webhooks/${provider}`, limit, async (c) => {
      const secret = deps.config[PROVIDER[provider].secret];
      if (!secret) throw new HttpError(404, `${provider} webhooks are not configured`);
      const body = new Uint8Array(await c.req.arrayBuffer());
      const delivery = readDelivery(provider, c.req.header("content-type"), body);
      if (!(await authentic(provider, secret, c, body, delivery))) {
        throw new HttpError(401, `missing or invalid ${PROVIDER[provider].auth} header`);
      }
      const event = header(c, provider, PROVIDER[provider].event);
      if (event === undefined)
        throw new HttpError(400, `missing ${PROVIDER[provider].event} header`);
      if (provider === "github" && event === "ping") return c.json({ message: "pong" }, 200);
      const pullRequest =
        PULL_REQUEST_EVENTS[provider].includes(event) && deps.previewPullRequest !== undefined;
      if (!PUSH_EVENTS[provider].includes(event) && !pullRequest) {
        return c.json({ ignored: true, event }, 202);
      }

      if ("error" in delivery) throw new HttpError(400, delivery.error);
      if (delivery.payload === undefined) throw new HttpError(400, "body is not valid UTF-8");
      let payload: unknown;
      try {
        payload = JSON.parse(delivery.payload);
      } catch {
        throw new HttpError(
          400,
          delivery.form ? "malformed JSON in form field payload" : "malformed JSON body",
        );
      }
      if (pullRequest) return answerPullRequest(c, deps, provider, event, payload);
      const parsed = parsePush(provider, payload);
      if (!parsed.ok) throw new HttpError(400, "not a push payload", { issues: parsed.error });
      const push = parsed.value;
      if (isRefDeletion(push)) {
        return c.json({ ignored: true, event, reason: `ref ${push.ref} deleted` }, 202);
      }

      const { matched, onOtherRefs } = await matchingApps(deps.apps, push);
      const keys: TriggerTarget[] = matched.map((row) => ({
        namespace: row.namespace,
        name: row.name,
        source: rowSource(row),
      }));
      if (keys.length > 0) await deps.trigger(keys, `webhook: push ${push.ref} ${push.after}`);
      deps.log?.({
        msg: "webhook push",
        provider,
        ref: push.ref,
        after: push.after,
        apps: keys.length,
        ...(keys.length === 0 ? { repositories: pushRepositories(push) } : {}),
      });
      const answer = { apps: keys.map(nameOf), revision: push.after, ref: push.ref };
      if (keys.length > 0) return c.json(answer, 202);
      const reason = noMatchReason(push, onOtherRefs);
      return c.json({ ...answer, reason, repositories: pushRepositories(push) }, 202);
    });
  }
}

/**
 * GitHub/Gitea `pull_request`, GitLab "Merge Request Hook" (read by {@link parsePullRequest}):
 * opened, synchronize and reopened preview every App whose source follows the base repository
 * on the base branch (HEAD: the default branch), after the answer 202 {"apps", "number",
 * "head"}; other actions (closed, merged, labeled, a GitLab update without new commits…) →
 * 202 {"ignored", "event", "reason"}.
 */
async function answerPullRequest(
  c: Context,
  deps: HttpDeps,
  provider: Provider,
  event: string,
  payload: unknown,
) {
  const parsed = parsePullRequest(payload, provider);
  if (!parsed.ok) {
    throw new HttpError(400, `not a ${event} payload`, { issues: parsed.error });
  }
  const pr = parsed.value;
  if (!previewsPullRequest(pr.action)) {
    return c.json({ ignored: true, event, reason: `action ${pr.action}` }, 202);
  }
  const { matched } = await matchingApps(deps.apps, pr);
  const apps: PullRequestTarget[] = matched.flatMap((row) =>
    row.git ? [{ namespace: row.namespace, name: row.name, url: row.git.url }] : [],
  );
  if (apps.length > 0 && deps.previewPullRequest) {
    const task = deps.previewPullRequest(apps, pr);
    if (deps.defer) deps.defer(task);
    else void task.catch((e) => deps.log?.({ msg: "preview failed", error: String(e) }));
  }
  deps.log?.({ msg: "webhook pull_request", provider, number: pr.number, apps: apps.length });
  return c.json({ apps: apps.map(nameOf), number: pr.number, head: pr.headSha }, 202);
}

/** Rows per page when a webhook reads the App list. */
const PAGE = 500;

/**
 * The Apps (compact rows, every page) whose Git source the push concerns, and how many others
 * follow the pushed repository on another ref (for the answer when none matched).
 */
async function matchingApps(
  apps: AppStore,
  push: PushRef,
): Promise<{ matched: AppRow[]; onOtherRefs: number }> {
  const matched: AppRow[] = [];
  let onOtherRefs = 0;
  let next: string | undefined;
  do {
    const page = await apps.listAppRows(undefined, PAGE, next);
    for (const row of page.rows) {
      if (!row.git) continue;
      if (appMatchesPush(row.git, push)) matched.push(row);
      else if (sameRepository(row.git, push)) onOtherRefs++;
    }
    next = page.continue;
  } while (next);
  return { matched, onOtherRefs };
}

/** Headers naming a delivery: GitHub, GitLab (newer and older), Gitea. */
const DELIVERY_HEADERS = [
  "X-GitHub-Delivery",
  "X-Gitlab-Webhook-UUID",
  "X-Gitlab-Event-UUID",
  "X-Gitea-Delivery",
];

/**
 * The provider's delivery id (a GUID or UUID, as the provider's "Recent Deliveries" lists it),
 * or null. Only an id's characters are passed through: a header is sender-controlled.
 */
function deliveryId(c: Context): string | null {
  for (const name of DELIVERY_HEADERS) {
    const value = c.req.header(name);
    if (value !== undefined) return /^[A-Za-z0-9-]{1,64}$/.test(value) ? value : "(malformed)";
  }
  return null;
}
