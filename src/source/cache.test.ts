// The disk cache of fetched commits: hit, miss, corrupt and poisoned entries, concurrent
// writers and the size bound, on a real git http-backend.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type GitServer, startGitServer, type TestRepo } from "../../test/support/git-server.ts";
import type { GitSource } from "../app/index.ts";
import { createDiskRevisionStore, defaultCacheDir } from "./cache-disk.ts";
import { createGitPort } from "./git.ts";

let server: GitServer;
let repo: TestRepo;
let dirs: string[] = [];
beforeAll(async () => {
  server = await startGitServer();
  repo = await server.createRepo("cache", { "cm.yaml": "kind: ConfigMap\nv: 1\n" });
});
afterAll(async () => {
  await server.stop();
});
afterEach(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs = [];
});

function cacheDir(): string {
  const d = mkdtempSync(join(tmpdir(), "plumb-cache-test-"));
  dirs.push(d);
  return d;
}
const src = (ref = "main"): GitSource => ({ url: repo.url, ref, path: "." });
/** A fresh port (a new process) over the cache in `dir`. */
const portOn = (dir: string, maxBytes?: number) =>
  createGitPort({ store: createDiskRevisionStore({ dir, ...(maxBytes ? { maxBytes } : {}) }) });
/** The upload-pack POSTs (fetches) among the requests since `from`. */
const fetchesSince = (from: number) =>
  server.requests.slice(from).filter((r) => r.startsWith("POST") && r.includes("git-upload-pack"))
    .length;
const packs = (dir: string) => readdirSync(dir).filter((n) => n.endsWith(".pack"));

