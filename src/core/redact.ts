// Redaction of secret values (rendered Secrets, Git and registry credentials) from any text
// plumb writes: plain, base64 (standard and URL-safe, alone or inside a longer base64 string),
// percent-encoded, JSON/Go-escaped (also more than once) and as HTML entities. Pure; imports
// nothing outside src/core.
import { decodedViews } from "./text-views.ts";

/** What a secret is replaced with. */
export const REDACTED = "[redacted]";

/**
 * Shortest secret (in characters, or bytes for binary values, surrounding whitespace not
 * counted) that is redacted wherever it appears. Redacting shorter values everywhere would
 * mangle ordinary text ("3", "true", "prod" are common Secret values and common words), and
 * they are not credentials: 5 characters hold at most ~33 bits even when random. So:
 * - a shorter Secret value is redacted only where a message quotes it whole (`"abc"`, `'abc'`,
 *   also escaped or base64-encoded between the quotes), which is how the API server and Go
 *   echo a value (`Invalid value: "abc"`);
 * - a shorter credential (Git or registry token or password) is refused before it is used
 *   ({@link shortCredential}), so it never reaches a URL, a header or an error message.
 */
export const MIN_SECRET_LENGTH = 6;

/** Git/registry credentials as a Secret gives them (keys token, username, password). */
export interface Credentials {
  token?: string | undefined;
  username?: string | undefined;
  password?: string | undefined;
}

/**
 * The first credential (token or password; a username is not secret) shorter than
 * {@link MIN_SECRET_LENGTH}, named for an error message, or undefined when all may be used.
 * Callers refuse such credentials: plumb could not redact them from its messages.
 * @example shortCredential({ token: "abc" }) === "token"
 */
export function shortCredential(creds: Credentials | undefined): "token" | "password" | undefined {
  if (creds?.token && isShort(creds.token)) return "token";
  if (creds?.password && isShort(creds.password)) return "password";
  return undefined;
}

function isShort(value: string): boolean {
  return [...value.trim()].length < MIN_SECRET_LENGTH;
}

/**
 * Secret values and the redaction of every encoding of them from text. Values accumulate (a
 * process may register the Secrets of every App it reconciles: redacting one App's secret from
 * another App's message is harmless). One call per boundary: {@link redact} for a string,
 * {@link redactValue} for a JSON value (a status, an Event, an HTTP body, a log entry).
 */
export class Redactor {
  /** Per long secret (keyed by its text), the strings to look for: itself and its base64. */
  private readonly needles = new Map<string, string[]>();
  /** Per short secret, the same, looked for only between quotes. */
  private readonly shortNeedles = new Map<string, string[]>();

  constructor(values: Iterable<string | Uint8Array> = []) {
    for (const v of values) this.add(v);
  }

  /** Number of distinct secret values registered. */
  get size(): number {
    return this.needles.size + this.shortNeedles.size;
  }

  /**
   * Registers a secret value: text, or bytes (a Secret's decoded `data`; redacted as text when
   * they are UTF-8, and in base64 always). Empty values are ignored; a value with surrounding
   * whitespace (a trailing newline from a file) is registered trimmed too.
   */
  add(value: string | Uint8Array): this {
    const bytes = typeof value === "string" ? new TextEncoder().encode(value) : value;
    const text = typeof value === "string" ? value : utf8(value);
    if (bytes.length === 0) return this;
    const variants = new Set<string>();
    if (text !== undefined) {
      variants.add(text);
      if (text.trim() !== "") variants.add(text.trim());
    }
    for (const t of variants) this.register(t, new TextEncoder().encode(t));
    if (text === undefined) this.registerBytes(bytes);
    return this;
  }

  /**
   * Registers Git/registry credentials: the token, the password, and `username:password` /
   * `username:token` (whose base64 is an HTTP Basic `Authorization` header). The username
   * alone is not a secret.
   */
  addCredentials(creds: Credentials | undefined): this {
    if (!creds) return this;
    for (const secret of [creds.token, creds.password]) {
      if (!secret) continue;
      this.add(secret);
      if (creds.username) this.add(`${creds.username}:${secret}`);
    }
    return this;
  }

