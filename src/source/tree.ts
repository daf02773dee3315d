// Reading the manifests under an App's path out of a fetched commit, without a checkout.
import git from "isomorphic-git";
import type { SourceFile } from "../core/index.ts";
import { SourceError } from "../core/index.ts";

/** Files that mean the directory is a Kustomize base or a Helm chart. */
export const REFUSED_FILES: ReadonlySet<string> = new Set([
  "kustomization.yaml",
  "kustomization.yml",
  "Kustomization",
  "Chart.yaml",
]);

const MANIFEST = /\.(ya?ml|json)$/;
const MODE_TREE = "040000";
const MODE_FILE = new Set(["100644", "100755"]);

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
 * Symlinks and submodules are skipped, never followed. Errors (SourceError, not transient):
 * path missing or not a directory; a kustomization.yaml/.yml, Kustomization or Chart.yaml
 * anywhere under the path (GitPort.fetchSource renders one at the path itself); more than
 * `maxFiles` files or `maxBytes` bytes; invalid UTF-8.
 */
export async function collectManifests(o: CollectOptions): Promise<SourceFile[]> {
  const { fs, gitdir, cache, commit } = o;
  const tree = await pathTree(o);

  const blobs: { path: string; oid: string }[] = [];
  const walk = async (oid: string, dir: string): Promise<void> => {
    const { tree: entries } = await git.readTree({ fs, gitdir, cache, oid });
    for (const entry of entries) {
      const rel = dir === "" ? entry.path : `${dir}/${entry.path}`;
      // Hidden files and folders (.github/workflows/*.yml, .gitlab-ci.yml) are never
      // manifests; Argo CD's directory source skips them the same way.
      if (entry.path.startsWith(".")) continue;
      if (entry.mode === MODE_TREE) await walk(entry.oid, rel);
      else if (!MODE_FILE.has(entry.mode))
        continue; // 120000 symlink, 160000 submodule
      else if (REFUSED_FILES.has(entry.path)) {
        const where = o.path === "" ? "." : o.path;
        throw new SourceError(
          `${rel} found in "${where}": a Kustomize overlay or Helm chart is rendered only when source.path is its own directory, not a folder above it`,
          false,
        );
      } else if (MANIFEST.test(entry.path)) {
        blobs.push({ path: rel, oid: entry.oid });
        if (blobs.length > o.maxFiles) {
          throw new SourceError(
            `more than ${o.maxFiles} manifest files under "${o.path}" at ${commit}`,
            false,
          );
        }
      }
    }
  };
  await walk(tree, "");
  // Refusal is checked over the whole tree before any blob is read: never a partial render.
  blobs.sort((a, b) => comparePaths(a.path, b.path));

  const decoder = new TextDecoder("utf-8", { fatal: true });
  const files: SourceFile[] = [];
  let total = 0;
  for (const { path, oid } of blobs) {
    const { blob } = await git.readBlob({ fs, gitdir, cache, oid });
    total += blob.byteLength;
    if (total > o.maxBytes) {
      throw new SourceError(
        `manifests under "${o.path}" at ${commit} exceed ${o.maxBytes} bytes`,
        false,
      );
    }
    try {
      files.push({ path, content: decoder.decode(blob) });
    } catch {
      throw new SourceError(`${path} at ${commit} is not valid UTF-8`, false);
    }
  }
  return files;
}

/**
 * The oid of the tree at `o.path` in `o.commit`, walked one directory at a time.
 * @throws SourceError (not transient) when the path is missing or not a directory
 */
export async function pathTree(o: CollectOptions): Promise<string> {
  const { fs, gitdir, cache, commit } = o;
  const { commit: parsed } = await git.readCommit({ fs, gitdir, cache, oid: commit });
  let tree = parsed.tree;
  const prefix = normalizePath(o.path);
  for (const segment of prefix === "" ? [] : prefix.split("/")) {
    const { tree: entries } = await git.readTree({ fs, gitdir, cache, oid: tree });
    const entry = entries.find((e) => e.path === segment);
    if (entry === undefined)
      throw new SourceError(`path "${o.path}" not found at ${commit}`, false);
    if (entry.mode !== MODE_TREE) {
      throw new SourceError(`path "${o.path}" is not a directory at ${commit}`, false);
    }
    tree = entry.oid;
  }
  return tree;
}
