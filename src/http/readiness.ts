// What /healthz and start-up say about the configuration: what is missing or wrong,
// in words that name the setting, never its value.
import type { HttpConfig } from "./config.ts";
import { secured } from "./headers.ts";

/**
 * Settings that leave part of the HTTP app unusable, though plumb runs: no API tokens (every
 * /api request and the web page's sign-in are refused with 401), no webhook secret (every
 * /webhooks route answers 404). Empty when neither applies.
 */
export function configWarnings(config: HttpConfig): string[] {
  const out: string[] = [];
  if (config.apiTokens.length === 0) {
    out.push(
      "PLUMB_API_TOKENS is not set: every /api request and the web page's sign-in are refused (401)",
    );
  }
  if (!config.githubWebhookSecret && !config.gitlabWebhookToken && !config.giteaWebhookSecret) {
    out.push(
      "no webhook secret is set (GITHUB_WEBHOOK_SECRET, GITLAB_WEBHOOK_TOKEN, GITEA_WEBHOOK_SECRET): every /webhooks route answers 404",
    );
  }
  return out;
}

/**
 * The answer when plumb cannot serve at all because settings are missing or invalid (the
 * Worker's bindings): 503 Service Unavailable (not ready; a probe or a person retries after
 * fixing it), `{"status": "unavailable", "problems": [...]}` at /healthz and
 * `{"message": "configuration error: ...", "problems": [...]}` elsewhere. Each problem names the
 * setting and what is wrong with it, never its value. With the app's security headers.
 */
export function unavailable(path: string, problems: readonly string[]): Response {
  const body =
    path === "/healthz"
      ? { status: "unavailable", problems }
      : { message: `configuration error: ${problems.join("; ")}`, problems };
  return secured(Response.json(body, { status: 503 }));
}
