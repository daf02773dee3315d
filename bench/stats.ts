// Percentiles and a plain-text table.

/** Nearest-rank percentile (p in 0..100) of `xs`; NaN when empty. */
export function percentile(xs: readonly number[], p: number): number {
  if (xs.length === 0) return Number.NaN;
  const sorted = [...xs].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

export interface Summary {
  n: number;
  p50: number;
  p95: number;
  min: number;
  max: number;
}

export function summarize(xs: readonly number[]): Summary {
  return {
    n: xs.length,
    p50: round(percentile(xs, 50)),
    p95: round(percentile(xs, 95)),
    min: round(xs.length ? Math.min(...xs) : Number.NaN),
    max: round(xs.length ? Math.max(...xs) : Number.NaN),
  };
}

export const round = (x: number, digits = 2) => {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
};

/** Milliseconds, readably. */
export function ms(x: number): string {
  if (!Number.isFinite(x)) return "n/a";
  if (x >= 10_000) return `${(x / 1000).toFixed(1)} s`;
  if (x >= 1000) return `${(x / 1000).toFixed(2)} s`;
  if (x >= 100) return `${x.toFixed(0)} ms`;
  return `${x.toFixed(1)} ms`;
}

export function bytes(x: number): string {
  if (!Number.isFinite(x)) return "n/a";
  if (x >= 1024 * 1024) return `${(x / 1024 / 1024).toFixed(2)} MiB`;
  if (x >= 1024) return `${(x / 1024).toFixed(1)} KiB`;
  return `${x} B`;
}

/** A table with a header row; numbers right-aligned. */
export function table(
  header: readonly string[],
  rows: ReadonlyArray<ReadonlyArray<string | number>>,
): string {
  const cells = [header, ...rows].map((r) => r.map((c) => String(c)));
  const widths = header.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? "").length)));
  const line = (r: string[], isHeader: boolean) =>
    r
      .map((c, i) => {
        const right = !isHeader && typeof rows[0]?.[i] === "number";
        return right ? c.padStart(widths[i]!) : c.padEnd(widths[i]!);
      })
      .join("  ")
      .trimEnd();
  return [
    line(cells[0]!, true),
    widths.map((w) => "-".repeat(w)).join("  "),
    ...cells.slice(1).map((r) => line(r, false)),
  ].join("\n");
}
