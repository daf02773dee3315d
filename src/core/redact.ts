// Redaction of secret values (rendered Secrets, Git and registry credentials) from any text
// plumb writes, by detection: the text is normalised (escapes undone, case folded, separators
// dropped) and searched for each value's plain, hex and base64 forms. Pure; imports nothing
// outside src/core.
import { Matcher, type Needle } from "./matcher.ts";
import { decodedViews, foldCase, foldText, spanOf, squeeze, type TextView } from "./text-views.ts";

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
 * Secret values, found and redacted in any text by detection rather than by a list of
 * spellings: the text is normalised (encodings undone in any nesting: JSON/Go backslashes,
 * percent-encoding once or more, HTML entities, hex and base64 runs that spell text, as in
 * hex of `Basic base64(...)`; then case folded; then, for binary-to-text
 * forms, whitespace and ":" dropped and base64url read as base64) and every normalised view is
 * searched for the value's canonical forms: the value itself, its hex, and the runs of its
 * base64 that only the value decides at each of the three byte offsets (so also inside a
 * longer base64 string such as `Basic base64(user:token)`, padded or not, standard or URL-safe,
 * upper- or lower-cased, wrapped or split by spaces). What is left of a value where a text was
 * cut (before "…" or "...", or at the end of a long text) is redacted too.
 * Values accumulate (a process may register the Secrets of every App it reconciles: redacting
 * one App's secret from another App's message is harmless). One call per boundary:
 * {@link redact} for a string, {@link redactValue} for a JSON value (a status, an Event, an
 * HTTP body, a log entry). The cost of a text is linear in its length, whatever the number of
 * values (src/core/matcher.ts).
 */
export class Redactor {
  /** Per long secret (keyed by its text, or its bytes): its plain and its encoded forms. */
  private readonly long = new Map<string, Forms>();
  /** Per short secret, the strings looked for, only between quotes. */
  private readonly short = new Map<string, string[]>();
  /** Built on first use after the set of values changed. */
  private compiled: Compiled | undefined;

  constructor(values: Iterable<string | Uint8Array> = []) {
    for (const v of values) this.add(v);
  }

  /** Number of distinct secret values registered. */
  get size(): number {
    return this.long.size + this.short.size;
  }

