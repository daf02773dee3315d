// Name patterns of policies: a name, or a pattern where `*` stands for any run of characters
// (also none). The shape of Argo CD's AppProject globs for namespaces and repositories, without
// character classes or braces: policy authors write "team-*", "https://github.com/org/*", "*".

/**
 * Whether `value` matches `pattern` (`*`: any run of characters, also none and also "/";
 * everything else literal, case-sensitive).
 * @example matchesPattern("team-*", "team-a") === true; matchesPattern("dev", "dev2") === false
 */
export function matchesPattern(pattern: string, value: string): boolean {
  const parts = pattern.split("*");
  if (parts.length === 1) return pattern === value;
  const first = parts[0] ?? "";
  const last = parts[parts.length - 1] ?? "";
  if (value.length < first.length + last.length) return false;
  if (!value.startsWith(first) || !value.endsWith(last)) return false;
  // The middle parts in order, each as early as it fits (greedy is exact for `*` only).
  let at = first.length;
  const end = value.length - last.length;
  for (const part of parts.slice(1, -1)) {
    const found = value.indexOf(part, at);
    if (found < 0 || found + part.length > end) return false;
    at = found + part.length;
  }
  return true;
}

/** Whether any of `patterns` matches `value`. */
export function matchesAny(patterns: readonly string[], value: string): boolean {
  return patterns.some((p) => matchesPattern(p, value));
}
