import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { deflateSync, inflateSync } from "node:zlib";
import git from "isomorphic-git";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repositoryFromPack } from "./cache.ts";
import {
  PackObjectTooLarge,
  PackScanner,
  placeholderEntry,
  uploadPackFilter,
  uploadPackReader,
} from "./pack-scan.ts";

// Real packs written by the git CLI: one with a 5 MB compressible blob, one where the older of
// two versions of a file is stored as a delta of the newer (git keeps the newest whole).
const dirs: string[] = [];
function repo(commits: Array<Record<string, string>>): { pack: Uint8Array; verify: string } {
  const dir = mkdtempSync(join(tmpdir(), "pack-scan-"));
  dirs.push(dir);
  const git = (...args: string[]) =>
    execFileSync("git", ["-C", dir, ...args], {
      encoding: "utf8",
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: "t",
        GIT_AUTHOR_EMAIL: "t@example.com",
        GIT_COMMITTER_NAME: "t",
        GIT_COMMITTER_EMAIL: "t@example.com",
      },
    }).trim();
  git("init", "-q", "-b", "main");
  for (const files of commits) {
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    git("add", ".");
    git("commit", "-q", "-m", "c");
  }
  git("repack", "-q", "-a", "-d", "-f", "--depth=10", "--window=10");
  const packDir = join(dir, ".git/objects/pack");
  const name = readdirSync(packDir).find((n) => n.endsWith(".pack")) as string;
  return {
    pack: new Uint8Array(readFileSync(join(packDir, name))),
    verify: git("verify-pack", "-v", join(packDir, name)),
  };
}

const BIG = 5_000_000;
const long = Array.from({ length: 3000 }, (_, i) => `line ${i}: some text to share\n`).join("");
const short = long.slice(0, long.length - 2000);

let big: ReturnType<typeof repo>;
let delta: ReturnType<typeof repo>;
beforeAll(() => {
  big = repo([{ "big.yaml": "x".repeat(BIG), "small.yaml": "a: 1\n" }]);
  delta = repo([{ "doc.yaml": long }, { "doc.yaml": short }]);
});
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** The number of objects verify-pack lists (lines "<oid> <type> <size> ..."). */
const objectCount = (verify: string) =>
  verify.split("\n").filter((l) => /^[0-9a-f]{40} (commit|tree|blob|tag) /.test(l)).length;

/** `bytes` pushed in pieces of `size` bytes. */
function scanInPieces(scanner: PackScanner, bytes: Uint8Array, size: number): void {
  for (let at = 0; at < bytes.length; at += size) scanner.push(bytes.subarray(at, at + size));
}

