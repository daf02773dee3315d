// Normalised views of a text, for finding a value whatever encoding a message gave it: each
// view is the text with escapes undone (JSON/Go backslash escapes, percent-encoding, HTML
// entities, in any order and nesting), or folded (case, whitespace, the base64url alphabet),
// with every character mapped back to where it came from. Pure; used by redact.ts.

/**
 * A text and, per UTF-16 unit, the offsets in the original where what it came from starts and
 * ends (a decoded "A" from "%41" starts at the "%" and ends after the "1"). Without them the
 * view is the original text itself (unit i is [i, i+1)).
 */
export interface TextView {
  text: string;
  start?: number[];
  end?: number[];
}

/** Where in the original units `from` to `to` (exclusive, `to` > `from`) of `view` came from. */
export function spanOf(view: TextView, from: number, to: number): [number, number] {
  if (!view.start || !view.end) return [from, to];
  return [view.start[from] ?? 0, view.end[to - 1] ?? 0];
}

function startOf(view: TextView, i: number): number {
  return view.start ? (view.start[i] ?? 0) : i;
}

function endOf(view: TextView, i: number): number {
  return view.end ? (view.end[i] ?? 0) : i + 1;
}

/** One decoding step at `i`: the decoded text and how many units of the input it consumed. */
type Step = (s: string, i: number) => [decoded: string, consumed: number] | undefined;

/** Applies `step` along the view; characters no step decodes are copied. */
function decode(view: TextView, step: Step): TextView {
  const { text } = view;
  let out = "";
  const start: number[] = [];
  const end: number[] = [];
  for (let i = 0; i < text.length; ) {
    const hit = step(text, i);
    const [decoded, consumed] = hit ?? [text[i] ?? "", 1];
    const from = startOf(view, i);
    const to = endOf(view, i + consumed - 1);
    for (let k = 0; k < decoded.length; k++) {
      start.push(from);
      end.push(to);
    }
    out += decoded;
    i += consumed;
  }
  return { text: out, start, end };
}

const HEX = /^[0-9a-fA-F]+$/;
const LETTERS: Readonly<Record<string, string>> = {
  '"': '"',
  "\\": "\\",
  "/": "/",
  "'": "'",
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
  a: "\u0007",
  v: "\u000b",
};

/** Bytes of consecutive `<prefix>HH` escapes from `i` (e.g. `%c3%a9`, `\xc3\xa9`). */
function byteRun(s: string, i: number, prefix: string): { bytes: number[]; ends: number[] } {
  const bytes: number[] = [];
  const ends: number[] = [];
  let j = i;
  while (s.startsWith(prefix, j)) {
    const hex = s.slice(j + prefix.length, j + prefix.length + 2);
    if (hex.length !== 2 || !HEX.test(hex)) break;
    bytes.push(Number.parseInt(hex, 16));
    j += prefix.length + 2;
    ends.push(j);
  }
  return { bytes, ends };
}

/** Length of the UTF-8 sequence at the start of `bytes`, or 0 when it is not valid UTF-8. */
function utf8Length(bytes: readonly number[]): number {
  const b = bytes[0] ?? 0;
  const n =
    b < 0x80
      ? 1
      : b >= 0xc2 && b < 0xe0
        ? 2
        : b >= 0xe0 && b < 0xf0
          ? 3
          : b >= 0xf0 && b < 0xf5
            ? 4
            : 0;
  if (n === 0 || bytes.length < n) return 0;
  for (let k = 1; k < n; k++) if (((bytes[k] ?? 0) & 0xc0) !== 0x80) return 0;
  return n;
}

/**
 * Decodes one character from a run of byte escapes: a whole UTF-8 sequence when the bytes
 * form one, else the first byte as U+00XX.
 */
function byteEscape(s: string, i: number, prefix: string): [string, number] | undefined {
  const { bytes, ends } = byteRun(s, i, prefix);
  if (bytes.length === 0) return undefined;
  const n = utf8Length(bytes);
  if (n === 0) return [String.fromCharCode(bytes[0] ?? 0), (ends[0] ?? i) - i];
  const text = new TextDecoder().decode(new Uint8Array(bytes.slice(0, n)));
  return [text, (ends[n - 1] ?? i) - i];
}

