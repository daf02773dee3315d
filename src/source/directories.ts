// The directories of a fetched commit, for the AppSet's Git directory generator.
import { type CommitTree, MODE_TREE, readEntries, rootTree } from "./links.ts";
import { comparePaths } from "./tree.ts";

/** Directories listed at most: a repository with more is refused rather than read on. */
export const MAX_DIRECTORIES = 10_000;

/**
 * Every directory of `commit` as a "/"-joined path from the root (the root itself left out),
 * sorted in byte order. Hidden directories (a name starting with ".") and what is under them are
 * skipped, as Argo CD's GetGitDirectories skips them; links and submodules are no directories
 * here (a checkout walk does not follow them either).
 * @throws Error when there are more than `max` directories
 */
export async function listDirectories(
  o: Omit<CommitTree, "root">,
  max = MAX_DIRECTORIES,
): Promise<string[]> {
  const t = await rootTree(o);
  const found: string[] = [];
  const walk = async (oid: string, prefix: string): Promise<void> => {
    for (const e of await readEntries(t, oid)) {
      if (e.mode !== MODE_TREE || e.path.startsWith(".")) continue;
      const path = prefix ? `${prefix}/${e.path}` : e.path;
      found.push(path);
      if (found.length > max) throw new Error(`the repository has more than ${max} directories`);
      await walk(e.oid, path);
    }
  };
  await walk(t.root, "");
  return found.sort(comparePaths);
}