  /**
   * Registers the values of every v1 Secret among `objects` (a render): `data` values
   * base64-decoded (and as written), `stringData` values as they are. A value of the wrong type
   * (`stringData: {port: 5432}`, which the API server refuses and may echo in its error) is
   * registered by its JSON text, nested values by their leaves. Other objects are skipped.
   */
  addSecretsOf(objects: Iterable<unknown>): this {
    for (const o of objects) {
      if (!isRecord(o) || o["apiVersion"] !== "v1" || o["kind"] !== "Secret") continue;
      for (const v of leaves(o["data"])) {
        this.add(v);
        const bytes = decodeBase64(v);
        if (bytes) this.add(bytes);
      }
      for (const v of leaves(o["stringData"])) this.add(v);
    }
    return this;
  }

  /**
   * `text` with every registered secret, in every encoding, replaced by {@link REDACTED}. The
   * value and its base64 forms are looked for in the text and in its decoded views
   * (text-views.ts), and the span of the text each match came from is replaced, escapes and
   * all. A short secret is replaced only where the view has it between two equal quotes.
   */
  redact(text: string): string {
    if (this.size === 0 || text === "") return text;
    const spans: Array<[number, number]> = [];
    for (const view of decodedViews(text)) {
      const span = (i: number, n: number): [number, number] => [
        view.start[i] ?? 0,
        view.start[i + n] ?? text.length,
      ];
      for (const list of this.needles.values()) {
        for (const needle of list) {
          for (const i of occurrences(view.text, needle)) spans.push(span(i, needle.length));
        }
      }
      for (const list of this.shortNeedles.values()) {
        for (const needle of list) {
          for (const i of occurrences(view.text, needle)) {
            const before = view.text[i - 1];
            const after = view.text[i + needle.length];
            if (before !== undefined && QUOTES.includes(before) && before === after) {
              spans.push(span(i, needle.length));
            }
          }
        }
      }
    }
    return replaceSpans(text, spans);
  }

  /**
   * A copy of a JSON value with every string (object keys included) redacted. Numbers,
   * booleans and null are kept; an Error becomes its redacted message.
   */
  redactValue<T>(value: T): T {
    if (this.size === 0) return value;
    return this.deep(value) as T;
  }

