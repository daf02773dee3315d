// Revisions as people write them: the short form plumb shows (Slack, kubectl get,
// the web page) and the prefixes it accepts back wherever a revision is asked for.

/** A commit SHA (SHA-1 or SHA-256 object format). */
const COMMIT = /^[0-9a-f]{40}([0-9a-f]{24})?$/;
/** An OCI digest, as an image App's revision. */
const DIGEST = /^sha256:([0-9a-f]{64})$/;
/** What a person may type: 7 or more hex characters, optionally after "sha256:". */
const PREFIX = /^(sha256:)?([0-9a-f]{7,64})$/;
/** Hex characters in a short form (git's default abbreviation). */
export const SHORT_HEX = 7;

/**
 * The short form of a revision: a commit SHA's first 7 characters (git's abbreviation, what
 * Slack shows); a digest as "sha256:" and its first 7 hex characters; an app source's pins
 * ("registry/org/web:1.4@sha256:…,…") as "web:1.4@" and 7 hex characters each, comma-separated.
 * Anything else unchanged. Every short form is accepted back by {@link matchRevision}.
 */
export function shortRevision(revision: string): string {
  if (COMMIT.test(revision)) return revision.slice(0, SHORT_HEX);
  const digest = DIGEST.exec(revision);
  if (digest) return `sha256:${digest[1]!.slice(0, SHORT_HEX)}`;
  if (revision.includes("@sha256:")) {
    return revision
      .split(",")
      .map((pin) => {
        const at = pin.lastIndexOf("@sha256:");
        if (at === -1) return pin;
        const image = pin.slice(0, at);
        const name = image.slice(image.lastIndexOf("/") + 1);
        return `${name}@${pin.slice(at + 8, at + 8 + SHORT_HEX)}`;
      })
      .join(",");
  }
  return revision;
}

/** The hex a prefix is matched against: a commit SHA, or a digest's hex; none for others. */
function hexOf(revision: string): string | undefined {
  if (COMMIT.test(revision)) return revision;
  return DIGEST.exec(revision)?.[1];
}

/**
 * Which of `candidates` `given` names: itself, its short form ({@link shortRevision}), or an
 * unambiguous prefix of 7 or more hex characters of a commit SHA or a digest (with or without
 * "sha256:"; case-insensitive, as git accepts). Duplicates among the candidates count once.
 * @param where what the candidates are, for the message ("status.previousRevisions")
 * @returns `{revision}` for exactly one match; `{error}` naming the candidates' short forms when
 *   none matches, or the matches when several do (give more characters).
 */
export function matchRevision(
  given: string,
  candidates: readonly string[],
  where = "the known revisions",
): { revision: string } | { error: string; matches: string[] } {
  const unique = [...new Set(candidates)];
  if (unique.includes(given)) return { revision: given };
  const typed = given.trim().toLowerCase();
  const prefix = PREFIX.exec(typed)?.[2];
  const matches = unique.filter(
    (c) =>
      shortRevision(c) === given ||
      c.toLowerCase() === typed ||
      (prefix !== undefined && hexOf(c)?.startsWith(prefix) === true),
  );
  if (matches.length === 1) return { revision: matches[0]! };
  if (matches.length > 1) {
    return {
      error: `revision ${JSON.stringify(given)} is ambiguous: it matches ${distinct(matches).join(", ")}; give more characters`,
      matches,
    };
  }
  const short = prefixHint(given);
  return {
    error: `revision ${JSON.stringify(given)} is not in ${where} (${unique.length === 0 ? "none" : unique.map(shortRevision).join(", ")})${short}`,
    matches: [],
  };
}

/** The matches at the shortest length (7 or more) at which their hex prefixes differ. */
function distinct(matches: readonly string[]): string[] {
  const hex = matches.map((m) => hexOf(m) ?? m);
  for (let n = SHORT_HEX; n < 64; n++) {
    if (new Set(hex.map((h) => h.slice(0, n))).size === hex.length) {
      return hex.map((h) => h.slice(0, n));
    }
  }
  return [...matches];
}

/**
 * " (a prefix needs at least 7 hex characters)" when `given` is a shorter hex prefix (which
 * matchRevision never accepts), else "": for messages refusing a revision.
 */
export function prefixHint(given: string): string {
  return /^[0-9a-f]{1,6}$/.test(given.trim().toLowerCase())
    ? ` (a prefix needs at least ${SHORT_HEX} hex characters)`
    : "";
}
