// Many literal strings looked for at once in a text: linear in the text however many strings
// there are (a process's redactor holds the secrets of every App it has reconciled). Pure;
// used by redact.ts.

/** A string to look for, with what its match stands for. */
export interface Needle {
  text: string;
  /** For base64 forms: the characters just before / after also carry bits of the value. */
  before?: boolean;
  after?: boolean;
}

/** Fewer needles than this are looked for one by one (String.indexOf is faster then). */
const LINEAR_MAX = 24;
/** Characters of a needle's start the index is keyed by; every needle is at least this long. */
export const GRAM = 6;
/** Shortest start of a needle recognised where a text was cut ({@link Matcher.cutAt}). */
export const CUT_MIN = 4;
const BLOOM_BITS = 20;

/** Hash of the 3 units of `text` from `i`, in [0, 2^BLOOM_BITS). */
function hash3(text: string, i: number): number {
  return (
    (Math.imul(text.charCodeAt(i), 0x9e3779b1) ^
      Math.imul(text.charCodeAt(i + 1), 0x85ebca77) ^
      Math.imul(text.charCodeAt(i + 2), 0xc2b2ae3d)) >>>
    (32 - BLOOM_BITS)
  );
}

/**
 * A set of needles (each at least {@link GRAM} units long) and the two searches a redactor
 * needs: every occurrence of any of them, and any start of one (at least {@link CUT_MIN}
 * units) that runs into a place where the text was cut. Up to LINEAR_MAX needles are searched
 * with indexOf; more through an index of their first GRAM units behind a bit filter of their
 * first 3, so a text costs one hash per unit however many needles there are.
 */
export class Matcher {
  private readonly needles: Needle[];
  private readonly byGram = new Map<string, Needle[]>();
  private readonly byStart = new Map<string, Needle[]>();
  private readonly bloom = new Uint8Array(1 << (BLOOM_BITS - 3));
  /** Length of the longest needle. */
  readonly longest: number;

  constructor(needles: Iterable<Needle>) {
    const unique = new Map<string, Needle>();
    for (const n of needles) {
      if (n.text.length < GRAM) throw new Error(`needle shorter than ${GRAM}`);
      const known = unique.get(n.text);
      // The same text as a base64 form and as another: the wider span wins.
      unique.set(n.text, {
        text: n.text,
        before: (known?.before ?? false) || (n.before ?? false),
        after: (known?.after ?? false) || (n.after ?? false),
      });
    }
    this.needles = [...unique.values()];
    this.longest = Math.max(0, ...this.needles.map((n) => n.text.length));
    const add = (map: Map<string, Needle[]>, key: string, n: Needle) => {
      const list = map.get(key);
      if (list) list.push(n);
      else map.set(key, [n]);
    };
    for (const n of this.needles) {
      add(this.byStart, n.text.slice(0, CUT_MIN), n);
      if (this.needles.length <= LINEAR_MAX) continue;
      add(this.byGram, n.text.slice(0, GRAM), n);
      const h = hash3(n.text, 0);
      this.bloom[h >>> 3] = (this.bloom[h >>> 3] ?? 0) | (1 << (h & 7));
    }
  }

  get size(): number {
    return this.needles.length;
  }

  /** Calls `hit(at, needle)` for every occurrence of every needle in `text` (overlaps too). */
  find(text: string, hit: (at: number, needle: Needle) => void): void {
    if (this.needles.length === 0 || text.length < GRAM) return;
    if (this.needles.length <= LINEAR_MAX) {
      for (const n of this.needles) {
        for (let i = text.indexOf(n.text); i >= 0; i = text.indexOf(n.text, i + 1)) hit(i, n);
      }
      return;
    }
    for (let i = 0, last = text.length - GRAM; i <= last; i++) {
      const h = hash3(text, i);
      if (((this.bloom[h >>> 3] ?? 0) & (1 << (h & 7))) === 0) continue;
      const list = this.byGram.get(text.substr(i, GRAM));
      if (!list) continue;
      for (const n of list) if (text.startsWith(n.text, i)) hit(i, n);
    }
  }

  /**
   * Calls `hit(at, needle)` where `text` from `at` up to `end` is a start of a needle (at
   * least CUT_MIN units, shorter than the needle): what is left of a value where the text was
   * cut at `end` (a message truncated to a length).
   */
  cutAt(text: string, end: number, hit: (at: number, needle: Needle) => void): void {
    if (this.needles.length === 0) return;
    for (let at = Math.max(0, end - this.longest + 1); at <= end - CUT_MIN; at++) {
      const list = this.byStart.get(text.substr(at, CUT_MIN));
      if (!list) continue;
      const rest = text.slice(at, end);
      for (const n of list) if (n.text.length > rest.length && n.text.startsWith(rest)) hit(at, n);
    }
  }
}
