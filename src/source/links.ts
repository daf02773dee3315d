// Symbolic links inside a fetched commit, followed as a Git checkout would follow them (Flux and
// Argo CD render from a checkout), without ever reading outside the repository.
import git from "isomorphic-git";
import { SourceError } from "../core/index.ts";

export const MODE_TREE = "040000";
export const MODE_LINK = "120000";
export const MODE_FILE: ReadonlySet<string> = new Set(["100644", "100755"]);

/** Links followed to resolve one path before it counts as a loop (Linux's MAXSYMLINKS). */
export const MAX_LINK_HOPS = 40;

/** A commit's trees in memory: the isomorphic-git fs, gitdir, object cache and root tree. */
export interface CommitTree {
  fs: Parameters<typeof git.readTree>[0]["fs"];
  gitdir: string;
  cache: object;
  commit: string;
  /** The commit's root tree oid. */
  root: string;
}

/** What a path names once every link on the way is followed. */
export interface Resolved {
  type: "tree" | "blob";
  oid: string;
  /** The path with no link left in it, from the repository root ("" for the root). */
  path: string;
}

type TreeEntry = Awaited<ReturnType<typeof git.readTree>>["tree"][number];

/** The root tree of `commit`. */
export async function rootTree(o: Omit<CommitTree, "root">): Promise<CommitTree> {
  const { commit: parsed } = await git.readCommit({ ...o, oid: o.commit });
  return { ...o, root: parsed.tree };
}

/**
 * Parsed trees by oid, per fetched repository (its isomorphic-git cache object, so they go with
 * it): the Apps of one repository each walk the same wide trees (the root, a folder of one
 * directory per App), and parsing a tree of N entries for each of N Apps was quadratic. A tree's
 * oid is the hash of its content, so a parse never goes stale. At most MAX_MEMO_ENTRIES entries
 * are kept per repository; trees past that are parsed on each read, as before.
 */
const parsedTrees = new WeakMap<object, { entries: number; trees: Map<string, TreeEntry[]> }>();

/** Tree entries kept parsed per repository at most (about 150 bytes each). */
export const MAX_MEMO_ENTRIES = 100_000;

/** The entries of tree `oid`, in Git's order (shared: never modify them). */
export async function readEntries(t: CommitTree, oid: string): Promise<readonly TreeEntry[]> {
  let memo = parsedTrees.get(t.cache);
  const hit = memo?.trees.get(oid);
  if (hit) return hit;
  const { tree } = await git.readTree({ fs: t.fs, gitdir: t.gitdir, cache: t.cache, oid });
  if (!memo) {
    memo = { entries: 0, trees: new Map() };
    parsedTrees.set(t.cache, memo);
  }
  if (memo.entries + tree.length <= MAX_MEMO_ENTRIES && !memo.trees.has(oid)) {
    memo.trees.set(oid, tree);
    memo.entries += tree.length;
  }
  return tree;
}

/** The target a link blob holds, as Git stores it (the text `readlink` would return). */
async function readLink(t: CommitTree, oid: string): Promise<string> {
  const { blob } = await git.readBlob({ fs: t.fs, gitdir: t.gitdir, cache: t.cache, oid });
  return new TextDecoder().decode(blob);
}

const quote = (p: string) => `"${p === "" ? "." : p}"`;

/**
 * Follows `path` (from the repository root, "/"-separated) through every link on the way: a
 * relative target from the link's directory, an absolute one from the repository root (the
 * repository is the whole file system a render sees; Argo CD, which renders from a checkout,
 * refuses every absolute link instead: argo-cd util/app/path/path.go, CheckOutOfBoundsSymlinks),
 * chains and links to directories.
 * Hidden names and submodules are not this function's concern: a submodule entry is missing.
 * @returns what the path names, or undefined when it does not exist (a dangling link's target)
 * @throws SourceError (not transient) naming `link` — the repository path being followed, for
 *   messages — and the link on the way that leaves the repository ("../" above the root), when
 *   more than MAX_LINK_HOPS links are followed (a loop), or when a path goes through a file
 */
