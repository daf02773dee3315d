// The I/O around a results file: the commit a run measured, and `npm run bench -- --readme
// [file]`, which rewrites README.md's generated cost block from one results file.
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join, relative, resolve } from "node:path";
import { costBlock, newestResults, replaceCostBlock } from "./readme.ts";
import type { Results } from "./report.ts";

/**
 * The checkout at `root` as `git describe --always --dirty` prints it (an abbreviated commit,
 * "-dirty" when files differ from it); undefined when it is not a Git checkout.
 */
export function checkoutCommit(root: string): string | undefined {
  try {
    return execFileSync("git", ["describe", "--always", "--dirty"], {
      cwd: root,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
  } catch {
    return undefined;
  }
}

/**
 * `--readme [file]`: reads `file` (a path, or a name in bench/results) or else the newest
 * bench/results/*.json, writes its cost block into `<root>/README.md` between the markers and
 * returns the block. Throws naming what is missing (no results, no markers).
 * @returns the block written and the results file as the README names it
 */
export function writeReadme(root: string, named?: string): { block: string; source: string } {
  const dir = join(root, "bench/results");
  let file: string;
  if (named !== undefined) {
    file = existsSync(named) ? resolve(named) : join(dir, named);
    if (!existsSync(file)) throw new Error(`--readme: no results file ${named}`);
  } else {
    const newest = existsSync(dir) ? newestResults(readdirSync(dir)) : undefined;
    if (!newest) throw new Error("--readme: no results in bench/results (run `npm run bench`)");
    file = join(dir, newest);
  }
  const rel = relative(root, file);
  // A file outside the checkout is named by its name alone (no machine path in the README).
  const source = rel.startsWith("..") ? basename(file) : rel;
  const results = JSON.parse(readFileSync(file, "utf8")) as Results;
  const block = costBlock(results, source);
  const readme = join(root, "README.md");
  writeFileSync(readme, replaceCostBlock(readFileSync(readme, "utf8"), block));
  return { block, source };
}
