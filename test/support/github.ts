// GitHub push deliveries for tests, shaped as GitHub documents the push event
// (https://docs.github.com/en/webhooks/webhook-events-and-payloads#push) and signed with
// X-Hub-Signature-256 = HMAC-SHA256 over the raw body.
import { createHmac } from "node:crypto";

/** A push payload for `cloneUrl` moving `ref` to `after`. */
export function githubPush(
  cloneUrl: string,
  ref: string,
  after: string,
  before = `${"0".repeat(39)}1`,
): string {
  const u = new URL(cloneUrl);
  const fullName = u.pathname.replace(/^\//, "").replace(/\.git$/, "");
  return JSON.stringify({
    ref,
    before,
    after,
    created: false,
    deleted: false,
    forced: false,
    compare: `${u.origin}/${fullName}/compare/${before.slice(0, 12)}...${after.slice(0, 12)}`,
    commits: [
      {
        id: after,
        message: "update image ✓",
        timestamp: "2026-11-29T12:00:00Z",
        author: { name: "dev", email: "dev@example.com" },
      },
    ],
    head_commit: { id: after, message: "update image ✓" },
    repository: {
      id: 1,
      name: fullName.split("/").pop(),
      full_name: fullName,
      private: false,
      html_url: `${u.origin}/${fullName}`,
      clone_url: cloneUrl,
      git_url: `git://${u.host}/${fullName}.git`,
      ssh_url: `git@${u.hostname}:${fullName}.git`,
      default_branch: "main",
      master_branch: "main",
    },
    pusher: { name: "dev", email: "dev@example.com" },
    sender: { login: "dev", id: 2, type: "User" },
  });
}

/** Headers of a signed delivery. */
export function githubHeaders(
  body: string,
  secret: string,
  event = "push",
): Record<string, string> {
  const sig = createHmac("sha256", secret).update(body).digest("hex");
  return {
    "content-type": "application/json",
    "x-github-event": event,
    "x-github-delivery": "72d3162e-cc78-11e3-81ab-4c9367dc0958",
    "x-hub-signature-256": `sha256=${sig}`,
  };
}

/**
 * Sends a correctly signed push delivery for `cloneUrl` at `sha` to `${base}/webhooks/github`.
 * With `form`, as a hook whose content type is `form` (the API's default) delivers it:
 * `application/x-www-form-urlencoded`, body `payload=<url-encoded JSON>`, signed over that body.
 */
export function sendGithubPush(
  base: string,
  secret: string,
  cloneUrl: string,
  sha: string,
  ref = "refs/heads/main",
  opts: { form?: boolean } = {},
): Promise<Response> {
  const json = githubPush(cloneUrl, ref, sha);
  const body = opts.form ? new URLSearchParams({ payload: json }).toString() : json;
  const headers = githubHeaders(body, secret);
  if (opts.form) headers["content-type"] = "application/x-www-form-urlencoded";
  return fetch(`${base}/webhooks/github`, { method: "POST", headers, body });
}
