// The `plumb` bin (functions/plumb.mjs): runs the bundle, rebuilt when a source it came from
// changes, so a fresh clone and an edited tree both run the current code.
import { execFile } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { promisify } from "node:util";
import { crc32 } from "node:zlib";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "..");
const BIN = join(ROOT, "functions/plumb.mjs");
const MANIFEST = join(ROOT, "dist/cli/manifest.json");
const run = promisify(execFile);

/** The code cache of `command` in the current build (functions/plumb.mjs). */
const cacheOf = (command: string) =>
  join(ROOT, "dist/cli", dirname(manifest().entry), "code-cache", `${command}.bin`);

/**
 * A code cache file's parts: its key line, and whether the rest is whole (the length and
 * CRC-32 it records match V8's data after it).
 */
function parseCache(file: string): { key: string; whole: boolean } {
  const buf = readFileSync(file);
  const end = buf.indexOf(10) + 1;
  const data = buf.subarray(end + 8);
  return {
    key: buf.subarray(0, end).toString("latin1"),
    whole: data.length === buf.readUInt32LE(end) && crc32(data) === buf.readUInt32LE(end + 4),
  };
}

const manifest = () =>
  JSON.parse(readFileSync(MANIFEST, "utf8")) as {
    entry: string;
    inputs: Record<string, [number, number]>;
  };

