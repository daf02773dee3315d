// A GitPort over a local working tree (Node only): `plumb diff --path DIR` renders DIR in place
// of the App's Git path, as `argocd app diff --local` and `flux diff kustomization --path` do.
// What it reads follows the Git port's rules (tree.ts, repo-tree.ts) so a directory renders
// here as it will once pushed.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { SourceError, type SourceFile } from "../core/index.ts";
import type { FetchedSource, GitPort } from "../reconcile/ports.ts";
import { KUSTOMIZATION_FILES, type RepoFile } from "../render/index.ts";
import { comparePaths, REFUSED_FILES } from "./tree.ts";

const MANIFEST = /\.(ya?ml|json)$/;
const MiB = 1024 * 1024;
/** Directories never read as part of a repository: Git's own, and installed dependencies. */
const SKIPPED_DIRS = new Set([".git", "node_modules"]);

/** The revision a local directory renders as: "local:<absolute path>". */
export function localRevision(dir: string): string {
  return `local:${resolve(dir)}`;
}

/**
 * A GitPort whose every source is the directory `dir` (the App's URL, ref and path are not
 * read): resolve gives {@link localRevision}; fetchSource gives what the Git port would give
 * for that directory at a commit — a Kustomize overlay or Helm chart (kustomization.yaml/.yml,
 * Kustomization, then Chart.yaml in `dir` itself) with the files of the enclosing repository
 * (the nearest parent with a .git entry, else `dir`; .git and node_modules left out) so
 * `../base` resolves, else the manifests under `dir` (.yaml, .yml, .json, hidden entries
 * skipped, sorted in byte order). Errors (SourceError, not transient): `dir` missing or not a
 * directory, a kustomization or Chart.yaml below `dir`, more than `maxFiles` files or
 * `maxBytes` bytes (defaults: the Git port's 5 000 and 20 MiB), invalid UTF-8 in a manifest.
 */
export function createLocalGitPort(
  dir: string,
  options: { maxFiles?: number; maxBytes?: number } = {},
): GitPort {
  const root = resolve(dir);
  const maxFiles = options.maxFiles ?? 5000;
  const maxBytes = options.maxBytes ?? 20 * MiB;
  const check = () => {
    if (!existsSync(root) || !statSync(root).isDirectory()) {
      throw new SourceError(`--path ${dir}: not a directory`, false);
    }
  };
  const fetchSource = async (): Promise<FetchedSource> => {
    check();
    const names = new Set(readdirSync(root));
    const kind = KUSTOMIZATION_FILES.some((f) => names.has(f))
      ? "kustomize"
      : names.has("Chart.yaml")
        ? "helm"
        : "manifests";
    if (kind === "manifests") return { kind, files: manifests(root, dir, maxFiles, maxBytes) };
    const repo = repositoryRoot(root);
    const files = repository(repo, maxFiles, maxBytes);
    return { kind, path: relative(repo, root).split(sep).join("/"), files };
  };
  return {
    async resolve() {
      check();
      return localRevision(root);
    },
    async fetch() {
      check();
      return manifests(root, dir, maxFiles, maxBytes);
    },
    fetchSource,
  };
}

/** The nearest directory from `dir` up that holds a .git entry, else `dir`. */
function repositoryRoot(dir: string): string {
  for (let at = dir; ; at = dirname(at)) {
    if (existsSync(join(at, ".git"))) return at;
    if (dirname(at) === at) return dir;
  }
}

/** Regular files under `dir` (symlinks not followed), paths relative to it with "/". */
function walk(dir: string, skip: (name: string, isDir: boolean) => boolean): string[] {
  const out: string[] = [];
  const visit = (at: string, rel: string) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const path = rel === "" ? entry.name : `${rel}/${entry.name}`;
      if (entry.isDirectory()) {
        if (!skip(entry.name, true)) visit(join(at, entry.name), path);
      } else if (entry.isFile() && !skip(entry.name, false)) out.push(path);
    }
  };
  visit(dir, "");
  return out.sort(comparePaths);
}

function manifests(root: string, shown: string, maxFiles: number, maxBytes: number): SourceFile[] {
  const paths = walk(root, (name) => name.startsWith(".")).filter((p) => {
    const name = p.slice(p.lastIndexOf("/") + 1);
    if (REFUSED_FILES.has(name)) {
      throw new SourceError(
        `${p} found in "${shown}": a Kustomize overlay or Helm chart is rendered only when --path is its own directory, not a folder above it`,
        false,
      );
    }
    return MANIFEST.test(name);
  });
  if (paths.length > maxFiles) {
    throw new SourceError(`more than ${maxFiles} manifest files under "${shown}"`, false);
  }
  const decoder = new TextDecoder("utf-8", { fatal: true });
  let total = 0;
  return paths.map((path) => {
    const bytes = readFileSync(join(root, path));
    total += bytes.byteLength;
    if (total > maxBytes) {
      throw new SourceError(`manifests under "${shown}" exceed ${maxBytes} bytes`, false);
    }
    try {
      return { path, content: decoder.decode(bytes).replace(/^\uFEFF/, "") };
    } catch {
      throw new SourceError(`${path} is not valid UTF-8`, false);
    }
  });
}

function repository(repo: string, maxFiles: number, maxBytes: number): RepoFile[] {
  const paths = walk(repo, (name, isDir) => isDir && SKIPPED_DIRS.has(name));
  if (paths.length > maxFiles) {
    throw new SourceError(
      `${repo} has more than ${maxFiles} files (Kustomize and Helm sources read the whole repository)`,
      false,
    );
  }
  let total = 0;
  return paths.map((path) => {
    const data = new Uint8Array(readFileSync(join(repo, path)));
    total += data.byteLength;
    if (total > maxBytes) throw new SourceError(`${repo} exceeds ${maxBytes} bytes`, false);
    return { path, data };
  });
}
