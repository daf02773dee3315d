// The Node RevisionStore: packs of fetched commits in a directory shared by every plumb
// process on the machine (a CronJob's runs, serve, manual runs), so a run on a revision
// already fetched downloads nothing but the ref advertisement.
import { createHash } from "node:crypto";
import {
  mkdir,
  readdir,
  readFile,
  rename,
  stat,
  unlink,
  utimes,
  writeFile,
} from "node:fs/promises";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import type { RevisionStore } from "./cache.ts";

const MiB = 1024 * 1024;
/** A temporary file older than this was left by a writer that died, ms. */
const STALE_TMP_MS = 10 * 60_000;

export interface DiskStoreOptions {
  /** The directory (created when missing; default defaultCacheDir()). */
  dir?: string;
  /** Bound on the summed size of the stored packs, bytes (default 256 MiB). */
  maxBytes?: number;
}

/**
 * The cache directory: $PLUMB_CACHE_DIR, else $XDG_CACHE_HOME/plumb/git (the XDG Base
 * Directory convention), else a per-user directory under the system's tmp dir.
 */
export function defaultCacheDir(env: Record<string, string | undefined> = process.env): string {
  if (env["PLUMB_CACHE_DIR"]) return env["PLUMB_CACHE_DIR"];
  if (env["XDG_CACHE_HOME"]) return join(env["XDG_CACHE_HOME"], "plumb", "git");
  let user = "user";
  try {
    user = String(userInfo().uid >= 0 ? userInfo().uid : userInfo().username);
  } catch {
    // No passwd entry (a container running under an arbitrary uid): one shared name.
  }
  return join(tmpdir(), `plumb-cache-${user}`, "git");
}

/**
 * A RevisionStore in `dir`: one file per key, named by the SHA-256 of the key (keys hold
 * credentials; the file name reveals none), holding the pack as the server sent it.
 * - get: a file whose pack fails its trailing SHA-1 checksum is deleted and is a miss; a hit
 *   refreshes the file's mtime (least recently used goes first).
 * - put: written to a unique temporary file, then renamed over the name (atomic on POSIX:
 *   concurrent writers of one key each rename a complete file; readers see one of them). Then,
 *   when the directory holds more than maxBytes, the least recently used packs are deleted
 *   until it fits. A pack larger than maxBytes is not stored.
 * Every file system error is a miss or a skipped write: the cache never fails a run.
 */
export function createDiskRevisionStore(options: DiskStoreOptions = {}): RevisionStore {
  const dir = options.dir ?? defaultCacheDir();
  const maxBytes = options.maxBytes ?? 256 * MiB;
  const file = (key: string) => join(dir, `${createHash("sha256").update(key).digest("hex")}.pack`);

  return {
    async get(key) {
      const path = file(key);
      let data: Buffer;
      try {
        data = await readFile(path);
      } catch {
        return undefined;
      }
      if (!checksumOk(data)) {
        await unlink(path).catch(() => {});
        return undefined;
      }
      const now = new Date();
      await utimes(path, now, now).catch(() => {});
      return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    },

    async put(key, pack) {
      if (pack.length > maxBytes) return;
      const path = file(key);
      const tmp = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
      try {
        await mkdir(dir, { recursive: true, mode: 0o700 });
        await writeFile(tmp, pack, { mode: 0o600 });
        await rename(tmp, path);
      } catch {
        await unlink(tmp).catch(() => {});
        return;
      }
      await prune(dir, maxBytes, path).catch(() => {});
    },

    async drop(key) {
      await unlink(file(key)).catch(() => {});
    },
  };
}

/** True when the last 20 bytes are the SHA-1 of the rest (a pack's trailer, git's pack format). */
function checksumOk(data: Buffer): boolean {
  if (data.length < 32 || data.toString("latin1", 0, 4) !== "PACK") return false;
  const sum = createHash("sha1").update(data.subarray(0, -20)).digest();
  return sum.equals(data.subarray(-20));
}

/** Deletes the least recently used packs (never `keep`) until the rest fit in maxBytes. */
async function prune(dir: string, maxBytes: number, keep: string): Promise<void> {
  const entries: Array<{ path: string; size: number; mtime: number }> = [];
  for (const name of await readdir(dir)) {
    const path = join(dir, name);
    const s = await stat(path).catch(() => undefined);
    if (!s?.isFile()) continue;
    if (name.endsWith(".tmp")) {
      if (Date.now() - s.mtimeMs > STALE_TMP_MS) await unlink(path).catch(() => {});
      continue;
    }
    if (name.endsWith(".pack")) entries.push({ path, size: s.size, mtime: s.mtimeMs });
  }
  let total = entries.reduce((n, e) => n + e.size, 0);
  entries.sort((a, b) => a.mtime - b.mtime);
  for (const e of entries) {
    if (total <= maxBytes) break;
    if (e.path === keep) continue;
    await unlink(e.path).catch(() => {});
    total -= e.size;
  }
}