/**
 * One level of JSON and Go (`%q`) string escapes undone: `\"`, `\\`, `\/`, `\n` and the other
 * one-letter escapes, `\uXXXX` (surrogate pairs too), `\UXXXXXXXX`, and `\xHH` runs as UTF-8.
 */
export function unescapeBackslashes(view: TextView): TextView {
  return decode(view, (s, i) => {
    if (s[i] !== "\\") return undefined;
    const next = s[i + 1] ?? "";
    const letter = LETTERS[next];
    if (letter !== undefined) return [letter, 2];
    if (next === "u" && HEX.test(s.slice(i + 2, i + 6)) && s.length >= i + 6) {
      return [String.fromCharCode(Number.parseInt(s.slice(i + 2, i + 6), 16)), 6];
    }
    if (next === "U" && HEX.test(s.slice(i + 2, i + 10)) && s.length >= i + 10) {
      const cp = Number.parseInt(s.slice(i + 2, i + 10), 16);
      return cp <= 0x10ffff ? [String.fromCodePoint(cp), 10] : undefined;
    }
    if (next === "x") return byteEscape(s, i, "\\x");
    return undefined;
  });
}

/** Percent-encoding undone (`%XX` runs as UTF-8); with `plusIsSpace`, "+" is a space (forms). */
export function percentDecode(view: TextView, plusIsSpace: boolean): TextView {
  return decode(view, (s, i) => {
    if (plusIsSpace && s[i] === "+") return [" ", 1];
    return s[i] === "%" ? byteEscape(s, i, "%") : undefined;
  });
}

const ENTITIES: Readonly<Record<string, string>> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
};