export async function resolvePath(
  t: CommitTree,
  path: string,
  link: string,
): Promise<Resolved | undefined> {
  const pending = path.split("/");
  // The directories walked so far, from the root: names and tree oids.
  const names: string[] = [];
  const trees: string[] = [t.root];
  let hops = 0;
  // The last link followed, to name the one that leaves the repository.
  let followed: { path: string; target: string } | undefined;
  while (pending.length > 0) {
    const segment = pending.shift() as string;
    if (segment === "" || segment === ".") continue;
    if (segment === "..") {
      if (names.length === 0) {
        const from = followed && followed.path !== link ? ` (followed from ${quote(link)})` : "";
        throw new SourceError(
          `symlink ${quote(followed?.path ?? link)} points outside the repository ("${followed?.target ?? path}")${from}; a link must resolve inside it`,
          false,
        );
      }
      names.pop();
      trees.pop();
      continue;
    }
    const here = trees[trees.length - 1] as string;
    const entry = (await readEntries(t, here)).find((e) => e.path === segment);
    if (entry === undefined) return undefined;
    const at = [...names, segment].join("/");
    if (entry.mode === MODE_TREE) {
      names.push(segment);
      trees.push(entry.oid);
    } else if (entry.mode === MODE_LINK) {
      hops++;
      if (hops > MAX_LINK_HOPS) {
        throw new SourceError(
          `symlink ${quote(link)} is part of a loop: more than ${MAX_LINK_HOPS} links followed`,
          false,
        );
      }
      const target = await readLink(t, entry.oid);
      followed = { path: at, target };
      if (target.startsWith("/")) {
        names.length = 0;
        trees.length = 1;
      }
      pending.unshift(...target.split("/"));
    } else if (MODE_FILE.has(entry.mode)) {
      if (pending.some((s) => s !== "" && s !== ".")) {
        throw new SourceError(
          `symlink ${quote(link)} resolves through ${quote(at)}, which is a file, not a directory`,
          false,
        );
      }
      return { type: "blob", oid: entry.oid, path: at };
    } else {
      return undefined; // 160000: a submodule's commit is not in this repository
    }
  }
  return { type: "tree", oid: trees[trees.length - 1] as string, path: names.join("/") };
}

/** The target text of the link at repository path `link`, for a message ("?" if unreadable). */
async function targetOf(t: CommitTree, link: string): Promise<string> {
  const parts = link.split("/");
  const name = parts.pop() as string;
  const dir = await resolveQuietly(t, parts.join("/"));
  if (dir?.type !== "tree") return "?";
  const entry = (await readEntries(t, dir.oid)).find((e) => e.path === name);
  return entry?.mode === MODE_LINK ? readLink(t, entry.oid) : "?";
}

async function resolveQuietly(t: CommitTree, path: string): Promise<Resolved | undefined> {
  try {
    return await resolvePath(t, path, path);
  } catch {
    return undefined;
  }
}

/**
 * Resolves the link at repository path `link` (whose own directory `dir` is already free of
 * links) to what it names.
 * @throws SourceError (not transient) naming the link: its target is missing (a dangling link
 *   is refused, never skipped), outside the repository, or a loop
 */
export async function followLink(t: CommitTree, link: string): Promise<Resolved> {
  const hit = await resolvePath(t, link, link);
  if (hit === undefined) {
    throw new SourceError(
      `symlink ${quote(link)} points to "${await targetOf(t, link)}", which does not exist at ${t.commit}`,
      false,
    );
  }
  return hit;
}

/** Whether directory `outer` is `inner` or holds it (repository paths, "" the root). */
function holds(outer: string, inner: string): boolean {
  return outer === "" || inner === outer || inner.startsWith(`${outer}/`);
}

/** One regular file met by walkFiles: where it appears, and whose content it has. */
export interface WalkedFile {
  /** Path relative to the walk's start, through links as they are named. */
  path: string;
  /** The blob's oid (a link's target's). */
  oid: string;
}

export interface WalkOptions {
  /** An entry name to leave out with everything below it (hidden files, for manifests). */
  skip?: (name: string) => boolean;
  /** Called for every regular file, in walk order; may throw to stop the walk. */
  visit: (file: WalkedFile) => void;
}

/**
 * Walks the tree `start` (resolved, so its path is free of links) recursively, following links:
 * a link to a file appears as a file with its target's content, a link to a directory as that
 * directory's contents under the link's name. Submodules are left out (their commits are not
 * in this repository).
 * @throws SourceError (not transient) for a link that leaves the repository, dangles, or loops
 *   (a link to a directory that holds it: the walk would never end), naming the link
 */
export async function walkFiles(t: CommitTree, start: Resolved, o: WalkOptions): Promise<void> {
  const walk = async (oid: string, real: string, rel: string, open: string[]): Promise<void> => {
    for (const entry of await readEntries(t, oid)) {
      if (o.skip?.(entry.path)) continue;
      const path = rel === "" ? entry.path : `${rel}/${entry.path}`;
      const at = real === "" ? entry.path : `${real}/${entry.path}`;
      if (entry.mode === MODE_TREE) await walk(entry.oid, at, path, [...open, at]);
      else if (MODE_FILE.has(entry.mode)) o.visit({ path, oid: entry.oid });
      else if (entry.mode === MODE_LINK) {
        const target = await followLink(t, at);
        if (target.type === "blob") o.visit({ path, oid: target.oid });
        else if (open.some((dir) => holds(target.path, dir))) {
          throw new SourceError(
            `symlink ${quote(at)} is part of a loop: it points to ${quote(target.path)}, which holds it`,
            false,
          );
        } else await walk(target.oid, target.path, path, [...open, target.path]);
      }
    }
  };
  await walk(start.oid, start.path, "", [start.path]);
}