  private deep(value: unknown): unknown {
    if (typeof value === "string") return this.redact(value);
    if (value instanceof Error) return this.redact(value.message);
    if (Array.isArray(value)) return value.map((v) => this.deep(v));
    if (!isRecord(value)) return value;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      Object.defineProperty(out, this.redact(k), {
        value: this.deep(v),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  }

  private register(text: string, bytes: Uint8Array): void {
    if (isShort(text)) remember(this.shortNeedles, text, [text, ...fullBase64(bytes)]);
    else remember(this.needles, text, [text, ...base64Forms(bytes)]);
  }

  private registerBytes(bytes: Uint8Array): void {
    const key = `\u0000bytes:${fullBase64(bytes)[0]}`;
    if (bytes.length < MIN_SECRET_LENGTH) remember(this.shortNeedles, key, fullBase64(bytes));
    else remember(this.needles, key, base64Forms(bytes));
  }
}

/**
 * Most values a Redactor keeps (of each length class). A long-lived process registers every
 * run's secrets again before it writes anything, so dropping the least recently registered
 * beyond this bound (a rotated password, a deleted App) loses nothing in use. ~0.7 KiB each.
 */
export const MAX_SECRET_VALUES = 10_000;

function remember(map: Map<string, string[]>, key: string, needles: string[]): void {
  map.delete(key);
  map.set(key, needles);
  if (map.size > MAX_SECRET_VALUES) {
    const oldest = map.keys().next();
    if (!oldest.done) map.delete(oldest.value);
  }
}

const QUOTES = `"'\``;

/** Start offsets of every occurrence of `needle` in `text` (overlapping ones included). */
function occurrences(text: string, needle: string): number[] {
  const out: number[] = [];
  for (let i = text.indexOf(needle); i >= 0; i = text.indexOf(needle, i + 1)) out.push(i);
  return out;
}

/** `text` with the union of `spans` ([start, end) offsets) each replaced by REDACTED. */
function replaceSpans(text: string, spans: Array<[number, number]>): string {
  if (spans.length === 0) return text;
  spans.sort((a, b) => a[0] - b[0] || b[1] - a[1]);
  let out = "";
  let at = 0;
  let open: [number, number] | undefined;
  for (const [from, to] of spans) {
    if (open && from < open[1]) {
      open[1] = Math.max(open[1], to);
      continue;
    }
    if (open) {
      out += text.slice(at, open[0]) + REDACTED;
      at = open[1];
    }
    open = [from, to];
  }
  if (open) {
    out += text.slice(at, open[0]) + REDACTED;
    at = open[1];
  }
  return out + text.slice(at);
}

const STD = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/** Base64 of `bytes` without padding, in the standard alphabet. */
function b64(bytes: Uint8Array): string {
  let out = "";
  for (let i = 0; i < bytes.length; i += 3) {
    const n = ((bytes[i] ?? 0) << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0);
    const chars = Math.ceil((Math.min(3, bytes.length - i) * 8) / 6);
    for (let j = 0; j < chars; j++) out += STD[(n >> (18 - 6 * j)) & 63];
  }
  return out;
}

const toUrlSafe = (s: string) => s.replaceAll("+", "-").replaceAll("/", "_");

/** The value's own base64: standard and URL-safe, padded (first) and unpadded. */
function fullBase64(bytes: Uint8Array): string[] {
  const bare = b64(bytes);
  const padded = bare + "=".repeat((4 - (bare.length % 4)) % 4);
  return [...new Set([padded, bare, toUrlSafe(padded), toUrlSafe(bare)])];
}

/**
 * The value's base64, and the runs of base64 characters that only the value decides when it
 * sits inside a longer base64 string at byte offset 0, 1 or 2 (mod 3):
 * with `i` bytes before it, base64 characters ceil(8i/6) to floor(8(i+n)/6) depend on the value
 * alone. That is how a token shows in `Authorization: Basic base64(user:token)` or in a
 * base64-encoded kubeconfig. Standard and URL-safe alphabets. Only for values of at least
 * MIN_SECRET_LENGTH bytes, whose runs are then at least 7 characters (42 bits) long.
 */
function base64Forms(bytes: Uint8Array): string[] {
  const out = fullBase64(bytes);
  for (let i = 0; i < 3; i++) {
    const shifted = new Uint8Array(i + bytes.length);
    shifted.set(bytes, i);
    const core = b64(shifted).slice(
      Math.ceil((8 * i) / 6),
      Math.floor((8 * (i + bytes.length)) / 6),
    );
    out.push(core, toUrlSafe(core));
  }
  return [...new Set(out)];
}

/** The bytes of standard or URL-safe base64 (padding optional), or undefined if it is not. */
function decodeBase64(text: string): Uint8Array | undefined {
  const clean = text.replace(/\s+/g, "").replace(/-/g, "+").replace(/_/g, "/").replace(/=+$/, "");
  if (clean === "" || !/^[A-Za-z0-9+/]*$/.test(clean) || clean.length % 4 === 1) return undefined;
  try {
    return Uint8Array.from(atob(clean + "=".repeat((4 - (clean.length % 4)) % 4)), (c) =>
      c.charCodeAt(0),
    );
  } catch {
    return undefined;
  }
}

/** UTF-8 text of `bytes`, or undefined when they are not valid UTF-8. */
function utf8(bytes: Uint8Array): string | undefined {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

/** The scalar leaves of a JSON value as text (strings as they are, numbers as JSON). */
function leaves(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (typeof value === "number" || typeof value === "bigint") return [String(value)];
  if (Array.isArray(value)) return value.flatMap(leaves);
  if (isRecord(value)) return Object.values(value).flatMap(leaves);
  return [];
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
