#!/usr/bin/env node
// The `plumb` executable (npm run plumb, the package's bin): runs the bundled CLI from dist/cli,
// building it first when it is missing or any file it was built from changed (scripts/
// build-cli.ts); runs functions/cli.ts from source when it cannot be built (no esbuild).
// Plain JavaScript on purpose: a .ts entry would load Node's TypeScript stripper on every run.
import { readFileSync, statSync } from "node:fs";
import module from "node:module";
import { fileURLToPath } from "node:url";

// An older Node (20, 22) cannot run the CLI: say so, and how, instead of a stack trace.
const major = Number(process.versions.node.split(".")[0]);
if (major < 24) {
  process.stderr.write(
    `plumb: needs Node.js 24 or later, and this is ${process.version}.\n` +
      "Run it through npm, which uses the Node 24 that `npm install` put in node_modules/.bin:\n" +
      "  npm run plumb -- reconcile --all      (or: npx plumb reconcile --all)\n" +
      "or install Node.js 24 (https://nodejs.org).\n",
  );
  process.exit(1);
}

const root = new URL("../", import.meta.url);
const dist = new URL("dist/cli/", root);

/** The bundle's entry when the manifest's inputs are all unchanged, else undefined. */
function freshEntry() {
  let manifest;
  try {
    manifest = JSON.parse(readFileSync(new URL("manifest.json", dist), "utf8"));
  } catch {
    return undefined;
  }
  try {
    for (const [path, [mtime, size]] of Object.entries(manifest.inputs)) {
      const s = statSync(new URL(path, root), { throwIfNoEntry: false });
      if (!s || s.mtimeMs !== mtime || s.size !== size) return undefined;
    }
    return new URL(manifest.entry, dist);
  } catch {
    return undefined; // a manifest of another shape: build again
  }
}

let entry = freshEntry();
if (!entry) {
  try {
    const { buildCli } = await import("../scripts/build-cli.ts");
    entry = new URL((await buildCli()).entry, dist);
  } catch (err) {
    process.stderr.write(
      `plumb: running from source (the bundle could not be built: ${err instanceof Error ? err.message : String(err)})\n`,
    );
    entry = new URL("cli.ts", import.meta.url);
  }
}
// V8's compiled code for the bundle, kept beside it (Node's module compile cache): a run after
// the first skips most of the compile step (the fixed cost of a run). A container
// image that runs the CLI once while it is built ships the cache with it.
module.enableCompileCache?.(fileURLToPath(new URL("compile-cache/", dist)));
await import(entry.href);
