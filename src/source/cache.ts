// A fetched revision kept beyond the process: the pack a shallow fetch of one commit
// downloaded, stored under a key (the URL, commit and credentials) by a RevisionStore, and turned
// back into an in-memory repository without contacting the server. No node:fs here: the
// GitPort runs in workerd too; the Node store is cache-disk.ts.
import git from "isomorphic-git";

/** A revision in memory: what collectManifests and collectRepository read. */
export interface Fetched {
  fs: ReturnType<typeof import("memfs").createFsFromVolume>;
  gitdir: string;
  cache: object;
  /** True when it was rebuilt from a RevisionStore (not fetched by this call). */
  stored?: boolean;
}

/**
 * Where packs outlive a process (Node: cache-disk.ts). Keys are opaque strings that may hold
 * credentials: a store must hash them, never write them. A store never throws: a read it
 * cannot do is a miss (undefined), a write it cannot do is skipped.
 */
export interface RevisionStore {
  /** The pack stored under `key`, or undefined (missing, unreadable or failing its checksum). */
  get(key: string): Promise<Uint8Array | undefined>;
  /** Stores `pack` under `key` (atomically: a reader sees all of it or none). */
  put(key: string, pack: Uint8Array): Promise<void>;
  /** Forgets `key` (its pack turned out unusable). */
  drop(key: string): Promise<void>;
}

const GITDIR = "/repo.git";

/** A fresh in-memory bare repository (memfs is loaded only when one is needed). */
export async function emptyRepository(): Promise<Fetched> {
  // memfs is CommonJS: its module.exports is the default export in Node and in bundles.
  const { createFsFromVolume, Volume } = (await import("memfs")).default;
  const fs = createFsFromVolume(new Volume());
  await git.init({ fs, gitdir: GITDIR, bare: true });
  return { fs, gitdir: GITDIR, cache: {} };
}

/**
 * The one pack a fetch wrote into `repo` (objects/pack/*.pack), or undefined when there is
 * not exactly one (nothing to keep then).
 */
export async function packOf(repo: Fetched): Promise<Uint8Array | undefined> {
  const dir = `${repo.gitdir}/objects/pack`;
  const names = (await repo.fs.promises.readdir(dir)) as string[];
  const packs = names.filter((n) => n.endsWith(".pack"));
  if (packs.length !== 1) return undefined;
  const data = await repo.fs.promises.readFile(`${dir}/${packs[0]}`);
  return typeof data === "string" ? undefined : new Uint8Array(data);
}

/**
 * An in-memory repository holding `pack`, when it holds commit `oid`; undefined otherwise
 * (truncated or corrupt pack, another commit). Nothing in the pack is trusted: its index is
 * built here from the pack's contents (every object's id is the SHA-1 of what it holds, so a
 * tampered object gets another id), the pack's trailing checksum is verified, and `oid` must
 * be a commit in it; reading then re-hashes what it reads by id.
 */
export async function repositoryFromPack(
  pack: Uint8Array,
  oid: string,
): Promise<Fetched | undefined> {
  if (pack.length < 32) return undefined;
  try {
    const repo = await emptyRepository();
    const trailer = Buffer.from(pack.subarray(-20)).toString("hex");
    const filepath = `objects/pack/pack-${trailer}.pack`;
    await repo.fs.promises.writeFile(`${repo.gitdir}/${filepath}`, pack);
    await git.indexPack({ fs: repo.fs, dir: repo.gitdir, gitdir: repo.gitdir, filepath });
    await git.readCommit({ fs: repo.fs, gitdir: repo.gitdir, cache: repo.cache, oid });
    return { ...repo, stored: true };
  } catch {
    return undefined;
  }
}

/**
 * True for a failure reading a stored revision that means its pack lacks or garbles objects
 * (isomorphic-git's NotFoundError, InternalError "SHA check failed"...): the caller drops the
 * entry and fetches.
 */
export function brokenObjects(err: unknown): boolean {
  const code = (err as { code?: unknown } | undefined)?.code;
  return code === "NotFoundError" || code === "InternalError" || code === "ObjectTypeError";
}