describe("functions/plumb.mjs", () => {
  it("runs the bundled CLI and rebuilds it when a source changes", async () => {
    const help = await run(process.execPath, [BIN, "--help"]);
    expect(help.stdout).toMatch(/^usage:\n {2}plumb reconcile \[NAMESPACE\/\]NAME/);
    const first = manifest();
    expect(Object.keys(first.inputs)).toEqual(
      expect.arrayContaining([
        "functions/cli.ts",
        "functions/cli-args.ts",
        "src/kube/node-transport.ts",
        "node_modules/.package-lock.json",
      ]),
    );
    // Unchanged sources: the same build runs again.
    await run(process.execPath, [BIN, "--help"]);
    expect(manifest().entry).toBe(first.entry);
    // An edited source (a new mtime): a new build.
    const file = join(ROOT, "functions/cli-args.ts");
    const { atime, mtime } = statSync(file);
    utimesSync(file, atime, new Date(mtime.getTime() + 1000));
    try {
      const usage = await run(process.execPath, [BIN, "bogus"]).catch((e) => e);
      expect(usage.code).toBe(2);
      expect(usage.stderr).toMatch(/^plumb: unknown command "bogus"\nusage:/);
      expect(manifest().entry).not.toBe(first.entry);
    } finally {
      utimesSync(file, atime, mtime);
    }
  });

  it("keeps a V8 code cache per command beside the bundle, and replaces one V8 rejects", async () => {
    await run(process.execPath, [BIN, "--help"]);
    const cache = join(ROOT, "dist/cli", dirname(manifest().entry), "code-cache", "other.bin");
    rmSync(cache, { force: true });
    // A usage error (exit 2) writes no cache: it would hold little of a real run's code.
    const usage = await run(process.execPath, [BIN, "bogus"]).catch((e) => e);
    expect(usage.code).toBe(2);
    expect(existsSync(cache)).toBe(false);
    await run(process.execPath, [BIN, "--help"]);
    const made = readFileSync(cache);
    expect(made.length).toBeGreaterThan(1000);
    // Kept as it is while V8 accepts it.
    await run(process.execPath, [BIN, "--help"]);
    expect(readFileSync(cache).equals(made)).toBe(true);
    // Garbage in its place: V8 rejects it, the run still works and writes a good one.
    writeFileSync(cache, Buffer.alloc(made.length, 7));
    const help = await run(process.execPath, [BIN, "--help"]);
    expect(help.stdout).toMatch(/^usage:\n/);
    const again = readFileSync(cache);
    expect(again.equals(Buffer.alloc(made.length, 7))).toBe(false);
    expect(again.length).toBeGreaterThan(1000);
  });

  it("never hands V8 a truncated or damaged cache: the run works and a whole one replaces it", async () => {
    await run(process.execPath, [BIN, "--help"]);
    const cache = cacheOf("other");
    rmSync(cache, { force: true });
    await run(process.execPath, [BIN, "--help"]);
    const made = readFileSync(cache);
    expect(parseCache(cache)).toEqual({
      key: expect.stringMatching(/^plumb-code-cache 1 v24\./),
      whole: true,
    });
    // Half of the file (a disk filled while another run wrote it elsewhere, a copy cut short);
    // then one word changed in the middle of V8's data: V8 would take it and crash (a release
    // build checks no checksum of its data).
    const damaged = Buffer.from(made);
    damaged.writeUInt32LE(0xa55aa55a, Math.floor(made.length / 3));
    for (const bad of [made.subarray(0, made.length >> 1), damaged]) {
      writeFileSync(cache, bad);
      const help = await run(process.execPath, [BIN, "--help"]);
      expect(help.stdout).toMatch(/^usage:\n/);
      expect(readFileSync(cache).equals(bad)).toBe(false);
      expect(parseCache(cache)).toEqual({ key: parseCache(cache).key, whole: true });
      expect(readFileSync(cache).length).toBeGreaterThan(made.length / 2);
    }
  });

  it("does not use a cache made by another Node or under other V8 flags, and replaces it", async () => {
    await run(process.execPath, [BIN, "--help"]);
    const cache = cacheOf("other");
    rmSync(cache, { force: true });
    await run(process.execPath, [BIN, "--help"]);
    const ours = parseCache(cache).key;
    // V8's flags are part of its cache's version tag: --no-opt makes another tag.
    rmSync(cache, { force: true });
    await run(process.execPath, ["--no-opt", BIN, "--help"]);
    const other = parseCache(cache);
    expect(other.whole).toBe(true);
    expect(other.key).not.toBe(ours);
    const help = await run(process.execPath, [BIN, "--help"]);
    expect(help.stdout).toMatch(/^usage:\n/);
    expect(parseCache(cache)).toEqual({ key: ours, whole: true });
    // Another Node version named in the key (an upgrade in place): not used, replaced.
    const buf = readFileSync(cache);
    const renamed = Buffer.from(
      buf.toString("latin1").replace(/ v24\.\d+\.\d+ /, " v24.0.0-other "),
      "latin1",
    );
    expect(renamed.equals(buf)).toBe(false);
    writeFileSync(cache, renamed);
    await run(process.execPath, [BIN, "--help"]);
    expect(parseCache(cache)).toEqual({ key: ours, whole: true });
  });

  it("runs from a read-only install without a cache, writing nothing anywhere", async () => {
    await run(process.execPath, [BIN, "--help"]);
    const cache = cacheOf("other");
    rmSync(cache, { force: true });
    const dir = dirname(cache);
    const before = readdirSync(join(ROOT, "dist/cli")).sort();
    // Where a run might otherwise write (home, temp, XDG cache), open to anyone and empty.
    const home = mkdtempSync(join(tmpdir(), "plumb-ro-"));
    chmodSync(home, 0o777);
    // Root ignores file modes: run as nobody then (a global npm install run by a user).
    const asOther = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};
    chmodSync(dir, 0o555);
    try {
      const help = await run(process.execPath, [BIN, "--help"], {
        ...asOther,
        env: { ...process.env, HOME: home, TMPDIR: home, XDG_CACHE_HOME: home },
      });
      expect(help.stdout).toMatch(/^usage:\n/);
      expect(readdirSync(dir)).toEqual([]);
      expect(readdirSync(home)).toEqual([]);
      expect(readdirSync(join(ROOT, "dist/cli")).sort()).toEqual(before);
    } finally {
      chmodSync(dir, 0o755);
      rmSync(home, { recursive: true, force: true });
    }
    // Writable again: the next run makes the cache.
    await run(process.execPath, [BIN, "--help"]);
    expect(parseCache(cache).whole).toBe(true);
  });
});
