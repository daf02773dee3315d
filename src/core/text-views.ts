// Decoded views of a text, for finding a value whatever escaping a message gave it: each view
// is the text with one kind of escape undone (JSON/Go backslash escapes, percent-encoding,
// HTML entities), with every character mapped back to where it came from. Pure; used by
// redact.ts.

/** A text and, per UTF-16 unit, its start offset in the original (plus the end, at `length`). */
export interface TextView {
  text: string;
  start: number[];
}

/** The original text, unchanged. */
export function identityView(text: string): TextView {
  return { text, start: Array.from({ length: text.length + 1 }, (_, i) => i) };
}

/** One decoding step at `i`: the decoded text and how many units of the input it consumed. */
type Step = (s: string, i: number) => [decoded: string, consumed: number] | undefined;

/** Applies `step` along the view; characters no step decodes are copied. */
function decode(view: TextView, step: Step): TextView {
  const { text, start } = view;
  let out = "";
  const outStart: number[] = [];
  for (let i = 0; i < text.length; ) {
    const hit = step(text, i);
    const [decoded, consumed] = hit ?? [text[i] ?? "", 1];
    for (let k = 0; k < decoded.length; k++) outStart.push(start[i] ?? 0);
    out += decoded;
    i += consumed;
  }
  outStart.push(start[text.length] ?? 0);
  return { text: out, start: outStart };
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

/** How many times backslash escapes are undone: JSON in JSON in JSON in JSON. */
const ESCAPE_LEVELS = 4;

/**
 * The views a value is looked for in: the text itself, with backslash escapes undone up to
 * four times, and each of those with percent-encoding (with and without "+" as a space) and
 * HTML entities undone. Views equal to one already listed are left out.
 */
export function decodedViews(text: string): TextView[] {
  const views: TextView[] = [];
  const seen = new Set<string>();
  const push = (v: TextView) => {
    if (seen.has(v.text)) return;
    seen.add(v.text);
    views.push(v);
  };
  let base = identityView(text);
  for (let level = 0; level <= ESCAPE_LEVELS; level++) {
    push(base);
    if (base.text.includes("%")) {
      push(percentDecode(base, false));
      push(percentDecode(base, true));
    } else if (base.text.includes("+")) {
      push(percentDecode(base, true));
    }
    if (base.text.includes("&")) push(decodeEntities(base));
    if (!base.text.includes("\\")) break;
    base = unescapeBackslashes(base);
  }
  return views;
}
