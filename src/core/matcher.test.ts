import { describe, expect, it } from "vitest";
import { CUT_MIN, GRAM, Matcher, type Needle } from "./matcher.ts";

/** Every occurrence, found the obvious way: [at, needle text]. */
function naive(text: string, needles: readonly Needle[]): string[] {
  const out = new Set<string>();
  for (const n of needles) {
    for (let i = text.indexOf(n.text); i >= 0; i = text.indexOf(n.text, i + 1))
      out.add(`${i}:${n.text}`);
  }
  return [...out].sort();
}

function found(m: Matcher, text: string): string[] {
  const out: string[] = [];
  m.find(text, (at, n) => out.push(`${at}:${n.text}`));
  return out.sort();
}

describe("Matcher", () => {
  let seed = 7;
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  const word = (length: number) =>
    Array.from({ length }, () => "abcab-/+é🔑"[rand(11)] ?? "a").join("");

  it.each([3, 24, 25, 400])("finds what indexOf finds, overlaps too, with %i needles", (count) => {
    const needles = Array.from({ length: count }, () => ({ text: word(GRAM + rand(10)) }));
    for (let k = 0; k < 40; k++) {
      const text = Array.from({ length: 6 }, () =>
        rand(3) === 0 ? (needles[rand(needles.length)]?.text ?? "") : word(rand(30)),
      ).join(word(rand(3)));
      expect(found(new Matcher(needles), text)).toEqual(naive(text, needles));
    }
  });

  it("finds a start of a needle cut at a position, from CUT_MIN units on", () => {
    const m = new Matcher([{ text: "secret-value-1" }, { text: "another-one" }]);
    const cut = (text: string, end: number) => {
      const out: number[] = [];
      m.cutAt(text, end, (at) => out.push(at));
      return out;
    };
    expect(cut("x secret-v", 10)).toEqual([2]);
    expect(cut("x secr… y", 6)).toEqual([2]);
    expect(cut("x sec", 5)).toEqual([]);
    expect(CUT_MIN).toBe(4);
    // A whole needle is a match, not a cut one.
    expect(cut("x secret-value-1", 16)).toEqual([]);
  });

  it("refuses a needle shorter than GRAM", () => {
    expect(() => new Matcher([{ text: "abc" }])).toThrow(/shorter than 6/);
  });
});
