// Reading what a Kustomize or Helm source renders from at a commit (its files may reference
// others anywhere in the repository), and telling what a source path holds.
import git from "isomorphic-git";
import { parse } from "yaml";
import { SourceError } from "../core/index.ts";
import { joinPath } from "../render/helm.ts";
import type { RepoFile } from "../render/index.ts";
import { KUSTOMIZATION_FILES } from "../render/index.ts";
import { declaredSize } from "./blob-size.ts";
import { followLink, MODE_FILE, MODE_LINK, readEntries, walkFiles } from "./links.ts";
import { type CollectOptions, comparePaths, normalizePath, pathTree } from "./tree.ts";

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

/** What collectRepository selects for: the source's kind and the extra files the App names. */
export interface RepositoryReads {
  kind: "kustomize" | "helm";
  /** Files the App names relative to its path (spec.source.helm.valuesFiles). */
  files?: readonly string[] | undefined;
}

/** Entries listed (tree objects only, no blob read) before a repository counts as too many. */
const LISTING_FACTOR = 20;

/**
 * The files of the repository at `commit` that the source at `o.path` renders from, hidden ones
 * included (.helmignore, .env files of a configMapGenerator), as bytes with paths from the
 * repository root, sorted in byte order. Only these count against `maxFiles` and `maxBytes`, so
 * a big file elsewhere in the repository breaks no App that does not read it:
 * - every file under the path;
 * - Kustomize: every string of a kustomization (resources, components, bases, patches,
 *   generator files as `key=path`...) that names a file or directory of the repository,
 *   relative to that kustomization's directory: a file is read, a directory is read whole and
 *   its own kustomization followed the same way. Kustomize's default load restrictor keeps
 *   the rest of a kustomization's files under its directory, so nothing it reads is missed;
 * - Helm: the chart directory (vendored charts/ included), every `file://` dependency of a
 *   Chart.yaml read (followed the same way) and the values files `reads.files` names.
 * Before a blob is inflated its size as the pack declares it (blob-size.ts) is added to the
 * total: a file that would pass `maxBytes` is refused before it is in memory.
 * Symlinks are followed as a checkout follows them (links.ts); submodules are left out. Errors
 * (SourceError, not transient): a link anywhere in the repository that leaves it, dangles or
 * loops (Argo CD refuses a repository with an out-of-bounds link the same way: argo-cd
 * util/app/path/path.go, CheckOutOfBoundsSymlinks); more than `maxFiles` files read, or more
 * than LISTING_FACTOR times that in the repository; more than `maxBytes` bytes read (the
 * message names the file and the cap).
 */
export async function collectRepository(
  o: CollectOptions,
  reads: RepositoryReads,
): Promise<RepoFile[]> {
  const { fs, gitdir, cache, commit } = o;
  const { tree } = await pathTree({ ...o, path: "" });
  const path = normalizePath(o.path);
  const listing = new Map<string, string>();
  const dirs = new Set<string>([""]);
  const maxListed = o.maxFiles * LISTING_FACTOR;
  await walkFiles(
    tree,
    { type: "tree", oid: tree.root, path: "" },
    {
      visit: (file) => {
        listing.set(file.path, file.oid);
        for (let i = file.path.indexOf("/"); i !== -1; i = file.path.indexOf("/", i + 1)) {
          dirs.add(file.path.slice(0, i));
        }
        if (listing.size > maxListed) {
          throw new SourceError(
            `the repository has more than ${maxListed} files at ${commit} (${LISTING_FACTOR} times the ${o.maxFiles} files one App may read)`,
            false,
          );
        }
      },
    },
  );

  let total = 0;
  const where = path === "" ? "." : path;
  const read = async (file: string): Promise<Uint8Array> => {
    const oid = listing.get(file) as string;
    const declared = await declaredSize(fs, gitdir, cache, oid);
    if (declared !== undefined) tooMuch(file, total + declared);
    const { blob } = await git.readBlob({ fs, gitdir, cache, oid });
    tooMuch(file, total + blob.byteLength);
    total += blob.byteLength;
    return blob;
  };
  const tooMuch = (file: string, bytes: number) => {
    if (bytes <= o.maxBytes) return;
    throw new SourceError(
      `the files "${where}" renders from exceed the ${o.maxBytes}-byte cap at ${commit} (at ${file}, ${bytes} bytes in all)`,
      false,
    );
  };

  const chosen = new Set<string>();
  const data = new Map<string, Uint8Array>();
  const readOnce = async (file: string) => {
    let hit = data.get(file);
    if (hit === undefined) {
      hit = await read(file);
      data.set(file, hit);
    }
    return hit;
  };
  const roots = new Set<string>();
  const addRoot = async (dir: string): Promise<void> => {
    if (roots.has(dir)) return;
    roots.add(dir);
    const prefix = dir === "" ? "" : `${dir}/`;
    for (const file of listing.keys()) if (file.startsWith(prefix)) chosen.add(file);
    const names = reads.kind === "kustomize" ? KUSTOMIZATION_FILES : ["Chart.yaml"];
    for (const name of names) {
      const file = `${prefix}${name}`;
      if (!listing.has(file)) continue;
      for (const ref of referencedPaths(await readOnce(file), reads.kind)) {
        const target = joinPath(dir, ref);
        if (target === undefined) continue;
        if (listing.has(target)) chosen.add(target);
        else if (dirs.has(target)) await addRoot(target);
      }
    }
  };
  await addRoot(path);
  for (const name of reads.files ?? []) {
    const target = joinPath(path, name);
    if (target !== undefined && listing.has(target)) chosen.add(target);
  }
  if (chosen.size > o.maxFiles) {
    throw new SourceError(
      `"${where}" renders from more than ${o.maxFiles} files at ${commit}`,
      false,
    );
  }
  const files: RepoFile[] = [];
  for (const file of [...chosen].sort(comparePaths)) {
    files.push({ path: file, data: await readOnce(file) });
  }
  return files;
}

/**
 * The relative paths a kustomization (every string in it, and the part after "=" of
 * `key=path`) or a Chart.yaml (its `file://` dependencies) may name. Text that does not parse
 * names nothing here: the engine reports it.
 */
function referencedPaths(bytes: Uint8Array, kind: "kustomize" | "helm"): string[] {
  let doc: unknown;
  try {
    doc = parse(new TextDecoder().decode(bytes), { maxAliasCount: 100 });
  } catch {
    return [];
  }
  const out: string[] = [];
  const visit = (v: unknown): void => {
    if (typeof v === "string") {
      if (kind === "helm") {
        if (v.startsWith("file://")) out.push(v.slice("file://".length));
        return;
      }
      if (v.includes("://") || v.startsWith("/") || v.includes("\n")) return;
      out.push(v);
      const eq = v.indexOf("=");
      if (eq !== -1) out.push(v.slice(eq + 1));
    } else if (Array.isArray(v)) v.forEach(visit);
    else if (v !== null && typeof v === "object") Object.values(v).forEach(visit);
  };
  visit(doc);
  return out;
}
