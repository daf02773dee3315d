// Tag policy: what an image `tag` means when it is a semver range, and which tag of a
// repository it picks (Flux image-reflector-controller's ImagePolicy `semver` policy).
import semver from "semver";

/** Characters a semver range may have that an OCI tag ([a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}) cannot. */
const RANGE_ONLY = /[~^<>=*| ,]/;

/**
 * True when `tag` is a semver range rather than a tag: it holds a character no OCI tag may
 * have (`~ ^ < > = * |`, a space or a comma), so "~1.4", ">=2 <3" and "1.*" are ranges while
 * "1.4", "1.x" and "latest" are tags. The rule makes the two readings never overlap.
 */
export function isTagRange(tag: string): boolean {
  return RANGE_ONLY.test(tag);
}

/**
 * The node-semver range for a tag range, or undefined when it is not a valid range. Commas are
 * read as "and" (Masterminds/semver, which Flux uses, accepts ">=1.0, <2.0").
 */
export function normalizeRange(range: string): string | undefined {
  const spaced = range.replace(/,/g, " ").trim();
  if (spaced === "") return undefined;
  return semver.validRange(spaced) ?? undefined;
}

/**
 * True when the range as written names a prerelease (">=1.0.0-0", "~2.0.0-rc.1"): a "-" right
 * after a version's digit. (node-semver's desugared form is no guide: "<3" becomes "<3.0.0-0".)
 * A hyphen range ("1.0.0 - 2.0.0") has spaces around its "-".
 */
function wantsPrereleases(range: string): boolean {
  return /[0-9]-[0-9A-Za-z]/.test(range);
}

/**
 * Picks the tag of `tags` with the highest version satisfying `range` (Flux ImagePolicy
 * `semver`): a tag counts when it is a strict semver version X.Y.Z[-pre], optionally with a
 * leading "v" (Flux's version.ParseVersion), so "1.4", "1.4.0.1" and "latest" never match.
 * Prereleases count only when the range itself names one (">=1.5.0-0"), as in Flux; then every
 * prerelease in the range counts. Equal versions ("1.4.2" and "v1.4.2") pick the tag that sorts
 * first. Pure.
 * @returns the chosen tag, or undefined when none matches (or the range is invalid)
 */
export function pickTag(range: string, tags: readonly string[]): string | undefined {
  const normalized = normalizeRange(range);
  if (normalized === undefined) return undefined;
  const includePrerelease = wantsPrereleases(range);
  let best: { tag: string; version: semver.SemVer } | undefined;
  for (const tag of tags) {
    const version = semver.parse(tag);
    if (version === null) continue;
    if (version.build.length > 0) continue; // "+" cannot be in a tag; never from a registry
    if (!semver.satisfies(version, normalized, { includePrerelease })) continue;
    const order = best ? semver.compare(version, best.version) : 1;
    if (order > 0 || (order === 0 && best && tag < best.tag)) best = { tag, version };
  }
  return best?.tag;
}
