// A notification target: where an App's transitions are posted (spec.notifications.<name>).
import type { App, TargetConfig, TargetName } from "../../app/index.ts";
import type { NotificationEvent } from "../../plan/index.ts";
import type { NotifyPort } from "../ports.ts";

/** What a target posts with: its entry, the value its Secret holds, the App, the port. */
export interface TargetContext<K extends TargetName> {
  /** spec.notifications.<name>, parsed and defaulted. */
  config: TargetConfig<K>;
  /**
   * The value of the Secret key secretRef names (a webhook URL, a token): a secret, registered
   * with the redactor; never in a message, a log line or an Event.
   */
  secret: string;
  /**
   * The values of the target's other Secret keys ({@link NotificationTarget.secretRefs}), in
   * that order; secrets too, registered with the redactor.
   */
  secrets: string[];
  /** The App, as stored after the run's status write. */
  app: App;
  /** Outgoing HTTP: POST a body to a URL. */
  http: NotifyPort;
  /** `value` with every secret the run knows replaced (a message may echo a rendered Secret). */
  redact<T>(value: T): T;
}

/**
 * One kind of notification target, as Flux's notification-controller has one notifier per
 * provider posting one event through one interface (internal/notifier, `Post(ctx, event)`).
 * What every target shares is the loop's (announce.ts): the Secret read, the `on` filter, the
 * NotificationFailed Event, the redelivery queue (status.pendingNotifications names the
 * target). A target only turns the event into its request. Adding one: a file here, its entry
 * in NOTIFICATION_TARGETS (src/app/schema.ts), and its line in TARGETS (index.ts).
 */
export interface NotificationTarget<K extends TargetName> {
  readonly name: K;
  /** How messages name it: "Slack: Secret team-a/slack not found". */
  readonly title: string;
  /** What failures name the endpoint: "HTTP 502 from the API" (default "the webhook"). */
  readonly endpoint?: string;
  /**
   * Posts `event`. Throws what `ctx.http` threw (its status or code is reported, never its
   * message: it may carry the URL).
   */
  post(event: NotificationEvent, ctx: TargetContext<K>): Promise<void>;
  /**
   * Secret keys the target reads besides secretRef (the generic target's HMAC key), read like
   * it (a missing one is reported the same way); their values are `ctx.secrets`.
   */
  secretRefs?(config: TargetConfig<K>): Array<{ name: string; key: string }>;
}
