// Announce transitions: Slack messages for the events the App subscribed to.

import { type App, Notifications } from "../app/index.ts";
import { EventReason, nameOf } from "../core/index.ts";
import { slackMessage, type Transition } from "../plan/index.ts";
import type { Ports } from "./ports.ts";

/**
 * Posts one Slack message per subscribed transition (spec.notifications.slack.on). The
 * webhook URL comes from the Secret and is never logged. A notification never fails a
 * reconcile: when it cannot be sent (Secret or key missing, HTTP error, network error) the
 * first failure is logged and reported as one Warning Event "NotificationFailed" on the App
 * (e.g. `Slack: Secret team-a/slack not found`), naming what is wrong but never the URL or
 * any Secret value. A failure to emit that Event is swallowed. The payload is redacted with
 * `ports.redactor` (a message may echo a rendered Secret's value).
 * @param note appended to the Event's message, given what was not delivered (redelivery says
 *   how long it keeps them)
 * @returns the subscribed transitions not delivered (in order; from the first failure on)
 */
export async function announce(
  app: App,
  list: readonly Transition[],
  ports: Ports,
  note?: (undelivered: readonly Transition[]) => string,
): Promise<Transition[]> {
  // Parsed on its own with the App schema's piece, so an App whose spec is otherwise invalid
  // still gets its Failed alert.
  const parsed = Notifications.safeParse(
    (app.spec as { notifications?: unknown } | undefined)?.notifications,
  );
  const slack = parsed.success ? parsed.data?.slack : undefined;
  const notify = ports.notify;
  const secretName = slack?.secretRef.name;
  if (!slack || !secretName || !notify || list.length === 0) return [];
  const wanted = list.filter((t) => slack.on.includes(t.event));
  if (wanted.length === 0) return [];
  let sent = 0;
  const id = nameOf(app.metadata);
  const secret = `${app.metadata.namespace}/${secretName}`;
  const key = slack.secretRef.key;

  const problem = await (async (): Promise<string | undefined> => {
    let data: Record<string, string> | undefined;
    try {
      data = await ports.kube.getSecret(app.metadata.namespace, secretName);
    } catch (err) {
      return `could not read Secret ${secret} (${kubeFailure(err)})`;
    }
    if (!data) return `Secret ${secret} not found`;
    const url = data[key];
    if (!url) return `Secret ${secret} has no key ${JSON.stringify(key)}`;
    ports.redactor?.add(url);
    for (const t of wanted) {
      const payload = slackMessage(app, t, slack.channel);
      try {
        await notify.slack(url, ports.redactor?.redactValue(payload) ?? payload);
      } catch (err) {
        return sendFailure(err, `Secret ${secret} key ${JSON.stringify(key)}`);
      }
      sent++;
    }
    return undefined;
  })();
  if (problem === undefined) return [];
  const undelivered = wanted.slice(sent);
  const message = `Slack: ${problem}${note?.(undelivered) ?? ""}`;
  ports.log?.({ app: id, msg: message });
  try {
    await ports.kube.emitEvent(app, {
      type: "Warning",
      reason: EventReason.NotificationFailed,
      message,
    });
  } catch {
    // An Event is best effort: the log line above already says what went wrong.
  }
  return undelivered;
}

/** "HTTP 403 Forbidden" for a KubeApiError, else the error's name. Never the message. */
function kubeFailure(err: unknown): string {
  const e = (err ?? {}) as { status?: unknown; reason?: unknown; name?: unknown };
  if (typeof e.status === "number") {
    return typeof e.reason === "string" && e.reason !== ""
      ? `HTTP ${e.status} ${e.reason}`
      : `HTTP ${e.status}`;
  }
  return typeof e.name === "string" && e.name !== "" ? e.name : "error";
}

/**
 * What went wrong posting to the webhook, from what the NotifyPort threw. Only a status, an
 * error code or a fixed phrase: error messages may carry the webhook URL (e.g. fetch's
 * "Failed to parse URL from https://hooks.slack.com/...").
 */
function sendFailure(err: unknown, where: string): string {
  const e = (err ?? {}) as { name?: unknown; message?: unknown; status?: unknown; cause?: unknown };
  const name = typeof e.name === "string" ? e.name : "";
  const message = typeof e.message === "string" ? e.message : "";
  const cause = (e.cause ?? {}) as { code?: unknown; message?: unknown };
  const code = typeof cause.code === "string" && CODE.test(cause.code) ? cause.code : undefined;
  const status =
    typeof e.status === "number" ? e.status : Number(/\bHTTP (\d{3})\b/.exec(message)?.[1]);
  if (name === "TimeoutError") return "the webhook did not answer in time";
  if (name === "AbortError") return "the request to the webhook was aborted";
  if (code === "ERR_INVALID_URL") return `the webhook URL in ${where} is not a valid URL`;
  if (
    name === "TypeError" &&
    (cause.message === "unknown scheme" || cause.message === "bad port")
  ) {
    return `the webhook URL in ${where} cannot be used (${cause.message})`;
  }
  if (name === "TypeError" && message === "fetch failed") {
    return code ? `connection failed (${code})` : "connection failed";
  }
  if (Number.isInteger(status) && status >= 100 && status <= 599) {
    return `HTTP ${status} from the webhook`;
  }
  return `sending failed (${name || "error"})`;
}

/** A Node or undici error code such as ECONNREFUSED or UND_ERR_CONNECT_TIMEOUT. */
const CODE = /^[A-Z][A-Z0-9_]{1,40}$/;
