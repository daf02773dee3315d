// Types shared by the HTTP app's routes.
import type { App, AppRow } from "../app/index.ts";
import type { NamespacedName, Redactor } from "../core/index.ts";
import type { GitSourceRef } from "../plan/index.ts";
import type { AppSetWebhook } from "./appsets.ts";
import type { Caller } from "./auth.ts";
import type { HttpConfig } from "./config.ts";
import type { Log } from "./errors.ts";
import type { PullRequestEvent } from "./webhooks.ts";

/** An App by namespace and name. */
export type AppKey = NamespacedName;

/** An App a pull request concerns, with its Git URL. */
export type PullRequestTarget = AppKey & { url: string };

/** An App to reconcile, with its Git source when the trigger knows it (looked up once). */
export type TriggerTarget = AppKey & { source?: GitSourceRef | undefined };

/**
 * The HTTP app's port to the cluster: the Apps, their operations and Events. Every method may
 * throw KubeApiError. (The reconcile loop's KubePort implements it.)
 */
export interface AppStore {
  /** The App, or undefined when it does not exist. */
  getApp(namespace: string, name: string): Promise<App | undefined>;
  /** Apps in `namespace`, or in all namespaces when undefined. */
  listApps(namespace?: string): Promise<App[]>;
  /** One page of the compact App list (AppRow), and the token of the next page. */
  listAppRows(
    namespace: string | undefined,
    limit: number,
    continueToken?: string,
  ): Promise<{ rows: AppRow[]; continue?: string }>;
  /** Writes spec.operation with a resourceVersion precondition (409 on conflict). */
  setOperation(app: App, operation: Record<string, unknown>): Promise<App>;
  /** Emits a core/v1 Event whose involvedObject is the App. */
  emitEvent(
    app: App,
    event: { type: "Normal" | "Warning"; reason: string; message: string },
  ): Promise<void>;
  /**
   * The App's most recent core/v1 Events (involvedObject is the App), newest first, at most
   * `limit`. Bounded however many Events exist (see the adapter for its page cap).
   */
  listEvents(app: App, limit: number): Promise<AppEvent[]>;
  /**
   * Records that the web session named `name` (a DNS label) was signed out, until `until` (when
   * it would have expired), in `namespace`; idempotent. Every process checks it
   * ({@link signedOut}), so a signed-out cookie is refused everywhere.
   */
  recordSignOut(namespace: string, name: string, until: Date): Promise<void>;
  /** Whether a sign-out of the session named `name` is recorded in `namespace`. */
  signedOut(namespace: string, name: string): Promise<boolean>;
}

/** One core/v1 Event about an App, as the page shows it. */
export interface AppEvent {
  type: string;
  reason: string;
  message: string;
  /** How many times it happened (Event.count, 1 when absent). */
  count: number;
  /** RFC 3339 time it last happened, or undefined when the Event carries none. */
  lastTimestamp?: string;
}

/** What the HTTP app needs from its runtime (Worker or Node). */
export interface HttpDeps {
  /** The Apps in the cluster. */
  apps: AppStore;
  config: HttpConfig;
  /**
   * Schedule reconciles of these Apps now (queue on Workers, in-process on Node). Returns
   * quickly. A webhook passes each App's Git source: the runtime looks each source up once.
   */
  trigger(apps: TriggerTarget[], reason: string): Promise<void>;
  now(): Date;
  /** Operator log; entries never carry secrets, tokens or bodies. */
  log?: Log;
  /** Secret values to redact from error answers (the process's, shared with its runs). */
  redactor?: Redactor;
  /**
   * Runs `task` after the response is sent (Workers: ctx.waitUntil; Node: not awaited). Slack
   * wants an answer within 3 seconds, so its interactions do their work here. Default: the
   * task runs unawaited and a failure is logged.
   */
  defer?(task: Promise<unknown>): void;
  /**
   * Previews a pull request for these Apps (diff, comment, commit status, Event), run by the
   * webhook through {@link defer} after its 202; what it resolves to is not read. Absent:
   * pull_request deliveries are ignored.
   */
  previewPullRequest?(apps: PullRequestTarget[], pr: PullRequestEvent): Promise<unknown>;
  /**
   * Reconciles the AppSets a push or pull-request webhook concerns (appSetsForWebhook: git
   * generators on the pushed repository; pullRequest generators on the PR's base repository,
   * for opened, synchronize, reopened and closed) and runs the Apps they changed; run through
   * {@link defer} after the answer. Absent: webhooks leave AppSets to the schedule.
   */
  appSets?(event: AppSetWebhook): Promise<void>;
  /** Posts a message to a Slack response_url (JSON). Absent: Slack answers are not sent. */
  slackRespond?(url: string, payload: Record<string, unknown>): Promise<void>;
}

/** Hono environment of the app: the authenticated caller on /api routes. */
export interface HttpEnv {
  Variables: {
    caller: Caller;
    /** Set on the web page's routes: errors become an HTML page instead of JSON. */
    errorPage?: (status: number, message: string) => Promise<Response>;
  };
}