/** HTML/XML character references undone: `&amp;`, `&lt;`, `&#39;`, `&#x27;` and the like. */
export function decodeEntities(view: TextView): TextView {
  return decode(view, (s, i) => {
    if (s[i] !== "&") return undefined;
    const m = /^&(#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[a-z]{2,4});/.exec(s.slice(i, i + 12));
    if (!m) return undefined;
    const name = m[1] ?? "";
    if (!name.startsWith("#")) {
      const ch = ENTITIES[name];
      return ch === undefined ? undefined : [ch, m[0].length];
    }
    const cp = /^#[xX]/.test(name)
      ? Number.parseInt(name.slice(2), 16)
      : Number.parseInt(name.slice(1), 10);
    return cp <= 0x10ffff ? [String.fromCodePoint(cp), m[0].length] : undefined;
  });
}

/**
 * The view in lower case (Unicode's default case mapping, per code point): the form a value is
 * compared in, so "TOKEN", "Token" and "token" are one. When no character changes length (the
 * common case) the offsets are the view's own.
 */
export function foldCase(view: TextView): TextView {
  const lower = view.text.toLowerCase();
  if (lower === view.text) return view;
  if (lower.length === view.text.length) return { ...view, text: lower };
  return decode(view, (s, i) => {
    const cp = s.codePointAt(i) ?? 0;
    const ch = String.fromCodePoint(cp);
    return [foldText(ch), ch.length];
  });
}

/** `text` folded as {@link foldCase} folds a view (per code point, so both agree). */
export function foldText(text: string): string {
  const lower = text.toLowerCase();
  if (lower.length === text.length) return lower;
  let out = "";
  for (const ch of text) out += ch.toLowerCase();
  return out;
}

/** Separators a binary-to-text encoding may be broken up with: whitespace and ":" (hex dumps). */
const SEPARATORS = /[\s:]/;
const SQUEEZABLE = /[\s:_-]/;

/**
 * The view as binary-to-text encodings are compared in: whitespace and ":" dropped (base64
 * wrapped at 64 or 76 columns, split into groups, hex written "de:ad:be:ef"), and the
 * base64url alphabet ("-", "_") spelt in the standard one ("+", "/"). Meant for a view
 * already folded to lower case; only base64 and hex forms are looked for in it.
 */
export function squeeze(view: TextView): TextView {
  if (!SQUEEZABLE.test(view.text)) return view;
  return decode(view, (s, i) => {
    const ch = s[i] ?? "";
    if (SEPARATORS.test(ch)) return ["", 1];
    if (ch === "-") return ["+", 1];
    if (ch === "_") return ["/", 1];
    return undefined;
  });
}

/** Shortest run of hex digits or base64 characters decoded as binary-to-text (12 bytes). */
const MIN_RUN = 16;
/** Share of printable bytes for a decoded run to count as text (a hash or a key does not). */
const PRINTABLE = 0.9;

const HEX_RUN = /[0-9a-fA-F]{16,}/g;
const BASE64_RUN = /[A-Za-z0-9+/_-]{16,}={0,2}/g;

/** Maximal runs `pattern` (global) finds, as [index, length]. */
function* runs(text: string, pattern: RegExp): Generator<[number, number]> {
  pattern.lastIndex = 0;
  for (let m = pattern.exec(text); m; m = pattern.exec(text)) yield [m.index, m[0].length];
}

/**
 * Replaces each run `pattern` finds whose bytes (`bytesOf`, undefined when they are not text)
 * decode to text by that text: UTF-8 sequences as characters, other bytes as U+00XX. `unitsOf(b0, b1)` says which
 * units of the run bytes b0..b1 came from. Runs that do not decode, or decode to binary, stay.
 */
function decodeRuns(
  view: TextView,
  pattern: RegExp,
  bytesOf: (run: string) => Uint8Array | undefined,
  unitsOf: (b0: number, b1: number, length: number) => [number, number],
): TextView {
  const { text } = view;
  let out = "";
  const start: number[] = [];
  const end: number[] = [];
  let copied = 0;
  const copy = (to: number) => {
    for (let i = copied; i < to; i++) {
      start.push(startOf(view, i));
      end.push(endOf(view, i));
    }
    out += text.slice(copied, to);
    copied = to;
  };
  for (const [index, length] of runs(text, pattern)) {
    const run = text.slice(index, index + length);
    const bytes = bytesOf(run);
    if (!bytes) continue;
    copy(index);
    for (let b = 0; b < bytes.length; ) {
      const seq = [...bytes.subarray(b, b + 4)];
      const n = utf8Length(seq) || 1;
      const ch =
        n === 1
          ? String.fromCharCode(bytes[b] ?? 0)
          : new TextDecoder().decode(bytes.subarray(b, b + n));
      const [u0, u1] = unitsOf(b, b + n, length);
      for (let k = 0; k < ch.length; k++) {
        start.push(startOf(view, index + u0));
        end.push(endOf(view, index + Math.max(u0, u1 - 1)));
      }
      out += ch;
      b += n;
    }
    copied = index + length;
  }
  if (copied === 0) return view;
  copy(text.length);
  return { text: out, start, end };
}

/**
 * Reads bytes one at a time from `next` (undefined at the end) while they look like text
 * (printable ASCII, tabs and newlines, well-formed UTF-8): the bytes, or undefined as soon as
 * more than 1 in 10 of them (counting from the first 10) is not — a hash or a key gives up
 * within a few bytes.
 */
function textBytes(count: number, next: (i: number) => number | undefined): Uint8Array | undefined {
  const out = new Uint8Array(count);
  let bad = 0;
  let pending = 0;
  let n = 0;
  for (; n < count; n++) {
    const b = next(n);
    if (b === undefined) break;
    let ok: boolean;
    if (pending > 0) {
      ok = (b & 0xc0) === 0x80;
      pending = ok ? pending - 1 : 0;
    } else if (b < 0x80) {
      ok = (b >= 0x20 && b < 0x7f) || b === 0x0a || b === 0x09 || b === 0x0d;
    } else {
      pending =
        b >= 0xc2 && b < 0xe0 ? 1 : b >= 0xe0 && b < 0xf0 ? 2 : b >= 0xf0 && b < 0xf5 ? 3 : 0;
      ok = pending > 0;
    }
    if (!ok) bad++;
    if (bad > Math.max(1, Math.floor((n + 1) * (1 - PRINTABLE)))) return undefined;
    out[n] = b;
  }
  return n > 0 ? out.subarray(0, n) : undefined;
}

const HEX_VALUE = new Int8Array(128).fill(-1);
for (let i = 0; i < 16; i++) {
  HEX_VALUE["0123456789abcdef".charCodeAt(i)] = i;
  HEX_VALUE["0123456789ABCDEF".charCodeAt(i)] = i;
}
const BASE64_VALUE = new Int8Array(128).fill(-1);
for (let i = 0; i < 64; i++) {
  BASE64_VALUE["ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".charCodeAt(i)] =
    i;
}
BASE64_VALUE["-".charCodeAt(0)] = 62;
BASE64_VALUE["_".charCodeAt(0)] = 63;

/** Runs of 16 or more hex digits that spell text, decoded (a value written in hex). */
export function decodeHexRuns(view: TextView): TextView {
  return decodeRuns(
    view,
    HEX_RUN,
    (run) =>
      textBytes(Math.floor(run.length / 2), (i) => {
        const hi = HEX_VALUE[run.charCodeAt(2 * i)] ?? -1;
        const lo = HEX_VALUE[run.charCodeAt(2 * i + 1)] ?? -1;
        return hi < 0 || lo < 0 ? undefined : (hi << 4) | lo;
      }),
    (b0, b1) => [2 * b0, 2 * b1],
  );
}

/** Runs of 16 or more base64 (or base64url) characters that spell text, decoded. */
export function decodeBase64Runs(view: TextView): TextView {
  return decodeRuns(
    view,
    BASE64_RUN,
    (run) => {
      const chars = run.replace(/=+$/, "");
      // One string is in one alphabet: "+" or "/" with "-" or "_" is not base64.
      if (/[+/]/.test(chars) && /[-_]/.test(chars)) return undefined;
      const sextet = (k: number) => BASE64_VALUE[chars.charCodeAt(k)] ?? 0;
      return textBytes(Math.floor((chars.length * 6) / 8), (i) => {
        // Byte i spans bits 8i..8i+7: sextets floor(8i/6) and the next.
        const bit = 8 * i;
        const k = Math.floor(bit / 6);
        const pair = (sextet(k) << 6) | sextet(k + 1);
        return (pair >> (12 - (bit % 6) - 8)) & 0xff;
      });
    },
    (b0, b1, length) => [Math.floor((b0 * 4) / 3), Math.min(length, Math.ceil((b1 * 4) / 3))],
  );
}

/** An encoding a view may undo, and whether the text may have anything it would change. */
const DECODERS: ReadonlyArray<{
  applies: (text: string) => boolean;
  run: (v: TextView) => TextView;
}> = [
  { applies: (t) => t.includes("\\"), run: unescapeBackslashes },
  { applies: (t) => t.includes("%"), run: (v) => percentDecode(v, false) },
  { applies: (t) => t.includes("+"), run: (v) => percentDecode(v, true) },
  { applies: (t) => t.includes("&"), run: decodeEntities },
  { applies: (t) => t.length >= MIN_RUN && /[0-9a-fA-F]{16}/.test(t), run: decodeHexRuns },
  { applies: (t) => t.length >= MIN_RUN && /[A-Za-z0-9+/_-]{16}/.test(t), run: decodeBase64Runs },
];

/**
 * How many escapes deep a value is looked for (JSON in JSON in JSON in JSON, then
 * percent-encoded twice: 6), and how many views of one text at most: hostile text full of
 * backslashes, "%", "+" and "&" costs a bounded number of linear passes.
 */
export const MAX_DEPTH = 6;
export const MAX_VIEWS = 48;

/**
 * The views a value is looked for in: the text itself and, breadth first (the shallowest
 * combinations first), the text with backslash escapes, percent-encoding (with and without
 * "+" as a space), HTML entities, and hex and base64 runs that spell text undone, each of
 * them again on every view, up to
 * {@link MAX_DEPTH} levels and {@link MAX_VIEWS} views. Views equal to one already listed are
 * left out.
 */
export function decodedViews(text: string): TextView[] {
  const views: TextView[] = [{ text }];
  const seen = new Set<string>([text]);
  let level: TextView[] = views.slice();
  for (let depth = 0; depth < MAX_DEPTH && level.length > 0; depth++) {
    const next: TextView[] = [];
    for (const view of level) {
      for (const d of DECODERS) {
        if (views.length >= MAX_VIEWS) return views;
        if (!d.applies(view.text)) continue;
        const out = d.run(view);
        if (seen.has(out.text)) continue;
        seen.add(out.text);
        views.push(out);
        next.push(out);
      }
    }
    level = next;
  }
  return views;
}
