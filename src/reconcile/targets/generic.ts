// A generic webhook: one JSON event per transition, signed with HMAC-SHA256 when a key is
// given (Flux notification-controller's generic and generic-hmac providers:
// internal/notifier/forwarder.go).
import { genericEvent } from "../../plan/index.ts";
import type { NotificationTarget } from "./target.ts";

/**
 * The secret is the URL; with signingSecretRef, each request carries
 * `X-Signature: sha256=<hex HMAC-SHA256 of the body, keyed with that Secret's value>`, over the
 * exact bytes sent.
 */
export const generic: NotificationTarget<"generic"> = {
  name: "generic",
  title: "Webhook",
  secretRefs: (config) => (config.signingSecretRef ? [config.signingSecretRef] : []),
  async post(event, { secret, secrets, http, redact }) {
    const body = JSON.stringify(redact(genericEvent(event)));
    const headers: Record<string, string> = { "content-type": "application/json" };
    const key = secrets[0];
    if (key !== undefined) headers["x-signature"] = `sha256=${await hmacSha256Hex(key, body)}`;
    await http.post(secret, body, headers);
  },
};

/** Hex HMAC-SHA256 of `body` (UTF-8) keyed with `key` (UTF-8), through Web Crypto (Node and workerd). */
export async function hmacSha256Hex(key: string, body: string): Promise<string> {
  const encoder = new TextEncoder();
  const cryptoKey = await crypto.subtle.importKey(
    "raw",
    encoder.encode(key),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", cryptoKey, encoder.encode(body)));
  return Array.from(mac, (b) => b.toString(16).padStart(2, "0")).join("");
}
