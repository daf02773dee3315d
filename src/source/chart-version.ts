// Chart versions: picking the highest version a constraint allows, and the revision string that
// names a chart version and its digest.
import semver from "semver";
import { SourceError } from "../core/errors.ts";

const DIGEST = /^sha256:[0-9a-f]{64}$/;

/**
 * The version `constraint` picks from `available` (original strings kept): an exact version
 * ("1.4.2", also matching "v1.4.2") picks that version; otherwise `constraint` is a semver
 * range ("~1.4", "^2", ">=2 <3", ">=2, <3", "1.x", "*") and the highest satisfying version is
 * picked. Pre-releases match only a range that names one (npm semver's rule, as Helm's
 * Masterminds/semver). Unparseable versions in `available` are ignored.
 * Throws SourceError (not transient) for an invalid constraint; undefined when nothing matches.
 */
export function pickVersion(available: readonly string[], constraint: string): string | undefined {
  const parsed = available
    .map((raw) => ({ raw, v: semver.parse(raw, { loose: true }) }))
    .filter((x): x is { raw: string; v: semver.SemVer } => x.v !== null);
  const exact = semver.parse(constraint.trim(), { loose: true });
  if (exact) return parsed.find((x) => semver.eq(x.v, exact))?.raw;
  let range: semver.Range;
  try {
    range = new semver.Range(constraint.replace(/,/g, " "), { loose: true });
  } catch {
    throw new SourceError(
      `invalid chart version "${constraint}": give a version (1.4.2) or a semver range (~1.4, >=2 <3)`,
      false,
    );
  }
  let best: { raw: string; v: semver.SemVer } | undefined;
  for (const x of parsed) {
    if (range.test(x.v) && (!best || semver.gt(x.v, best.v))) best = x;
  }
  return best?.raw;
}

/** A chart revision: "<version>@sha256:<64 hex>" (status.revision of a chart source). */
export function chartRevision(version: string, digest: string): string {
  return `${version}@${digest}`;
}

/** Splits a chart revision; throws SourceError (not transient) for anything else. */
export function parseChartRevision(revision: string): { version: string; digest: string } {
  const at = revision.lastIndexOf("@");
  const version = revision.slice(0, at);
  const digest = revision.slice(at + 1);
  if (at <= 0 || !DIGEST.test(digest)) {
    throw new SourceError(`"${revision}" is not a chart revision (<version>@sha256:<hex>)`, false);
  }
  return { version, digest };
}
