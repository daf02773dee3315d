// Go-style durations ("1h30m", "45s", "500ms"), the format of spec.interval.

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/**
 * Parses a Go-style duration to milliseconds.
 * @throws Error when the string is not a sequence of <number><unit> with unit ms, s, m or h.
 */
export function parseDuration(text: string): number {
  const re = /([0-9]+(?:\.[0-9]+)?)(ms|s|m|h)/gy;
  let total = 0;
  let consumed = 0;
  for (const m of text.matchAll(re)) {
    total += Number(m[1]) * (UNIT_MS[m[2]!] ?? 0);
    consumed += m[0].length;
  }
  if (text.length === 0 || consumed !== text.length) throw new Error(`invalid duration "${text}"`);
  return total;
}
