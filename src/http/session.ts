// Web sessions: a signed, expiring cookie naming the API token a person signed in with, and
// the CSRF tokens of the page's forms. Signing out is recorded in the cluster (routes/web.ts),
// under a name derived here from the session id, so every process refuses the cookie after.
// Web Crypto only (Node and workerd).
import { type Caller, callerOf } from "./auth.ts";
import type { ApiToken } from "./config.ts";
import { bytesEqual } from "./verify.ts";

/** How long a session lasts: 8 hours, then the person signs in again. */
export const SESSION_SECONDS = 8 * 3600;
/** How long the sign-in form may sit before it is posted: 10 minutes. */
export const LOGIN_SECONDS = 600;

const encoder = new TextEncoder();

function b64url(bytes: Uint8Array): string {
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function fromB64url(text: string): Uint8Array | undefined {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return undefined;
  try {
    const bin = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
    return Uint8Array.from(bin, (ch) => ch.charCodeAt(0));
  } catch {
    return undefined;
  }
}

/** A random URL-safe string of `bytes` random bytes. */
export function randomId(bytes = 16): string {
  return b64url(crypto.getRandomValues(new Uint8Array(bytes)));
}

/** What a session cookie carries (signed, not encrypted: it holds nothing secret). */
interface SessionData {
  /** Token name. */
  n: string;
  /** Fingerprint of the token (keyed hash): rotating or removing the token ends its sessions. */
  f: string;
  /** Session id, the seed of its CSRF tokens. */
  s: string;
  /** Expiry, seconds since the epoch. */
  e: number;
}

/** A signed-in person: the token's caller, the session's CSRF token and its sign-out record. */
export interface Session {
  caller: Caller;
  csrf: string;
  /**
   * Name of the record that signs this session out (a DNS label: "plumb-signout-" and 32 hex
   * digits of a keyed hash of the session id, so the record names no cookie).
   */
  record: string;
  /** When the cookie expires: a sign-out record is kept until then. */
  expires: Date;
}

/**
 * Signs sessions and CSRF tokens with the key PLUMB_SESSION_KEY (HMAC-SHA256; every purpose
 * gets its own prefix, so a value made for one cannot pass as another).
 */
export class SessionKeys {
  private readonly key: Promise<CryptoKey>;
  private readonly tokens: readonly ApiToken[];

  constructor(secret: string, tokens: readonly ApiToken[]) {
    this.key = crypto.subtle.importKey(
      "raw",
      encoder.encode(secret),
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["sign", "verify"],
    );
    this.tokens = tokens;
  }

  private async mac(purpose: string, value: string): Promise<Uint8Array> {
    const sig = await crypto.subtle.sign(
      "HMAC",
      await this.key,
      encoder.encode(`${purpose}:${value}`),
    );
    return new Uint8Array(sig);
  }

  private async fingerprint(token: ApiToken): Promise<string> {
    return b64url((await this.mac("token", token.token)).slice(0, 16));
  }

  /** A session cookie value for `token`, valid until now + SESSION_SECONDS. */
  async issue(token: ApiToken, now: Date): Promise<string> {
    const data: SessionData = {
      n: token.name,
      f: await this.fingerprint(token),
      s: randomId(),
      e: Math.floor(now.getTime() / 1000) + SESSION_SECONDS,
    };
    const payload = b64url(encoder.encode(JSON.stringify(data)));
    return `${payload}.${b64url(await this.mac("session", payload))}`;
  }

  /**
   * The session in a cookie value, or undefined when it is absent, malformed, not signed with
   * this key, expired, or its token was removed or changed since. Signatures are compared in
   * constant time. Whether it was signed out is the cluster's to say (Session.record).
   */
  async open(value: string | undefined, now: Date): Promise<Session | undefined> {
    if (!value || value.length > 4096) return undefined;
    const [payload, sig, ...rest] = value.split(".");
    if (payload === undefined || sig === undefined || rest.length > 0) return undefined;
    const given = fromB64url(sig);
    if (!given || !bytesEqual(given, await this.mac("session", payload))) return undefined;
    let data: Partial<SessionData>;
    try {
      data = JSON.parse(new TextDecoder().decode(fromB64url(payload))) as Partial<SessionData>;
    } catch {
      return undefined;
    }
    if (typeof data.e !== "number" || data.e * 1000 <= now.getTime()) return undefined;
    if (typeof data.n !== "string" || typeof data.s !== "string") return undefined;
    const token = this.tokens.find((t) => t.name === data.n);
    if (!token || data.f !== (await this.fingerprint(token))) return undefined;
    const record = [...(await this.mac("signout", data.s)).slice(0, 16)]
      .map((b) => b.toString(16).padStart(2, "0"))
      .join("");
    return {
      caller: callerOf(token),
      csrf: b64url(await this.mac("csrf", data.s)),
      record: `plumb-signout-${record}`,
      expires: new Date(data.e * 1000),
    };
  }

  /** The sign-in form's CSRF token for the nonce in its short-lived cookie. */
  async loginCsrf(nonce: string): Promise<string> {
    return b64url(await this.mac("login", nonce));
  }
}

/** Constant-time comparison of two CSRF tokens; false when either is missing. */
export function csrfMatches(expected: string, given: string | undefined): boolean {
  if (!given || given.length > 256) return false;
  const a = encoder.encode(expected);
  const b = encoder.encode(given);
  return a.length === b.length && bytesEqual(a, b);
}
