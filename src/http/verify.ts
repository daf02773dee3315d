// Webhook authentication and constant-time comparisons, on Web Crypto only (Node and workerd).

import { Webhooks } from "@octokit/webhooks";
import { hex } from "../core/index.ts";

const encoder = new TextEncoder();

/** SHA-256 of the UTF-8 bytes of `s`. */
export async function sha256(s: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(s)));
}

/** Equal-length byte comparison whose time does not depend on where the bytes differ. */
export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= (a[i] ?? 0) ^ (b[i] ?? 0);
  return diff === 0;
}

/**
 * String equality in constant time: both sides are hashed (SHA-256) first, so neither the
 * position of the first difference nor the secret's length shows in the timing.
 */
export async function timingSafeEqual(a: string, b: string): Promise<boolean> {
  const [da, db] = await Promise.all([sha256(a), sha256(b)]);
  return bytesEqual(da, db);
}

async function hmacKey(secret: string): Promise<CryptoKey> {
  return crypto.subtle.importKey(
    "raw",
    encoder.encode(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign", "verify"],
  );
}

/** Hex HMAC-SHA256 of `body` under `secret` (what Gitea sends; used by tests to sign). */
export async function hmacSha256Hex(
  secret: string,
  body: Uint8Array<ArrayBuffer> | string,
): Promise<string> {
  const data = typeof body === "string" ? encoder.encode(body) : body;
  return hex(new Uint8Array(await crypto.subtle.sign("HMAC", await hmacKey(secret), data)));
}

const HEX64 = /^[0-9a-f]{64}$/i;

/**
 * GitHub: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body>`
 * (https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries).
 * Checked with @octokit/webhooks' `verify` (constant time) over `rawBody`, which must be the
 * exact body text as received (decoded from its bytes, never re-serialized JSON).
 * @returns false for a missing, malformed or wrong signature; never throws.
 */
export async function verifyGitHub(
  secret: string,
  rawBody: string,
  header: string | undefined,
): Promise<boolean> {
  const m = /^sha256=([0-9a-f]{64})$/i.exec(header?.trim() ?? "");
  if (!m || rawBody === "") return false;
  try {
    return await new Webhooks({ secret }).verify(rawBody, `sha256=${m[1]?.toLowerCase()}`);
  } catch {
    return false;
  }
}

/**
 * Gitea: `X-Gitea-Signature: <hex HMAC-SHA256 of the raw body>` (Gitea docs, "Webhooks").
 * Verified with `crypto.subtle.verify` over the body bytes (constant time).
 * @returns false for a missing, malformed or wrong signature.
 */
export async function verifyGitea(
  secret: string,
  body: Uint8Array<ArrayBuffer>,
  header: string | undefined,
): Promise<boolean> {
  const hex = header?.trim() ?? "";
  if (!HEX64.test(hex)) return false;
  const sig = new Uint8Array(32);
  for (let i = 0; i < 32; i++) sig[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return crypto.subtle.verify("HMAC", await hmacKey(secret), sig, body);
}

/**
 * GitLab: `X-Gitlab-Token` carries the configured secret token itself (GitLab docs, "Webhooks":
 * "Secret token"). Compared in constant time.
 * @returns false when the header is missing or differs.
 */
export async function verifyGitLab(secret: string, header: string | undefined): Promise<boolean> {
  if (header === undefined || header === "") return false;
  return timingSafeEqual(secret, header);
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * The body bytes as text, exactly: invalid UTF-8 gives undefined instead of replacement
 * characters, and a leading BOM is kept, so the text encodes back to the same bytes.
 */
export function decodeExact(body: Uint8Array): string | undefined {
  try {
    return strictUtf8.decode(body);
  } catch {
    return undefined;
  }
}

/** How old a Slack request may be: 5 minutes, as Slack's guide recommends against replays. */
export const SLACK_MAX_AGE_SECONDS = 300;

/**
 * Slack's request signature (https://api.slack.com/authentication/verifying-requests-from-slack):
 * `X-Slack-Signature: v0=<hex HMAC-SHA256 of "v0:{X-Slack-Request-Timestamp}:{raw body}">` with
 * the app's signing secret. Verified with `crypto.subtle.verify` (constant time) over the exact
 * body bytes.
 * @returns "ok"; "stale" when the timestamp is missing, not an integer, or more than
 *   {@link SLACK_MAX_AGE_SECONDS} away from `now` (either way); "invalid" for a missing,
 *   malformed or wrong signature. Never throws.
 */
export async function verifySlack(
  secret: string,
  timestamp: string | undefined,
  body: Uint8Array,
  signature: string | undefined,
  now: Date,
): Promise<"ok" | "stale" | "invalid"> {
  const ts = timestamp?.trim() ?? "";
  if (!/^[0-9]{1,12}$/.test(ts)) return "stale";
  if (Math.abs(now.getTime() / 1000 - Number(ts)) > SLACK_MAX_AGE_SECONDS) return "stale";
  const m = /^v0=([0-9a-f]{64})$/i.exec(signature?.trim() ?? "");
  if (!m?.[1]) return "invalid";
  const sig = new Uint8Array(32);
  for (let i = 0; i < 32; i++) sig[i] = Number.parseInt(m[1].slice(i * 2, i * 2 + 2), 16);
  const prefix = encoder.encode(`v0:${ts}:`);
  const data = new Uint8Array(prefix.length + body.length);
  data.set(prefix);
  data.set(body, prefix.length);
  const ok = await crypto.subtle.verify("HMAC", await hmacKey(secret), sig, data);
  return ok ? "ok" : "invalid";
}
