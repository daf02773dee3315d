// Reading a whole repository at a commit (for Kustomize and Helm, whose files may reference
// anything in the repository), and telling what a source path holds.
import git from "isomorphic-git";
import { SourceError } from "../core/index.ts";
import type { RepoFile } from "../render/index.ts";
import { KUSTOMIZATION_FILES } from "../render/index.ts";
import { followLink, MODE_FILE, MODE_LINK, readEntries, walkFiles } from "./links.ts";
import { type CollectOptions, comparePaths, pathTree } from "./tree.ts";

/** What a directory is: a Kustomize overlay, a Helm chart, or plain manifests. */
export type SourceKind = "kustomize" | "helm" | "manifests";

/**
 * The kind of source.path at `commit`: "kustomize" when the directory holds
 * kustomization.yaml, kustomization.yml or Kustomization (checked first, as Flux would), "helm"
 * when it holds Chart.yaml, "manifests" otherwise. Errors (SourceError, not transient): the
 * path is missing or not a directory; a link on the way, or one of those names as a link, leaves
 * the repository, dangles or loops.
 */
export async function sourceKindAt(o: CollectOptions): Promise<SourceKind> {
  const { tree, dir } = await pathTree(o);
  const files = new Set<string>();
  for (const e of await readEntries(tree, dir.oid)) {
    if (MODE_FILE.has(e.mode)) files.add(e.path);
    else if (
      e.mode === MODE_LINK &&
      (KUSTOMIZATION_FILES.includes(e.path) || e.path === "Chart.yaml")
    ) {
      const at = dir.path === "" ? e.path : `${dir.path}/${e.path}`;
      if ((await followLink(tree, at)).type === "blob") files.add(e.path);
    }
  }
  if (KUSTOMIZATION_FILES.some((f) => files.has(f))) return "kustomize";
  if (files.has("Chart.yaml")) return "helm";
  return "manifests";
}

/**
 * Every regular file of the repository at `commit`, hidden ones included (.helmignore, .env
 * files of a configMapGenerator), as bytes with paths from the repository root, sorted in byte
 * order. Symlinks are followed as a checkout follows them (links.ts), so Kustomize's file system
 * and Helm's chart loader see one resolved tree: a link to a file is a file with its target's
 * bytes, a link to a directory holds that directory's files. Submodules are left out. Errors
 * (SourceError, not transient): a link anywhere in the repository that leaves it, dangles or
 * loops (Argo CD refuses a repository with an out-of-bounds link the same way: argo-cd
 * util/app/path/path.go, CheckOutOfBoundsSymlinks); more than `maxFiles` files or `maxBytes`
 * bytes in all.
 */
export async function collectRepository(o: CollectOptions): Promise<RepoFile[]> {
  const { fs, gitdir, cache, commit } = o;
  const { tree } = await pathTree({ ...o, path: "" });
  const blobs: { path: string; oid: string }[] = [];
  await walkFiles(
    tree,
    { type: "tree", oid: tree.root, path: "" },
    {
      visit: (file) => {
        blobs.push(file);
        if (blobs.length > o.maxFiles) {
          throw new SourceError(
            `the repository has more than ${o.maxFiles} files at ${commit} (Kustomize and Helm sources read the whole repository)`,
            false,
          );
        }
      },
    },
  );
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
