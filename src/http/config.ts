// HTTP configuration from environment variables (Node) or Worker bindings.
import { z } from "zod";

/** One API caller. */
export interface ApiToken {
  /** Who this is, recorded as `requestedBy` on operations. Never a secret. */
  name: string;
  /** The bearer token (secret). */
  token: string;
  /** Namespaces this caller may read and operate on; absent = all namespaces. */
  namespaces?: string[];
}

/** Everything the HTTP app is configured with. A webhook provider without a secret is off. */
export interface HttpConfig {
  apiTokens: ApiToken[];
  githubWebhookSecret?: string;
  gitlabWebhookToken?: string;
  giteaWebhookSecret?: string;
  /** Cluster-wide destination policy ("*" or namespace names); absent when not set. */
  allowedDestinations?: string[];
  /** The web page's session signing key (32+ characters); absent = the page is off. */
  sessionKey?: string;
  /**
   * plumb's own namespace (PLUMB_NAMESPACE, default {@link DEFAULT_NAMESPACE}): where it records
   * the web sessions signed out (one Lease each, until the session would have expired).
   */
  namespace?: string;
  /** Slack interactivity (Approve/Reject buttons); absent = POST /slack/interactions is off. */
  slack?: SlackConfig;
}

/** Slack interactivity settings. */
export interface SlackConfig {
  /** The Slack app's signing secret (secret). */
  signingSecret: string;
  /** Slack user id → namespaces that user may approve and reject in ("*" = all). */
  approvers: Record<string, string[]>;
  /** Origins a response_url may have (default https://hooks.slack.com). */
  responseOrigins: string[];
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const TOKENS_SHAPE = "expected a JSON array of {name, token, namespaces?}";

const ApiTokens = z
  .array(
    z.strictObject({
      name: z.string().min(1).max(128),
      token: z.string().min(16, "must be at least 16 characters").max(4096),
      namespaces: z
        .array(z.string().max(63).regex(DNS_LABEL, "must be a namespace name"))
        .min(1)
        .optional(),
    }),
  )
  .refine((ts) => new Set(ts.map((t) => t.token)).size === ts.length, "tokens must be unique")
  .refine((ts) => new Set(ts.map((t) => t.name)).size === ts.length, "names must be unique");

/** The variables read, all optional. Values of other keys (other bindings) are ignored. */
export const HTTP_ENV_VARS = [
  "PLUMB_API_TOKENS",
  "GITHUB_WEBHOOK_SECRET",
  "GITLAB_WEBHOOK_TOKEN",
  "GITEA_WEBHOOK_SECRET",
  "PLUMB_ALLOWED_DESTINATIONS",
  "PLUMB_SESSION_KEY",
  "PLUMB_NAMESPACE",
  "PLUMB_SLACK_SIGNING_SECRET",
  "PLUMB_SLACK_APPROVERS",
  "PLUMB_SLACK_RESPONSE_ORIGINS",
] as const;

/** plumb's namespace when PLUMB_NAMESPACE is not set: the one infra/rbac/plumb.yaml creates. */
export const DEFAULT_NAMESPACE = "plumb-system";

/** Shortest PLUMB_SESSION_KEY accepted: 32 characters (256 bits of a random hex or base64 key). */
export const MIN_SESSION_KEY = 32;
const APPROVERS_SHAPE =
  'expected a JSON object of Slack user id to namespaces, e.g. {"U0123ABCD": ["team-a"], "U0456EFGH": ["*"]}';
/** Slack user ids: U… or W… (Enterprise Grid), upper-case letters and digits. */
const SLACK_USER = /^[UW][A-Z0-9]{2,20}$/;

const Approvers = z.record(
  z.string().regex(SLACK_USER, "keys must be Slack user ids such as U0123ABCD"),
  z
    .array(
      z.union([
        z.literal("*"),
        z.string().max(63).regex(DNS_LABEL, "must be a namespace name or *"),
      ]),
    )
    .min(1),
);

function str(env: Record<string, unknown>, name: string): string | undefined {
  const v = env[name];
  if (v === undefined || v === null || v === "") return undefined;
  if (typeof v !== "string") throw new Error(`${name}: expected a string`);
  return v;
}

function fmtPath(path: readonly PropertyKey[]): string {
  return path
    .map((p) => (typeof p === "number" ? `[${p}]` : `.${String(p)}`))
    .join("")
    .replace(/^\./, "");
}

function parseTokens(raw: string | undefined): ApiToken[] {
  if (raw === undefined) return [];
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    // The parser's message quotes the input: never pass it on.
    throw new Error(`PLUMB_API_TOKENS: ${TOKENS_SHAPE} (not valid JSON)`);
  }
  const r = ApiTokens.safeParse(json);
  if (!r.success) {
    // Issue paths and messages only; zod messages do not quote input values.
    const where = r.error.issues
      .map((i) => `${fmtPath(i.path) || "(top)"}: ${i.message}`)
      .join("; ");
    throw new Error(`PLUMB_API_TOKENS: ${TOKENS_SHAPE} (${where})`);
  }
  return r.data.map((t) =>
    t.namespaces ? { ...t, namespaces: t.namespaces } : { name: t.name, token: t.token },
  );
}

function parseDestinations(raw: string | undefined): string[] | undefined {
  if (raw === undefined) return undefined;
  const list = raw
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
  const bad = list.filter((s) => s !== "*" && !DNS_LABEL.test(s));
  if (bad.length > 0) {
    throw new Error(
      `PLUMB_ALLOWED_DESTINATIONS: expected "*" or namespace names, comma-separated (bad: ${bad.join(", ")})`,
    );
  }
  return list;
}

