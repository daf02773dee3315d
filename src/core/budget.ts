// The memory ceiling of one run (PLUMB_MAX_RUN_MEMORY) and the caps derived from it, one per
// stage that holds what a repository or an engine sends: the pack as it is received, one object
// of it once inflated (isomorphic-git inflates each while indexing the pack), the files an App
// reads, an engine's output, the YAML it parses. Each factor is what that stage was measured to
// cost per byte (docs/design.md, "Size caps"), so no input takes a run past the ceiling.

const MiB = 1024 * 1024;

/** The default ceiling: 512 MiB (PLUMB_MAX_RUN_MEMORY unset). */
export const DEFAULT_MAX_RUN_MEMORY = 512 * MiB;

/** The smallest ceiling accepted: below it no App of any size could be read. */
export const MIN_MAX_RUN_MEMORY = 64 * MiB;

/** The caps of one run, bytes unless named otherwise, all derived from `maxRunMemory`. */
export interface RunBudget {
  /** The ceiling itself (PLUMB_MAX_RUN_MEMORY), bytes. */
  maxRunMemory: number;
  /** Bytes downloaded by one Git fetch (ref advertisement and pack): the ceiling / 16. */
  maxDownloadBytes: number;
  /**
   * One object of a fetched pack once inflated, checked while the pack streams in: the ceiling
   * / 8 (indexing costs about 3.5 times the object: a 200 MB blob took +710 MiB RSS).
   */
  maxPackObjectBytes: number;
  /** The files one App reads (manifests, or what a Kustomize or Helm source renders from): the ceiling × 5/128. */
  maxSourceBytes: number;
  /** An engine's output (Kustomize, Helm, a post-renderer): the ceiling × 5/128. */
  maxRenderOutputBytes: number;
  /**
   * YAML tokens (the parser's lexemes: scalars, indicators, indentation, line breaks) in one
   * document, counted while parsing, before its tree is complete: the ceiling / 1 KiB (a
   * document's tree costs about 275 bytes per token).
   */
  maxDocumentTokens: number;
  /** YAML tokens in all the documents of one render: 4 times maxDocumentTokens. */
  maxRenderTokens: number;
}

/** How each cap is derived, as a message names it ("PLUMB_MAX_RUN_MEMORY / 8"). */
export const BUDGET_RULES: Record<Exclude<keyof RunBudget, "maxRunMemory">, string> = {
  maxDownloadBytes: "PLUMB_MAX_RUN_MEMORY / 16",
  maxPackObjectBytes: "PLUMB_MAX_RUN_MEMORY / 8",
  maxSourceBytes: "PLUMB_MAX_RUN_MEMORY × 5/128",
  maxRenderOutputBytes: "PLUMB_MAX_RUN_MEMORY × 5/128",
  maxDocumentTokens: "PLUMB_MAX_RUN_MEMORY / 1 KiB",
  maxRenderTokens: "PLUMB_MAX_RUN_MEMORY / 256 bytes",
};

/**
 * The caps of a run under the ceiling `maxRunMemory` (bytes; default 512 MiB, which gives the
 * caps plumb had before the ceiling: 32 MiB downloaded, 20 MiB read and rendered).
 */
export function runBudget(maxRunMemory: number = DEFAULT_MAX_RUN_MEMORY): RunBudget {
  const m = Math.floor(maxRunMemory);
  const maxDocumentTokens = Math.floor(m / 1024);
  return {
    maxRunMemory: m,
    maxDownloadBytes: Math.floor(m / 16),
    maxPackObjectBytes: Math.floor(m / 8),
    maxSourceBytes: Math.floor((m * 5) / 128),
    maxRenderOutputBytes: Math.floor((m * 5) / 128),
    maxDocumentTokens,
    maxRenderTokens: maxDocumentTokens * 4,
  };
}

/** "the 67108864-byte cap (PLUMB_MAX_RUN_MEMORY / 8, of 536870912 bytes)": a cap as messages name it. */
export function capText(budget: RunBudget, cap: Exclude<keyof RunBudget, "maxRunMemory">): string {
  const unit = cap === "maxDocumentTokens" || cap === "maxRenderTokens" ? "-token" : "-byte";
  return `the ${budget[cap]}${unit} cap (${BUDGET_RULES[cap]}, of ${budget.maxRunMemory} bytes)`;
}

const QUANTITY = /^([0-9]+)(Ki|Mi|Gi|Ti|k|M|G|T)?$/;
const FACTORS: Record<string, number> = {
  "": 1,
  Ki: 1024,
  Mi: MiB,
  Gi: 1024 * MiB,
  Ti: 1024 * 1024 * MiB,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
};

/**
 * A byte count written as a Kubernetes quantity without a fraction: digits, then optionally a
 * binary (Ki, Mi, Gi, Ti) or decimal (k, M, G, T) suffix, as in a container's memory limit
 * ("512Mi", "1Gi", "600M", "536870912").
 * @returns the bytes, or undefined when `text` is not such a quantity
 */
export function parseByteQuantity(text: string): number | undefined {
  const m = QUANTITY.exec(text.trim());
  if (!m) return undefined;
  const bytes = Number(m[1]) * (FACTORS[m[2] ?? ""] as number);
  return Number.isSafeInteger(bytes) ? bytes : undefined;
}
