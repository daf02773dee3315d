// POST /slack/interactions: the Held alert's Approve and Reject buttons.
import type { Hono, MiddlewareHandler } from "hono";
import { short } from "../../plan/index.ts";
import { HttpError } from "../errors.ts";
import { buildOperation, OperationRefused, submitOperation } from "../operations.ts";
import {
  ephemeral,
  mayApprove,
  outcomeMessage,
  parseInteraction,
  type SlackAction,
} from "../slack.ts";
import type { HttpDeps, HttpEnv } from "../types.ts";
import { decodeExact, verifySlack } from "../verify.ts";

/**
 * Registers `POST /slack/interactions` (the Slack app's Interactivity Request URL):
 * - 404 when PLUMB_SLACK_SIGNING_SECRET is not set;
 * - 401 for a missing, old (over 5 minutes) or wrong `v0` signature, before anything is read;
 * - 400 for a signed body that is not a plumb button press (see parseInteraction);
 * - otherwise 200 at once (Slack wants an answer within 3 seconds), and the work runs after the
 *   response (`deps.defer`): a user not allowed in the App's namespace (PLUMB_SLACK_APPROVERS)
 *   gets an ephemeral refusal and nothing changes; else the App is read, the operation checked
 *   like the API's (a revision no longer held is refused with a message), written with
 *   requestedBy `slack:<user id>`, and the alert replaced with the outcome via response_url.
 */
export function registerSlackRoutes(
  app: Hono<HttpEnv>,
  deps: HttpDeps,
  limit: MiddlewareHandler,
): void {
  app.post("/slack/interactions", limit, async (c) => {
    const slack = deps.config.slack;
    if (!slack) throw new HttpError(404, "Slack interactivity is not configured");
    const body = new Uint8Array(await c.req.arrayBuffer());
    const verdict = await verifySlack(
      slack.signingSecret,
      c.req.header("X-Slack-Request-Timestamp"),
      body,
      c.req.header("X-Slack-Signature"),
      deps.now(),
    );
    if (verdict === "stale") {
      throw new HttpError(401, "missing or stale X-Slack-Request-Timestamp (over 5 minutes)");
    }
    if (verdict !== "ok") throw new HttpError(401, "missing or invalid X-Slack-Signature header");
    const text = decodeExact(body);
    if (text === undefined) throw new HttpError(400, "body is not valid UTF-8");
    const parsed = parseInteraction(text, slack.responseOrigins);
    if (parsed.kind === "invalid") throw new HttpError(400, parsed.message);
    if (parsed.kind === "ignored") return c.body(null, 200);
    const action = parsed.value;
    const work = mayApprove(slack, action.user, action.namespace)
      ? act(deps, action)
      : respond(
          deps,
          action,
          ephemeral(
            `<@${action.user}> may not approve or reject in namespace ${action.namespace} (PLUMB_SLACK_APPROVERS).`,
          ),
        );
    deps.log?.({
      msg: "slack interaction",
      action: action.action,
      user: action.user,
      app: `${action.namespace}/${action.name}`,
    });
    const defer =
      deps.defer ??
      ((task: Promise<unknown>) => {
        void task;
      });
    defer(work);
    return c.body(null, 200);
  });
}

/** Reads the App, requests the operation, answers in Slack. Never throws. */
async function act(deps: HttpDeps, a: SlackAction): Promise<void> {
  const id = `${a.namespace}/${a.name}`;
  try {
    const target = await deps.apps.getApp(a.namespace, a.name);
    if (!target) return await respond(deps, a, ephemeral(`App ${id} no longer exists.`));
    let op: ReturnType<typeof buildOperation>;
    try {
      op = buildOperation(
        target,
        { type: a.action, revision: a.revision },
        `slack:${a.user}`,
        deps.now(),
      );
    } catch (err) {
      if (!(err instanceof OperationRefused)) throw err;
      return await respond(deps, a, ephemeral(refusal(a, err, target.status?.heldRevision)));
    }
    await submitOperation(deps, target, op, "slack");
    await respond(deps, a, outcomeMessage(a));
  } catch (err) {
    const e = err as { status?: unknown; reason?: unknown; name?: unknown };
    deps.log?.({
      msg: "slack interaction failed",
      app: id,
      status: e.status,
      reason: e.reason,
      error: e.name,
    });
    const detail = typeof e.status === "number" ? `HTTP ${e.status}` : "error";
    await respond(
      deps,
      a,
      ephemeral(`Could not ${a.action.toLowerCase()} ${id}: Kubernetes API ${detail}. Try again.`),
    );
  }
}

function refusal(a: SlackAction, err: OperationRefused, held: string | undefined): string {
  const id = `${a.namespace}/${a.name}`;
  if (
    held !== a.revision &&
    (err.message.startsWith("stale revision") || err.message.startsWith("nothing is held"))
  ) {
    const now = held ? `revision ${short(held)} is held now` : "nothing is held now";
    return `Revision ${short(a.revision)} of ${id} is no longer held (${now}): not ${a.action === "Approve" ? "approved" : "rejected"}.`;
  }
  return `${a.action} of ${id} refused: ${err.message}`;
}

/** Posts to the interaction's response_url; a failure is logged (status or error name only). */
async function respond(
  deps: HttpDeps,
  a: SlackAction,
  payload: Record<string, unknown>,
): Promise<void> {
  if (!deps.slackRespond) return;
  try {
    await deps.slackRespond(a.responseUrl, payload);
  } catch (err) {
    // The response_url is a bearer capability: never logged, nor the error's message.
    deps.log?.({
      msg: "slack response failed",
      app: `${a.namespace}/${a.name}`,
      error: (err as Error)?.name ?? "error",
    });
  }
}
