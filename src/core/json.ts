// Canonical JSON and hashing (status.objectHash), and the byte encodings plumb needs.

/** JSON with object keys sorted at every level: equal objects serialize equally. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    out[key] = sortKeys((value as Record<string, unknown>)[key]);
  }
  return out;
}

/**
 * SHA-256 of the canonical JSON of `value`, hex, first 16 characters ("sha256:" omitted).
 * Uses Web Crypto (Node 24 and workerd both have it); no I/O.
 */
export async function hashObjects(value: unknown): Promise<string> {
  const bytes = new TextEncoder().encode(canonicalJson(value));
  const digest = await crypto.subtle.digest("SHA-256", bytes);
  return hex(new Uint8Array(digest)).slice(0, 16);
}

/** Lower-case hex of `bytes`. */
export function hex(bytes: Uint8Array): string {
  let out = "";
  for (const b of bytes) out += b.toString(16).padStart(2, "0");
  return out;
}

/** Standard base64 (RFC 4648 §4, padded) of a string's UTF-8 bytes. Web APIs only (btoa). */
export function base64(text: string): string {
  let binary = "";
  for (const b of new TextEncoder().encode(text)) binary += String.fromCharCode(b);
  return btoa(binary);
}

/** An HTTP Basic `Authorization` header value (RFC 7617) for user and password. */
export function basicAuth(user: string, password: string): string {
  return `Basic ${base64(`${user}:${password}`)}`;
}
