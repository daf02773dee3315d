import git from "isomorphic-git";
import { describe, expect, it } from "vitest";
import { emptyRepository } from "./cache.ts";
import { type CommitTree, readEntries } from "./links.ts";

/** A repository in memory holding one tree of `names` (each a file) and that tree's oid. */
async function repositoryWithTree(names: string[]) {
  const repo = await emptyRepository();
  const blob = await git.writeBlob({
    fs: repo.fs,
    gitdir: repo.gitdir,
    blob: new TextEncoder().encode("kind: ConfigMap\n"),
  });
  const oid = await git.writeTree({
    fs: repo.fs,
    gitdir: repo.gitdir,
    tree: names.map((path) => ({ mode: "100644", path, oid: blob, type: "blob" as const })),
  });
  return { repo, oid, blob };
}

describe("readEntries", () => {
  it("parses a tree once per repository: later reads share the parsed entries", async () => {
    const { repo, oid, blob } = await repositoryWithTree(["b.yaml", "a.yaml"]);
    const t: CommitTree = { ...repo, commit: "", root: oid };
    const first = await readEntries(t, oid);
    expect(first.map((e) => [e.path, e.mode, e.oid, e.type])).toEqual([
      ["a.yaml", "100644", blob, "blob"],
      ["b.yaml", "100644", blob, "blob"],
    ]);
    expect(await readEntries({ ...t }, oid)).toBe(first);
    // Another repository (another cache object) parses its own.
    const other = await readEntries({ ...t, cache: {} }, oid);
    expect(other).not.toBe(first);
    expect(other).toEqual(first);
  });

  it("fails for an oid the repository does not hold, and keeps failing", async () => {
    const { repo, oid } = await repositoryWithTree(["a.yaml"]);
    const t: CommitTree = { ...repo, commit: "", root: oid };
    const missing = "0".repeat(40);
    await expect(readEntries(t, missing)).rejects.toThrow(/0000000000/);
    await expect(readEntries(t, missing)).rejects.toThrow(/0000000000/);
  });
});
