// Announce transitions: one event per subscribed transition, posted to each target the App
// configures (spec.notifications), each through its implementation (targets/).
import { type App, TARGET_NAMES, type TargetConfig, type TargetName } from "../app/index.ts";
import { EventReason, nameOf } from "../core/index.ts";
import {
  CommitStatusError,
  notificationEvent,
  notificationTargets,
  type Transition,
} from "../plan/index.ts";
import type { Ports } from "./ports.ts";
import { type NotificationTarget, TARGETS } from "./targets/index.ts";

/** How a run announces: what the NotificationFailed Event adds, which target only. */
export interface AnnounceOptions {
  /** Appended to the Event's message, given what was not delivered (redelivery's note). */
  note?: (undelivered: readonly Transition[]) => string;
  /** Only this target; absent: every target the App configures. */
  target?: TargetName;
}

/**
 * Posts one event per transition each target subscribed to (spec.notifications.<target>.on),
 * in order, built from the App as stored after the run (notificationEvent). The secret (a
 * webhook URL, a token) comes from the target's Secret and is never logged. A notification
 * never fails a reconcile: when a target cannot be reached (Secret or key missing, HTTP error,
 * network error) its first failure is logged and reported as one Warning Event
 * "NotificationFailed" on the App (e.g. `Slack: Secret team-a/slack not found`), naming what is
 * wrong but never the secret or any Secret value, and what follows for that target is not
 * sent. A failure to emit that Event is swallowed. What is posted is redacted with
 * `ports.redactor` (a message may echo a rendered Secret's value).
 * @returns the subscribed transitions not delivered, per target in TARGET_NAMES order (each
 *   target's from its first failure on)
 */
export async function announce(
  app: App,
  list: readonly Transition[],
  ports: Ports,
  options: AnnounceOptions = {},
): Promise<Transition[]> {
  const configured = notificationTargets(app);
  const undelivered: Transition[] = [];
  for (const name of TARGET_NAMES) {
    if (options.target !== undefined && name !== options.target) continue;
    const config = configured[name];
    if (config)
      undelivered.push(...(await announceTo(TARGETS[name], config, app, list, ports, options)));
  }
  return undelivered;
}

/** announce, for one target. */
async function announceTo<K extends TargetName>(
  target: NotificationTarget<K>,
  config: TargetConfig<K>,
  app: App,
  list: readonly Transition[],
  ports: Ports,
  options: AnnounceOptions,
): Promise<Transition[]> {
  const http = ports.notify;
  if (!http || list.length === 0) return [];
  const wanted = list.filter((t) => config.on.includes(t.event));
  if (wanted.length === 0) return [];
  let sent = 0;
  const ref = { namespace: app.metadata.namespace, name: app.metadata.name };
  const id = nameOf(ref);
  const secretName = config.secretRef.name;
  const secret = `${app.metadata.namespace}/${secretName}`;
  const key = config.secretRef.key;

  const problem = await (async (): Promise<string | undefined> => {
    let data: Record<string, string> | undefined;
    try {
      data = await ports.kube.getSecret(app.metadata.namespace, secretName);
    } catch (err) {
      return `could not read Secret ${secret} (${kubeFailure(err)})`;
    }
    if (!data) return `Secret ${secret} not found`;
    const value = data[key];
    if (!value) return `Secret ${secret} has no key ${JSON.stringify(key)}`;
    ports.redactor?.add(value);
    const secrets: string[] = [];
    for (const other of target.secretRefs?.(config) ?? []) {
      const where = `${app.metadata.namespace}/${other.name}`;
      let more: Record<string, string> | undefined = data;
      if (other.name !== secretName) {
        try {
          more = await ports.kube.getSecret(app.metadata.namespace, other.name);
        } catch (err) {
          return `could not read Secret ${where} (${kubeFailure(err)})`;
        }
      }
      if (!more) return `Secret ${where} not found`;
      const extra = more[other.key];
      if (!extra) return `Secret ${where} has no key ${JSON.stringify(other.key)}`;
      ports.redactor?.add(extra);
      secrets.push(extra);
    }
    const redact = <T>(v: T): T => ports.redactor?.redactValue(v) ?? v;
    for (const t of wanted) {
      const event = notificationEvent(ref, t, app.status ?? {});
      try {
        await target.post(event, { config, secret: value, secrets, app, http, redact });
      } catch (err) {
        return sendFailure(
          err,
          `Secret ${secret} key ${JSON.stringify(key)}`,
          target.endpoint ?? "the webhook",
        );
      }
      sent++;
    }
    return undefined;
  })();
  if (problem === undefined) return [];
  const undelivered = wanted.slice(sent);
  const message = `${target.title}: ${problem}${options.note?.(undelivered) ?? ""}`;
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
 * What went wrong posting to the target, from what the NotifyPort threw. Only a status, an
 * error code or a fixed phrase: error messages may carry the URL (e.g. fetch's
 * "Failed to parse URL from https://hooks.slack.com/...").
 */
function sendFailure(err: unknown, where: string, endpoint: string): string {
  if (err instanceof CommitStatusError) return err.message;
  const e = (err ?? {}) as { name?: unknown; message?: unknown; status?: unknown; cause?: unknown };
  const name = typeof e.name === "string" ? e.name : "";
  const message = typeof e.message === "string" ? e.message : "";
  const cause = (e.cause ?? {}) as { code?: unknown; message?: unknown };
  const code = typeof cause.code === "string" && CODE.test(cause.code) ? cause.code : undefined;
  const status =
    typeof e.status === "number" ? e.status : Number(/\bHTTP (\d{3})\b/.exec(message)?.[1]);
  if (name === "TimeoutError") return `${endpoint} did not answer in time`;
  if (name === "AbortError") return `the request to ${endpoint} was aborted`;
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
    return `HTTP ${status} from ${endpoint}`;
  }
  return `sending failed (${name || "error"})`;
}

/** A Node or undici error code such as ECONNREFUSED or UND_ERR_CONNECT_TIMEOUT. */
const CODE = /^[A-Z][A-Z0-9_]{1,40}$/;
