import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { declaredSize } from "./blob-size.ts";

// A real repository written by the git CLI and packed by it: whole objects and deltas.
let dir: string;
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

const big = "x".repeat(5_000_000);
const v1 = Array.from({ length: 2000 }, (_, i) => `line ${i}: some text to share\n`).join("");
const v2 = `${v1}one more line\n`;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "blob-size-"));
  git("init", "-q", "-b", "main");
  writeFileSync(join(dir, "big.yaml"), big);
  writeFileSync(join(dir, "doc.yaml"), v1);
  git("add", ".");
  git("commit", "-q", "-m", "one");
  writeFileSync(join(dir, "doc.yaml"), v2);
  git("add", ".");
  git("commit", "-q", "-m", "two");
  git("repack", "-q", "-a", "-d", "-f", "--depth=10", "--window=10");
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("declaredSize", () => {
  it("reads the size of a whole object and of a delta from the pack, without inflating them", async () => {
    const gitdir = join(dir, ".git");
    const cache = {};
    const oid = (rev: string) => git("rev-parse", rev);
    const types = git("verify-pack", "-v", join(gitdir, "objects/pack", packName()));
    // One of the two versions of doc.yaml is stored as a delta of the other.
    expect(types).toMatch(
      new RegExp(`(${oid("HEAD:doc.yaml")}|${oid("HEAD~1:doc.yaml")}) blob +\\d+ \\d+ \\d+ 1 `),
    );
    expect(await declaredSize(fs, gitdir, cache, oid("HEAD:big.yaml"))).toBe(big.length);
    expect(await declaredSize(fs, gitdir, cache, oid("HEAD:doc.yaml"))).toBe(v2.length);
    expect(await declaredSize(fs, gitdir, cache, oid("HEAD~1:doc.yaml"))).toBe(v1.length);
    // Not in any pack: the caller reads the object as before.
    expect(await declaredSize(fs, gitdir, cache, "0".repeat(40))).toBeUndefined();
  });
});

function packName(): string {
  const name = fs.readdirSync(join(dir, ".git/objects/pack")).find((n) => n.endsWith(".pack"));
  if (!name) throw new Error("no pack");
  return name;
}
