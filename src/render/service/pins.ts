// Image pins of an app source: which images it names, what each resolved to, and the revision
// string that carries them (so a Rollback or an Approve renders exactly the pinned digests).
import { type AppSource, isTagRange, pickTag } from "../../app/index.ts";

/** An image as the spec names it: repository and tag (or semver range), and its digest if given. */
export interface ImageRequest {
  repository: string;
  tag: string;
  /** Given in the spec ("sha256:<64 hex>"): the image is pinned as it is, no registry lookup. */
  digest?: string | undefined;
}

/** What an image request resolved to: the tag chosen and its manifest digest. */
export interface ImagePin {
  repository: string;
  /** The tag chosen (the tag itself, or the highest match of a range). */
  tag: string;
  /** "sha256:<64 hex>". */
  digest: string;
}

/**
 * The distinct images of an app source (services, then jobs with their own image), sorted by
 * repository then tag. Jobs that run a service's image add nothing. Pure.
 */
export function imageRequests(source: AppSource): ImageRequest[] {
  const seen = new Map<string, ImageRequest>();
  const add = (repository: string, tag: string, digest: string | undefined) =>
    seen.set(
      `${repository}\n${tag}\n${digest ?? ""}`,
      digest === undefined ? { repository, tag } : { repository, tag, digest },
    );
  for (const s of source.services) add(s.image, s.tag, s.digest);
  for (const j of source.jobs) if (j.image !== undefined) add(j.image, j.tag ?? "latest", j.digest);
  return [...seen.values()].sort(
    (a, b) =>
      cmp(a.repository, b.repository) || cmp(a.tag, b.tag) || cmp(a.digest ?? "", b.digest ?? ""),
  );
}

/** The pin of a request whose digest the spec gives: used as it is (no registry lookup). */
export function givenPin(request: ImageRequest): ImagePin | undefined {
  if (request.digest === undefined) return undefined;
  return { repository: request.repository, tag: request.tag, digest: request.digest };
}

/**
 * The revision of a set of pins: each "<repository>:<tag>@<digest>", sorted, joined by ",",
 * e.g. "registry.example.com/org/web:1.4.2@sha256:…" (Flux writes an OCI revision as
 * "<tag>@<digest>"). A new matching tag or a moved tag changes it, so approvals and Slack treat
 * it as they treat a new commit.
 */
export function formatRevision(pins: readonly ImagePin[]): string {
  const parts = pins.map((p) => `${p.repository}:${p.tag}@${p.digest}`);
  return [...new Set(parts)].sort().join(",");
}

/**
 * The pins a revision string holds (see formatRevision), or undefined when it is not one
 * (a Git commit, a bare digest).
 */
export function parseRevision(revision: string): ImagePin[] | undefined {
  const pins: ImagePin[] = [];
  for (const part of revision.split(",")) {
    const m = /^(.+):([^:@/]+)@(sha256:[0-9a-f]{64})$/.exec(part);
    if (!m) return undefined;
    pins.push({ repository: m[1]!, tag: m[2]!, digest: m[3]! });
  }
  return pins;
}

/**
 * The pin for `request` among `pins`: same repository and, for a tag, the same tag (and the
 * same digest when the spec gives one); for a range, the highest pinned tag the range matches. Undefined when none fits (the revision was
 * made before this image was added to the spec).
 */
export function pinFor(pins: readonly ImagePin[], request: ImageRequest): ImagePin | undefined {
  const same = pins.filter((p) => p.repository === request.repository);
  if (request.digest !== undefined) {
    return same.find((p) => p.tag === request.tag && p.digest === request.digest);
  }
  if (!isTagRange(request.tag)) return same.find((p) => p.tag === request.tag);
  const tag = pickTag(
    request.tag,
    same.map((p) => p.tag),
  );
  return same.find((p) => p.tag === tag);
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
