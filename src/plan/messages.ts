// Messages copied from live objects, made stable: controllers print sets in whatever
// order their maps give (the HPA controller's AmbiguousSelector message lists its HPAs as
// "[webapp/frontend webapp/backend]" or "[webapp/backend webapp/frontend]" from one read to the
// next), so the same state would write a different status. Pure.

/** A Go-printed list (`%v` of a slice): "[a b c]", with no brackets inside. */
const BRACKET_LIST = /\[([^[\]]*)\]/g;
/** Where a message separates the items of a list: "; ", ", ", " and ". */
const CLAUSES = /;\s+|,\s+|\s+and\s+/;

/**
 * The message with the items of each Go-printed list in brackets ("[b a]": two or more,
 * separated by spaces) sorted, so a set printed in map order reads the same every time.
 * Nothing else changes.
 */
export function normalizeMessage(text: string): string {
  return text.replace(BRACKET_LIST, (whole, inner: string) => {
    const items = inner.split(/\s+/).filter((x) => x !== "");
    if (items.length < 2) return whole;
    return `[${items.sort(byCodePoint).join(" ")}]`;
  });
}

/**
 * Whether two messages say the same thing in another order or spacing: equal once normalised
 * with runs of whitespace as one space, or made of the same clauses ("a; b" and "b; a", "x, y
 * and z" and "z, x and y"). Words do not move between clauses, so "Pod a ready; Pod b not
 * ready" and "Pod b ready; Pod a not ready" differ.
 */
export function sameMessage(a: string, b: string): boolean {
  if (a === b) return true;
  const flat = (t: string) => normalizeMessage(t.replace(/\s+/g, " ").trim());
  const x = flat(a);
  const y = flat(b);
  if (x === y) return true;
  const clauses = (t: string) => t.split(CLAUSES).sort(byCodePoint).join("\u0000");
  return clauses(x) === clauses(y);
}

/**
 * The message to record: the previous one when `next` says the same thing (sameMessage), so
 * an unchanged state writes nothing; else `next`, normalised.
 */
export function steadyMessage(prev: string | undefined, next: string): string {
  if (prev !== undefined && sameMessage(prev, next)) return prev;
  return normalizeMessage(next);
}

function byCodePoint(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