function parseSessionKey(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  if (raw.length < MIN_SESSION_KEY) {
    throw new Error(
      `PLUMB_SESSION_KEY: must be at least ${MIN_SESSION_KEY} characters (e.g. openssl rand -hex 32)`,
    );
  }
  return raw;
}

function parseSlack(env: Record<string, unknown>): SlackConfig | undefined {
  const secret = str(env, "PLUMB_SLACK_SIGNING_SECRET");
  const rawApprovers = str(env, "PLUMB_SLACK_APPROVERS");
  const rawOrigins = str(env, "PLUMB_SLACK_RESPONSE_ORIGINS");
  if (secret === undefined) {
    if (rawApprovers !== undefined || rawOrigins !== undefined) {
      throw new Error(
        "PLUMB_SLACK_SIGNING_SECRET: required when PLUMB_SLACK_APPROVERS or PLUMB_SLACK_RESPONSE_ORIGINS is set",
      );
    }
    return undefined;
  }
  if (rawApprovers === undefined) {
    throw new Error(
      `PLUMB_SLACK_APPROVERS: required with PLUMB_SLACK_SIGNING_SECRET (${APPROVERS_SHAPE})`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(rawApprovers);
  } catch {
    throw new Error(`PLUMB_SLACK_APPROVERS: ${APPROVERS_SHAPE} (not valid JSON)`);
  }
  const r = Approvers.safeParse(json);
  if (!r.success) {
    const where = r.error.issues
      .map((i) => `${fmtPath(i.path) || "(top)"}: ${i.message}`)
      .join("; ");
    throw new Error(`PLUMB_SLACK_APPROVERS: ${APPROVERS_SHAPE} (${where})`);
  }
  const origins = (rawOrigins ?? "https://hooks.slack.com")
    .split(",")
    .map((o) => o.trim())
    .filter((o) => o !== "");
  for (const o of origins) {
    let url: URL | undefined;
    try {
      url = new URL(o);
    } catch {
      url = undefined;
    }
    if (!url || (url.protocol !== "https:" && url.protocol !== "http:") || url.origin !== o) {
      throw new Error(
        `PLUMB_SLACK_RESPONSE_ORIGINS: expected origins such as https://hooks.slack.com, comma-separated (bad: ${o})`,
      );
    }
  }
  return { signingSecret: secret, approvers: r.data, responseOrigins: origins };
}

/**
 * Reads the HTTP configuration from `env` (process.env on Node, the Worker's `env` bindings).
 * - `PLUMB_API_TOKENS`: JSON array of `{name, token, namespaces?}`; tokens of 16+ characters,
 *   names and tokens unique; absent = no API access.
 * - `GITHUB_WEBHOOK_SECRET`, `GITLAB_WEBHOOK_TOKEN`, `GITEA_WEBHOOK_SECRET`: absent or empty =
 *   that provider's webhook route answers 404.
 * - `PLUMB_ALLOWED_DESTINATIONS`: comma-separated namespace names or "*".
 * - `PLUMB_SESSION_KEY`: the web page's session signing key, 32+ characters; absent = the page
 *   at / answers 404.
 * - `PLUMB_NAMESPACE`: plumb's own namespace (a namespace name; default plumb-system), where
 *   signed-out sessions are recorded.
 * - `PLUMB_SLACK_SIGNING_SECRET` with `PLUMB_SLACK_APPROVERS` (JSON object: Slack user id →
 *   namespaces or ["*"]) and optionally `PLUMB_SLACK_RESPONSE_ORIGINS` (origins a response_url
 *   may have, default https://hooks.slack.com): Slack's Approve/Reject buttons.
 * @throws Error whose message starts with the variable's name and says what was expected;
 *   it never contains a secret value.
 */
export function parseHttpConfig(env: Record<string, unknown>): HttpConfig {
  const config: HttpConfig = { apiTokens: parseTokens(str(env, "PLUMB_API_TOKENS")) };
  const github = str(env, "GITHUB_WEBHOOK_SECRET");
  const gitlab = str(env, "GITLAB_WEBHOOK_TOKEN");
  const gitea = str(env, "GITEA_WEBHOOK_SECRET");
  const destinations = parseDestinations(str(env, "PLUMB_ALLOWED_DESTINATIONS"));
  if (github) config.githubWebhookSecret = github;
  if (gitlab) config.gitlabWebhookToken = gitlab;
  if (gitea) config.giteaWebhookSecret = gitea;
  if (destinations) config.allowedDestinations = destinations;
  const sessionKey = parseSessionKey(str(env, "PLUMB_SESSION_KEY"));
  if (sessionKey) config.sessionKey = sessionKey;
  const namespace = str(env, "PLUMB_NAMESPACE");
  if (namespace !== undefined) {
    if (namespace.length > 63 || !DNS_LABEL.test(namespace)) {
      throw new Error("PLUMB_NAMESPACE: expected a namespace name (a DNS label)");
    }
    config.namespace = namespace;
  }
  const slack = parseSlack(env);
  if (slack) config.slack = slack;
  return config;
}

/**
 * The secret values of `config`: webhook secrets, API tokens, the session key and Slack's
 * signing secret, for the process's redactor, so that nothing it logs, answers or posts (a pull
 * request comment, a commit status) carries one, in any encoding the redactor detects.
 */
export function httpSecrets(config: HttpConfig): string[] {
  return [
    config.githubWebhookSecret,
    config.gitlabWebhookToken,
    config.giteaWebhookSecret,
    config.sessionKey,
    config.slack?.signingSecret,
    ...config.apiTokens.map((t) => t.token),
  ].filter((v): v is string => v !== undefined && v !== "");
}
