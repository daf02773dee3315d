import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { deflateSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PackObjectTooLarge, PackScanner, uploadPackReader } from "./pack-scan.ts";

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

  it("hands over a pack sent without side-band as it comes", () => {
    const body = concat([pkt("NAK\n"), big.pack]);
    const got: Uint8Array[] = [];
    const read = uploadPackReader((b) => got.push(b.slice()));
    for (let at = 0; at < body.length; at += 1000) read(body.subarray(at, at + 1000));
    expect(concat(got)).toEqual(big.pack);
  });
});