describe("PackScanner", () => {
  it("reads every object of a pack and the size of the largest, in any piece size", () => {
    for (const size of [1 << 20, 4096, 7, 1]) {
      const scanner = new PackScanner(BIG);
      scanInPieces(scanner, big.pack, size);
      expect(scanner.objects).toBe(objectCount(big.verify));
      expect(scanner.largest).toBe(BIG);
    }
  });

  it("refuses a whole object over the cap from its entry header, before inflating it", () => {
    const scanner = new PackScanner(BIG - 1);
    let thrown: unknown;
    try {
      scanner.push(big.pack);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(PackObjectTooLarge);
    expect(thrown).toMatchObject({ type: "blob", bytes: BIG, cap: BIG - 1 });
  });

  it("reads a pack whose objects include a delta (as the git CLI writes it)", () => {
    // git keeps the larger version whole and stores the other as a delta of it (depth 1).
    expect(delta.verify).toMatch(/^[0-9a-f]{40} blob +\d+ \d+ \d+ 1 [0-9a-f]{40}$/m);
    const scanner = new PackScanner(long.length);
    scanner.push(delta.pack);
    expect(scanner.objects).toBe(objectCount(delta.verify));
    expect(scanner.largest).toBe(long.length);
  });

  it("refuses a delta whose result is over the cap, though the delta itself is small", () => {
    // A pack by hand: a 1-byte blob, then an OFS_DELTA on it whose header declares a result of
    // 10,000,000 bytes (base size 1, result size, one copy instruction): 6 bytes of delta.
    const varint = (n: number) => {
      const out: number[] = [];
      do {
        out.push((n & 0x7f) | (n >= 0x80 ? 0x80 : 0));
        n = Math.floor(n / 128);
      } while (n > 0);
      return out;
    };
    const deltaData = new Uint8Array([...varint(1), ...varint(10_000_000), 0x90, 0x01]);
    const blob = [0x31, ...deflateSync(Buffer.from("a"))];
    const ofsDelta = [0x60 | deltaData.length, blob.length, ...deflateSync(deltaData)];
    const pack = new Uint8Array([
      ...new TextEncoder().encode("PACK"),
      0,
      0,
      0,
      2,
      0,
      0,
      0,
      2,
      ...blob,
      ...ofsDelta,
      ...new Uint8Array(20),
    ]);
    const fits = new PackScanner(10_000_000);
    fits.push(pack);
    expect(fits.objects).toBe(2);
    expect(() => new PackScanner(9_999_999).push(pack)).toThrow(
      new PackObjectTooLarge("ofs-delta", 10_000_000, 9_999_999),
    );
  });
});

/** The pack `scanner` writes (skip mode) from `bytes` pushed in pieces of `size` bytes. */
function skipInPieces(cap: number, bytes: Uint8Array, size: number) {
  const out: Uint8Array[] = [];
  const scanner = new PackScanner(cap, { skip: true, out: (b) => out.push(b) });
  scanInPieces(scanner, bytes, size);
  return { scanner, pack: concat(out) };
}

/** What `git index-pack` and `git verify-pack` (the git CLI) make of `pack`. */
function gitVerify(pack: Uint8Array): string {
  const dir = mkdtempSync(join(tmpdir(), "pack-skip-"));
  dirs.push(dir);
  const file = join(dir, "p.pack");
  writeFileSync(file, pack);
  execFileSync("git", ["index-pack", file], { encoding: "utf8" });
  return execFileSync("git", ["verify-pack", "-v", file], { encoding: "utf8" });
}

/** "<oid> <type> <size>" of every object verify-pack lists. */
const listed = (verify: string) =>
  verify
    .split("\n")
    .map((l) => /^([0-9a-f]{40}) (commit|tree|blob|tag) +(\d+)/.exec(l))
    .filter((m) => m !== null)
    .map((m) => `${m[1]} ${m[2]} ${m[3]}`);

describe("PackScanner, skip mode", () => {
  it("replaces a blob over the cap by a placeholder of the same length that git itself reads", () => {
    const bigOid = listed(big.verify)
      .find((l) => l.endsWith(` blob ${BIG}`))
      ?.split(" ")[0];
    expect(bigOid).toMatch(/^[0-9a-f]{40}$/);
    const first = skipInPieces(BIG - 1, big.pack, 1 << 20);
    expect(first.pack.length).toBe(big.pack.length);
    expect(first.scanner.skipped).toEqual([
      { oid: bigOid, type: "blob", bytes: BIG, baseSkipped: false },
    ]);
    // Every other object is the same; the big blob is now a blob of a few zero bytes, and the
    // pack's trailing checksum is right (index-pack checks it).
    const after = listed(gitVerify(first.pack));
    const before = listed(big.verify);
    expect(after.filter((l) => !l.endsWith(` blob ${BIG}`))).toEqual(
      expect.arrayContaining(before.filter((l) => !l.endsWith(` blob ${BIG}`))),
    );
    expect(after).toHaveLength(before.length);
    expect(after.some((l) => l.startsWith(bigOid as string))).toBe(false);
    for (const size of [4096, 7, 1]) {
      expect(skipInPieces(BIG - 1, big.pack, size).pack).toEqual(first.pack);
    }
    // Under the cap nothing changes, byte for byte.
    expect(skipInPieces(BIG, big.pack, 4096).pack).toEqual(big.pack);
  });

  it("skips a delta over the cap and a delta of a skipped base; isomorphic-git indexes the rest", async () => {
    const { scanner, pack } = skipInPieces(long.length - 1, delta.pack, 333);
    expect(scanner.skipped).toEqual([
      expect.objectContaining({ type: "blob", bytes: long.length, baseSkipped: false }),
      expect.objectContaining({ oid: undefined, type: "ofs-delta", baseSkipped: true }),
    ]);
    expect(listed(gitVerify(pack))).toHaveLength(objectCount(delta.verify));
    const head = /^([0-9a-f]{40}) commit/m.exec(delta.verify)?.[1] as string;
    const repo = await repositoryFromPack(pack, head);
    expect(repo).toBeDefined();
    const { commit } = await git.readCommit({ ...(repo as NonNullable<typeof repo>), oid: head });
    expect(commit.tree).toMatch(/^[0-9a-f]{40}$/);
  });

  it("still refuses a tree over the cap", () => {
    const out: Uint8Array[] = [];
    const scanner = new PackScanner(10, { skip: true, out: (b) => out.push(b) });
    expect(() => scanner.push(big.pack)).toThrow(PackObjectTooLarge);
  });
});

describe("placeholderEntry", () => {
  it("is exactly the length asked for and inflates to 1 to 5 zero bytes", () => {
    for (const data of [9, 10, 11, 12, 13, 14, 100, 65_537]) {
      for (const header of [1, 2, 4, 21]) {
        const entry = placeholderEntry(header, data) as Uint8Array;
        expect(entry.length).toBe(header + data);
        const first = entry[0] as number;
        const n = first & 0x0f;
        expect(first >> 4).toBe(header > 1 ? 0xb : 0x3);
        // zlib itself checks the stream and its Adler-32.
        expect(new Uint8Array(inflateSync(entry.subarray(header)))).toEqual(new Uint8Array(n));
        expect(n).toBeGreaterThanOrEqual(1);
        expect(n).toBeLessThanOrEqual(5);
      }
    }
    expect(placeholderEntry(1, 8)).toBeUndefined();
  });
});

/** A pkt-line of `payload` (length in 4 hex digits, header included). */
function pkt(payload: Uint8Array | string): Uint8Array {
  const body = typeof payload === "string" ? new TextEncoder().encode(payload) : payload;
  const out = new Uint8Array(body.length + 4);
  out.set(new TextEncoder().encode((body.length + 4).toString(16).padStart(4, "0")));
  out.set(body, 4);
  return out;
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

describe("uploadPackReader", () => {
  it("hands the scanner the pack of a side-band-64k response and skips the rest", () => {
    const parts = [
      pkt("shallow 0123456789012345678901234567890123456789\n"),
      new TextEncoder().encode("0000"),
      pkt("NAK\n"),
    ];
    for (let at = 0; at < big.pack.length; at += 65515) {
      parts.push(pkt(new Uint8Array([2, ...new TextEncoder().encode("Counting objects\r")])));
      parts.push(pkt(concat([new Uint8Array([1]), big.pack.subarray(at, at + 65515)])));
    }
    parts.push(new TextEncoder().encode("0000"));
    const body = concat(parts);
    for (const size of [100_000, 333, 3]) {
      const got: Uint8Array[] = [];
      const read = uploadPackReader((b) => got.push(b.slice()));
      for (let at = 0; at < body.length; at += size) read(body.subarray(at, at + size));
      expect(concat(got)).toEqual(big.pack);
    }
  });

  it("a filter passes the protocol's lines and the progress channel, the pack as replaced", () => {
    const parts = [pkt("NAK\n")];
    for (let at = 0; at < big.pack.length; at += 65515) {
      parts.push(pkt(new Uint8Array([2, ...new TextEncoder().encode("Counting\r")])));
      parts.push(pkt(concat([new Uint8Array([1]), big.pack.subarray(at, at + 65515)])));
    }
    parts.push(new TextEncoder().encode("0000"));
    const body = concat(parts);
    const filtered: Uint8Array[] = [];
    const filter = uploadPackFilter((b) => [b.map((x) => x ^ 0xff)]);
    for (let at = 0; at < body.length; at += 5000)
      filtered.push(...filter(body.subarray(at, at + 5000)));
    // Read back: the same lines in the same order, each pack byte inverted.
    const got: Uint8Array[] = [];
    uploadPackReader((b) => got.push(b.slice()))(concat(filtered));
    expect(concat(got)).toEqual(big.pack.map((x) => x ^ 0xff));
    const text = new TextDecoder("latin1").decode(concat(filtered));
    expect(text.startsWith("0008NAK\n")).toBe(true);
    expect(text.endsWith("0000")).toBe(true);
    expect(text.split("Counting").length - 1).toBe(Math.ceil(big.pack.length / 65515));
  });

  it("hands over a pack sent without side-band as it comes", () => {
    const body = concat([pkt("NAK\n"), big.pack]);
    const got: Uint8Array[] = [];
    const read = uploadPackReader((b) => got.push(b.slice()));
    for (let at = 0; at < body.length; at += 1000) read(body.subarray(at, at + 1000));
    expect(concat(got)).toEqual(big.pack);
  });
});
