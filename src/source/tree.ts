// Reading the manifests under an App's path out of a fetched commit, without a checkout.
import git from "isomorphic-git";
import type { SourceFile } from "../core/index.ts";
import { SourceError } from "../core/index.ts";
import { declaredSize } from "./blob-size.ts";
import { type CommitTree, type Resolved, resolvePath, rootTree, walkFiles } from "./links.ts";

/** Files that mean the directory is a Kustomize base or a Helm chart. */
export const REFUSED_FILES: ReadonlySet<string> = new Set([
  "kustomization.yaml",
  "kustomization.yml",
  "Kustomization",
  "Chart.yaml",
]);

const MANIFEST = /\.(ya?ml|json)$/;

/**
 * An App path as a "/"-joined list of segments without ".", empty ones or leading/trailing "/":
 * "." → "", "./guestbook/" → "guestbook". Throws SourceError (not transient) on "..".
 */
export function normalizePath(path: string): string {
  const parts = path.split("/").filter((s) => s !== "" && s !== ".");
  if (parts.includes("..")) throw new SourceError(`path "${path}" must not contain ".."`, false);
  return parts.join("/");
}

/** Byte-order (UTF-8) comparison of two paths: code point order, unlike `<` on UTF-16. */
export function comparePaths(a: string, b: string): number {
  const x = [...a];
  const y = [...b];
  for (let i = 0; i < x.length && i < y.length; i++) {
    const d = (x[i]?.codePointAt(0) ?? 0) - (y[i]?.codePointAt(0) ?? 0);
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

export interface CollectOptions {
  /** isomorphic-git fs holding the fetched objects, its gitdir and object cache. */
  fs: Parameters<typeof git.readTree>[0]["fs"];
  gitdir: string;
  cache: object;
  commit: string;
  /** source.path as the user wrote it (for messages). */
  path: string;
  /** Cap on the summed size of returned files, bytes. */
  maxBytes: number;
  /** Cap on the number of returned files. */
  maxFiles: number;
}

/**
 * Every regular file ending .yaml, .yml or .json under `path` at `commit`, recursively, with
 * paths relative to `path`, sorted by path in byte order, decoded as UTF-8 (BOM dropped).
 * Hidden entries (a name starting with ".") are skipped, as Argo CD's directory source does.
 * Symlinks are followed as a checkout follows them (links.ts: a link to a file is that file
 * under the link's name, a link to a directory its contents); submodules are left out. Errors
 * (SourceError, not transient): path missing or not a directory; a link that leaves the
 * repository, dangles or loops (named); a kustomization.yaml/.yml, Kustomization or Chart.yaml
 * anywhere under the path (GitPort.fetchSource renders one at the path itself); more than
 * `maxFiles` files or `maxBytes` bytes; invalid UTF-8.
 */
export async function collectManifests(o: CollectOptions): Promise<SourceFile[]> {
  const { fs, gitdir, cache, commit } = o;
  const { tree, dir } = await pathTree(o);

  const blobs: { path: string; oid: string }[] = [];
  await walkFiles(tree, dir, {
    // Hidden files and folders (.github/workflows/*.yml, .gitlab-ci.yml) are never
    // manifests; Argo CD's directory source skips them the same way.
    skip: (name) => name.startsWith("."),
    visit: ({ path, oid }) => {
      const name = path.slice(path.lastIndexOf("/") + 1);
      if (REFUSED_FILES.has(name)) {
        const where = o.path === "" ? "." : o.path;
        throw new SourceError(
          `${path} found in "${where}": a Kustomize overlay or Helm chart is rendered only when source.path is its own directory, not a folder above it`,
          false,
        );
      }
      if (!MANIFEST.test(name)) return;
      blobs.push({ path, oid });
      if (blobs.length > o.maxFiles) {
        throw new SourceError(
          `more than ${o.maxFiles} manifest files under "${o.path}" at ${commit}`,
          false,
        );
      }
    },
  });
  // Refusal is checked over the whole tree before any blob is read: never a partial render.
  blobs.sort((a, b) => comparePaths(a.path, b.path));

  const decoder = new TextDecoder("utf-8", { fatal: true });
  const files: SourceFile[] = [];
  let total = 0;
  const over = (bytes: number) => {
    if (bytes <= o.maxBytes) return;
    throw new SourceError(
      `manifests under "${o.path}" at ${commit} exceed ${o.maxBytes} bytes`,
      false,
    );
  };
  for (const { path, oid } of blobs) {
    // The size the pack declares is checked before the blob is inflated (blob-size.ts).
    const declared = await declaredSize(fs, gitdir, cache, oid);
    if (declared !== undefined) over(total + declared);
    const { blob } = await git.readBlob({ fs, gitdir, cache, oid });
    total += blob.byteLength;
    over(total);
    try {
      files.push({ path, content: decoder.decode(blob) });
    } catch {
      throw new SourceError(`${path} at ${commit} is not valid UTF-8`, false);
    }
  }
  return files;
}

/**
 * The commit's trees and the directory at `o.path`, links on the way followed (links.ts).
 * @throws SourceError (not transient) when the path is missing or not a directory, or a link
 *   on the way leaves the repository or loops
 */
export async function pathTree(o: CollectOptions): Promise<{ tree: CommitTree; dir: Resolved }> {
  const tree = await rootTree(o);
  const dir = await resolvePath(tree, normalizePath(o.path), o.path);
  if (dir === undefined) throw new SourceError(`path "${o.path}" not found at ${o.commit}`, false);
  if (dir.type !== "tree") {
    throw new SourceError(`path "${o.path}" is not a directory at ${o.commit}`, false);
  }
  return { tree, dir };
}
