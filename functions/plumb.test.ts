// The `plumb` bin (functions/plumb.mjs): runs the bundle, rebuilt when a source it came from
// changes, so a fresh clone and an edited tree both run the current code.
import { execFile } from "node:child_process";
import { existsSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "..");
const BIN = join(ROOT, "functions/plumb.mjs");
const MANIFEST = join(ROOT, "dist/cli/manifest.json");
const run = promisify(execFile);

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
});