describe("disk cache of fetched commits", () => {
  it("a miss fetches and stores the pack; a second process reads it without a fetch", async () => {
    const dir = cacheDir();
    const commit = await repo.head();
    let from = server.requests.length;
    const first = await portOn(dir).fetch(src(), commit, undefined);
    expect(first.map((f) => f.path)).toEqual(["cm.yaml"]);
    expect(fetchesSince(from)).toBe(1);
    expect(packs(dir)).toHaveLength(1);

    from = server.requests.length;
    const second = await portOn(dir).fetch(src(), commit, undefined);
    expect(second).toEqual(first);
    expect(server.requests.length - from).toBe(0);
  });

  it("stores no credentials: the file name is a hash and the file holds only the pack", async () => {
    const dir = cacheDir();
    const commit = await repo.head();
    await portOn(dir).fetch(src(), commit, { token: "secret-token-123" });
    const [name] = packs(dir);
    expect(name).toMatch(/^[0-9a-f]{64}\.pack$/);
    const bytes = readFileSync(join(dir, name!));
    expect(bytes.toString("latin1", 0, 4)).toBe("PACK");
    expect(bytes.includes("secret-token-123")).toBe(false);
  });

  it("keys by credentials: other credentials on the same commit fetch again", async () => {
    const dir = cacheDir();
    const commit = await repo.head();
    await portOn(dir).fetch(src(), commit, { token: "one" });
    const from = server.requests.length;
    await portOn(dir).fetch(src(), commit, { token: "two" });
    expect(fetchesSince(from)).toBe(1);
    expect(packs(dir)).toHaveLength(2);
  });

  it("a corrupt entry (a flipped byte, a truncated file) is a miss: dropped and fetched again", async () => {
    for (const damage of [
      (b: Buffer) => {
        b[Math.floor(b.length / 2)]! ^= 0xff;
        return b;
      },
      (b: Buffer) => b.subarray(0, b.length - 7),
    ]) {
      const dir = cacheDir();
      const commit = await repo.head();
      const good = await portOn(dir).fetch(src(), commit, undefined);
      const [name] = packs(dir);
      writeFileSync(join(dir, name!), damage(readFileSync(join(dir, name!))));
      const from = server.requests.length;
      expect(await portOn(dir).fetch(src(), commit, undefined)).toEqual(good);
      expect(fetchesSince(from)).toBe(1);
      // Stored again, whole: the next process reads it without a fetch.
      const again = server.requests.length;
      expect(await portOn(dir).fetch(src(), commit, undefined)).toEqual(good);
      expect(server.requests.length - again).toBe(0);
    }
  });

  it("a poisoned entry (a valid pack of another commit under this key) is never read", async () => {
    const dir = cacheDir();
    const old = await repo.head();
    await portOn(dir).fetch(src(), old, undefined);
    const [oldName] = packs(dir);
    const next = await repo.commit({ "cm.yaml": "kind: ConfigMap\nv: 2\n" });
    const want = await portOn(dir).fetch(src(), next, undefined);
    const nextName = packs(dir).find((n) => n !== oldName)!;
    // The old commit's pack (its checksum is right) put under the new commit's key.
    writeFileSync(join(dir, nextName), readFileSync(join(dir, oldName!)));
    const from = server.requests.length;
    const got = await portOn(dir).fetch(src(), next, undefined);
    expect(got).toEqual(want);
    expect(got[0]!.content).toContain("v: 2");
    expect(fetchesSince(from)).toBe(1);
  });

  it("concurrent writers of one key leave one whole pack and no temporary files", async () => {
    const dir = cacheDir();
    const commit = await repo.head();
    const results = await Promise.all(
      Array.from({ length: 4 }, () => portOn(dir).fetch(src(), commit, undefined)),
    );
    for (const r of results) expect(r).toEqual(results[0]);
    expect(readdirSync(dir)).toEqual(packs(dir));
    expect(packs(dir)).toHaveLength(1);
    const from = server.requests.length;
    expect(await portOn(dir).fetch(src(), commit, undefined)).toEqual(results[0]);
    expect(server.requests.length - from).toBe(0);
  });

  it("keeps the directory within its size bound, dropping the least recently used pack", async () => {
    const probe = cacheDir();
    const a = await repo.head();
    await portOn(probe).fetch(src(), a, undefined);
    const size = readFileSync(join(probe, packs(probe)[0]!)).length;
    // Room for two packs of about this size, not three.
    const dir = cacheDir();
    const bound = Math.floor(size * 2.5);
    const b = await repo.commit({ "cm.yaml": "kind: ConfigMap\nv: 3\n" });
    const c = await repo.commit({ "cm.yaml": "kind: ConfigMap\nv: 4\n" });
    await portOn(dir, bound).fetch(src(), a, undefined);
    await new Promise((r) => setTimeout(r, 20)); // distinct mtimes
    await portOn(dir, bound).fetch(src(), b, undefined);
    await new Promise((r) => setTimeout(r, 20));
    await portOn(dir, bound).fetch(src(), c, undefined);
    expect(packs(dir)).toHaveLength(2);
    const total = packs(dir).reduce((n, p) => n + readFileSync(join(dir, p)).length, 0);
    expect(total).toBeLessThanOrEqual(bound);
    // a went first: it is fetched again, c is not.
    let from = server.requests.length;
    await portOn(dir, bound).fetch(src(), c, undefined);
    expect(fetchesSince(from)).toBe(0);
    from = server.requests.length;
    await portOn(dir, bound).fetch(src(), a, undefined);
    expect(fetchesSince(from)).toBe(1);
  });

  it("resolve still asks the server every time (ls-refs), cache or not", async () => {
    const dir = cacheDir();
    const from = server.requests.length;
    const tip = await portOn(dir).resolve(src(), undefined);
    expect(tip).toBe(await repo.head());
    expect(server.requests.slice(from).some((r) => r.includes("git-upload-pack"))).toBe(true);
  });

  it("the directory: PLUMB_CACHE_DIR, else XDG_CACHE_HOME/plumb/git, else under tmp", () => {
    expect(defaultCacheDir({ PLUMB_CACHE_DIR: "/c", XDG_CACHE_HOME: "/x" })).toBe("/c");
    expect(defaultCacheDir({ XDG_CACHE_HOME: "/x" })).toBe("/x/plumb/git");
    expect(defaultCacheDir({})).toMatch(
      new RegExp(
        `^${tmpdir().replace(/[/\\]/g, "[/\\\\]")}[/\\\\]plumb-cache-[^/\\\\]+[/\\\\]git$`,
      ),
    );
  });
});