  /**
   * Registers a secret value: text, or bytes (a Secret's decoded `data`; redacted as text when
   * they are UTF-8, and in hex and base64 always). Empty values are ignored; a value with
   * surrounding whitespace (a trailing newline from a file) is registered trimmed too.
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
   * `text` with every registered secret, in any encoding, replaced by {@link REDACTED}: each
   * normalised view of the text (text-views.ts) is searched for each value's forms, and the
   * span of the text a match came from is replaced, escapes, separators and all (for a base64
   * form, with the characters next to it that carry bits of the value, and its padding). A
   * short secret is replaced only where a view has it whole between two equal quotes.
   */
  redact(text: string): string {
    if (this.size === 0 || text === "") return text;
    const { plain, encoded, short, shortLongest } = this.compile();
    const spans: Array<[number, number]> = [];
    const cutEnd = text.length >= CUT_LENGTH;
    for (const view of decodedViews(text)) {
      const folded = foldCase(view);
      const squeezed = squeeze(folded);
      const add = (v: TextView, from: number, to: number) => spans.push(spanOf(v, from, to));
      plain.find(folded.text, (at, n) => add(folded, at, at + n.text.length));
      const encodedHit = (at: number, n: Needle, end = at + n.text.length) => {
        const t = squeezed.text;
        const from = n.before && at > 0 && isBase64Char(t[at - 1]) ? at - 1 : at;
        let to = end;
        if (n.after && end === at + n.text.length && isBase64Char(t[to])) to++;
        while (t[to] === "=") to++;
        add(squeezed, from, to);
      };
      encoded.find(squeezed.text, (at, n) => encodedHit(at, n));
      for (const end of cuts(folded.text, cutEnd)) {
        plain.cutAt(folded.text, end, (at) => add(folded, at, end));
      }
      for (const end of cuts(squeezed.text, cutEnd)) {
        encoded.cutAt(squeezed.text, end, (at, n) =>
          end - at >= CUT_MIN_ENCODED ? encodedHit(at, n, end) : undefined,
        );
      }
      if (short.size > 0) quotedShort(view, short, shortLongest, add);
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

  private compile(): Compiled {
    if (this.compiled) return this.compiled;
    const forms = [...this.long.values()];
    const short = new Set<string>();
    for (const list of this.short.values()) for (const s of list) short.add(s);
    this.compiled = {
      plain: new Matcher(forms.flatMap((f) => f.plain.map((text) => ({ text })))),
      encoded: new Matcher(forms.flatMap((f) => f.encoded)),
      short,
      shortLongest: Math.max(0, ...[...short].map((s) => s.length)),
    };
    return this.compiled;
  }

  private remember<V>(map: Map<string, V>, key: string, value: V): void {
    const known = map.has(key);
    map.delete(key);
    map.set(key, value);
    if (!known) this.compiled = undefined;
    if (map.size > MAX_SECRET_VALUES) {
      const oldest = map.keys().next();
      if (!oldest.done) map.delete(oldest.value);
    }
  }

  private register(text: string, bytes: Uint8Array): void {
    if (isShort(text)) this.remember(this.short, text, [text, ...fullBase64(bytes)]);
    else this.remember(this.long, text, { plain: [foldText(text)], encoded: encodedForms(bytes) });
  }

  private registerBytes(bytes: Uint8Array): void {
    const key = `\u0000bytes:${fullBase64(bytes)[0]}`;
    if (bytes.length < MIN_SECRET_LENGTH) this.remember(this.short, key, fullBase64(bytes));
    else this.remember(this.long, key, { plain: [], encoded: encodedForms(bytes) });
  }
}

/** A long secret's forms: plain (case folded) and binary-to-text (folded as squeeze does). */
interface Forms {
  plain: string[];
  encoded: Needle[];
}

interface Compiled {
  plain: Matcher;
  encoded: Matcher;
  short: Set<string>;
  shortLongest: number;
}

/**
 * Most values a Redactor keeps (of each length class). A long-lived process registers every
 * run's secrets again before it writes anything, so dropping the least recently registered
 * beyond this bound (a rotated password, a deleted App) loses nothing in use. ~0.5 KiB each.
 */
export const MAX_SECRET_VALUES = 10_000;

/** A text at least this long may have been cut to a length: its end is searched for a value's start. */
const CUT_LENGTH = 128;
/**
 * Shortest start of a base64 or hex form recognised at a cut: 8 characters (32 bits or more),
 * so a long text ending in hex digits (a commit SHA) is not taken for one of thousands of
 * values' starts. A plain value's start counts from CUT_MIN (4) characters.
 */
const CUT_MIN_ENCODED = 8;
const ELLIPSES = ["\u2026", "..."];

/** Where `text` may have been cut: before each ellipsis, and at its end when `end`. */
function cuts(text: string, end: boolean): number[] {
  const out: number[] = [];
  for (const e of ELLIPSES) {
    for (let i = text.indexOf(e); i >= 0; i = text.indexOf(e, i + 1)) out.push(i);
  }
  if (end) out.push(text.length);
  return out;
}

/** Calls `add` for each short needle the view has whole between two equal quotes. */
function quotedShort(
  view: TextView,
  short: ReadonlySet<string>,
  longest: number,
  add: (v: TextView, from: number, to: number) => void,
): void {
  const t = view.text;
  for (let q = 0; q < t.length; q++) {
    const quote = t[q] ?? "";
    if (!QUOTES.includes(quote)) continue;
    for (let n = 1; n <= longest && q + n + 1 < t.length; n++) {
      if (t[q + n + 1] === quote && short.has(t.slice(q + 1, q + n + 1)))
        add(view, q + 1, q + n + 1);
    }
  }
}

const QUOTES = `"'\``;
const BASE64_FOLDED = /^[a-z0-9+/]$/;

function isBase64Char(ch: string | undefined): boolean {
  return ch !== undefined && BASE64_FOLDED.test(ch);
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

const HEX_DIGITS = "0123456789abcdef";

/**
 * The value's binary-to-text forms, folded as text-views.ts squeeze() folds a text (lower
 * case, standard base64 alphabet): its hex, and the run of base64 characters that only the
 * value decides when it sits at byte offset 0, 1 or 2 (mod 3) of a base64 string: with `i`
 * bytes before it, characters ceil(8i/6) to floor(8(i+n)/6) depend on the value alone; the
 * one before (i > 0) and the one after (when (i+n) mod 3 > 0) carry some of its bits. A
 * value of MIN_SECRET_LENGTH bytes or more has runs of at least 7 characters (42 bits, about
 * 36 once case is folded).
 */
function encodedForms(bytes: Uint8Array): Needle[] {
  let hex = "";
  for (const b of bytes) hex += (HEX_DIGITS[b >> 4] ?? "") + (HEX_DIGITS[b & 15] ?? "");
  const out: Needle[] = [{ text: hex }];
  for (let i = 0; i < 3; i++) {
    const shifted = new Uint8Array(i + bytes.length);
    shifted.set(bytes, i);
    const core = b64(shifted).slice(
      Math.ceil((8 * i) / 6),
      Math.floor((8 * (i + bytes.length)) / 6),
    );
    out.push({ text: core.toLowerCase(), before: i > 0, after: (i + bytes.length) % 3 > 0 });
  }
  return out;
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

/** The first mask of a Secret value in a diff; each other value of the same key is 4 longer. */
const MASK = "++++++++";

/**
 * Copies of v1 Secrets with their values masked for a diff, as Argo CD shows them
 * (argoproj/gitops-engine pkg/diff/diff.go, HideSecretData): `stringData` is folded into `data`
 * first (base64, as the API server stores it), then per key each distinct value across all the
 * objects gets its own run of "+" ("++++++++", then "++++++++++++", …), so a reader sees that a
 * key is added, removed or changed, and never a value. The kubectl.kubernetes.io/
 * last-applied-configuration annotation (a copy of the values) is dropped. Other objects, and
 * undefined entries, come back as they are. `objects` are the same Secret's forms (desired,
 * live).
 */
export function maskSecretValues<T extends Record<string, unknown> | undefined>(
  objects: readonly T[],
): T[] {
  const secret = (o: T) => isRecord(o) && o["apiVersion"] === "v1" && o["kind"] === "Secret";
  const copies = objects.map((o) => {
    if (!secret(o)) return o;
    const copy: Record<string, unknown> = { ...(o as Record<string, unknown>) };
    const data: Record<string, unknown> = isRecord(copy["data"]) ? { ...copy["data"] } : {};
    if (isRecord(copy["stringData"])) {
      for (const [k, v] of Object.entries(copy["stringData"])) data[k] = base64Text(String(v));
    }
    delete copy["stringData"];
    if (Object.keys(data).length > 0 || "data" in copy) copy["data"] = data;
    const meta = copy["metadata"];
    if (isRecord(meta) && isRecord(meta["annotations"])) {
      const { [LAST_APPLIED]: _dropped, ...annotations } = meta["annotations"];
      copy["metadata"] = { ...meta, annotations };
    }
    return copy as T;
  });
  const keys = new Set(
    copies.flatMap((o) => (secret(o) && isRecord(o!["data"]) ? Object.keys(o!["data"]) : [])),
  );
  for (const key of keys) {
    const masks = new Map<string, string>();
    for (const o of copies) {
      const data = secret(o) ? (o as Record<string, unknown>)["data"] : undefined;
      if (!isRecord(data) || !(key in data)) continue;
      const value = JSON.stringify(data[key]);
      let mask = masks.get(value);
      if (mask === undefined) {
        mask = MASK + "++++".repeat(masks.size);
        masks.set(value, mask);
      }
      data[key] = mask;
    }
  }
  return copies;
}

const LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";

/** Standard base64 of `text`'s UTF-8 bytes, padded. */
function base64Text(text: string): string {
  const bare = b64(new TextEncoder().encode(text));
  return bare + "=".repeat((4 - (bare.length % 4)) % 4);
}
