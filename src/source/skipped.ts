// Objects a fetch left out of its pack for being over the cap on one object (pack-scan.ts,
// skip mode): a file no App reads costs nothing more than its download, and an App that reads
// one fails with the file and the cap named, as a checkout that cannot hold the file would.
import git from "isomorphic-git";
import { SourceError } from "../core/index.ts";
import type { SkippedObject } from "./pack-scan.ts";

/** What one fetch left out, and the cap it was left out for. */
export interface Skipped {
  /** In pack order; a delta's id is unknown (undefined). */
  objects: SkippedObject[];
  /** The cap on one object once inflated, bytes. */
  cap: number;
  /** How the cap was set, for messages ("PLUMB_MAX_RUN_MEMORY / 8"); absent: not named. */
  rule?: string | undefined;
}

/** Where a file is read from: the revision's objects and what its fetch left out. */
export interface SkippedOf {
  fs: Parameters<typeof git.readBlob>[0]["fs"];
  gitdir: string;
  cache: object;
  commit: string;
  skipped?: Skipped | undefined;
}

/**
 * Throws the SourceError for `file` (a path in the repository) when its blob `oid` is one the
 * fetch left out: its size, the cap, and what to do.
 */
export function refuseSkipped(o: SkippedOf, file: string, oid: string): void {
  const hit = o.skipped?.objects.find((s) => s.oid === oid);
  if (hit && o.skipped) throw skippedError(o.skipped, o.commit, file, hit.bytes);
}

/**
 * git.readBlob of `file`'s blob `oid`; a blob missing from a revision whose fetch left out
 * objects it could not name (deltas) is that file being over the cap.
 * @throws SourceError naming `file` and the cap; isomorphic-git's errors otherwise
 */
export async function readBlobOf(
  o: SkippedOf,
  file: string,
  oid: string,
): Promise<{ blob: Uint8Array }> {
  try {
    return await git.readBlob({ fs: o.fs, gitdir: o.gitdir, cache: o.cache, oid });
  } catch (err) {
    const unnamed = o.skipped?.objects.find((s) => s.oid === undefined);
    const code = (err as { code?: unknown }).code;
    if (code === "NotFoundError" && unnamed && o.skipped) {
      throw skippedError(o.skipped, o.commit, file, undefined);
    }
    throw err;
  }
}

function skippedError(
  skipped: Skipped,
  commit: string,
  file: string,
  bytes: number | undefined,
): SourceError {
  const size = bytes === undefined ? "over" : `${bytes} bytes once inflated, over`;
  const rule = skipped.rule ? ` (${skipped.rule})` : "";
  return new SourceError(
    `${file} at ${commit} is ${size} the ${skipped.cap}-byte cap on one file of a fetch${rule}, so it was not fetched; Apps that do not read it are not affected: raise PLUMB_MAX_RUN_MEMORY or keep large files out of the repository (Git LFS)`,
    false,
  );
}
