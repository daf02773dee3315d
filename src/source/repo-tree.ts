// Reading a whole repository at a commit (for Kustomize and Helm, whose files may reference
// anything in the repository), and telling what a source path holds.
import git from "isomorphic-git";
import { SourceError } from "../core/index.ts";
import type { RepoFile } from "../render/index.ts";
import { KUSTOMIZATION_FILES } from "../render/index.ts";
import { type CollectOptions, comparePaths, pathTree } from "./tree.ts";

const MODE_TREE = "040000";
const MODE_FILE = new Set(["100644", "100755"]);

/** What a directory is: a Kustomize overlay, a Helm chart, or plain manifests. */
export type SourceKind = "kustomize" | "helm" | "manifests";

/**
 * The kind of source.path at `commit`: "kustomize" when the directory holds
 * kustomization.yaml, kustomization.yml or Kustomization (checked first, as Flux would), "helm"
 * when it holds Chart.yaml, "manifests" otherwise. Errors (SourceError, not transient): the
 * path is missing or not a directory.
 */
export async function sourceKindAt(o: CollectOptions): Promise<SourceKind> {
  const entries = await readDir(o);
  const files = new Set(entries.filter((e) => MODE_FILE.has(e.mode)).map((e) => e.path));
  if (KUSTOMIZATION_FILES.some((f) => files.has(f))) return "kustomize";
  if (files.has("Chart.yaml")) return "helm";
  return "manifests";
}

async function readDir(o: CollectOptions) {
  const { fs, gitdir, cache } = o;
  return (await git.readTree({ fs, gitdir, cache, oid: await pathTree(o) })).tree;
}

/**
 * Every regular file of the repository at `commit`, hidden ones included (.helmignore, .env
 * files of a configMapGenerator), as bytes with paths from the repository root, sorted in byte
 * order. Symlinks and submodules are skipped, never followed. Errors (SourceError, not
 * transient): more than `maxFiles` files or `maxBytes` bytes in all.
 */
export async function collectRepository(o: CollectOptions): Promise<RepoFile[]> {
  const { fs, gitdir, cache, commit } = o;
  const { commit: parsed } = await git.readCommit({ fs, gitdir, cache, oid: commit });
  const blobs: { path: string; oid: string }[] = [];
  const walk = async (oid: string, dir: string): Promise<void> => {
    const { tree: entries } = await git.readTree({ fs, gitdir, cache, oid });
    for (const entry of entries) {
      const rel = dir === "" ? entry.path : `${dir}/${entry.path}`;
      if (entry.mode === MODE_TREE) await walk(entry.oid, rel);
      else if (MODE_FILE.has(entry.mode)) {
        blobs.push({ path: rel, oid: entry.oid });
        if (blobs.length > o.maxFiles) {
          throw new SourceError(
            `the repository has more than ${o.maxFiles} files at ${commit} (Kustomize and Helm sources read the whole repository)`,
            false,
          );
        }
      }
    }
  };
  await walk(parsed.tree, "");
  blobs.sort((a, b) => comparePaths(a.path, b.path));
  const files: RepoFile[] = [];
  let total = 0;
  for (const { path, oid } of blobs) {
    const { blob } = await git.readBlob({ fs, gitdir, cache, oid });
    total += blob.byteLength;
    if (total > o.maxBytes) {
      throw new SourceError(
        `the repository's files exceed ${o.maxBytes} bytes at ${commit} (Kustomize and Helm sources read the whole repository)`,
        false,
      );
    }
    files.push({ path, data: blob });
  }
  return files;
}
