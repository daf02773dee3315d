// The `plumb` bin (functions/plumb.mjs): runs the bundle, rebuilt when a source it came from
// changes, so a fresh clone and an edited tree both run the current code.
import { execFile } from "node:child_process";
import { readFileSync, statSync, utimesSync } from "node:fs";
import { join, resolve } from "node:path";
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
});
