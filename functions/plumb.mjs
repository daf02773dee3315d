#!/usr/bin/env node
// The `plumb` executable (npm run plumb, the package's bin): runs the bundled CLI from dist/cli,
// building it first when it is missing or any file it was built from changed (scripts/
// build-cli.ts); runs functions/cli.ts from source when it cannot be built (no esbuild).
// Plain JavaScript on purpose: a .ts entry would load Node's TypeScript stripper on every run.
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import module from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import v8 from "node:v8";
import vm from "node:vm";
import { crc32 } from "node:zlib";

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

// A code cache file: the key (one line), then the data's length and CRC-32 (uint32 LE each),
// then V8's data. V8 checks its own version and flags but, in a release build, not its data:
// a damaged cache that V8 takes crashes the process (measured: fatal "unreachable code" and
// SIGSEGV on single damaged words), on every run until the file is removed. So the data is
// checked before V8 sees it, as Node's module compile cache does (a CRC-32 of each entry and
// of its source, keyed by Node's version and V8's cachedDataVersionTag).
const CODE_CACHE_MAGIC = "plumb-code-cache 1";

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
    // An older build's manifest (ES module chunks): build again.
    if (!manifest.entry.endsWith(".cjs")) return undefined;
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
// The sources (no esbuild), and what the bundle loads from node_modules: Node's module compile cache.
module.enableCompileCache?.(fileURLToPath(new URL("compile-cache/", dist)));
if (entry.pathname.endsWith(".cjs")) runBundle(fileURLToPath(entry));
else await import(entry.href);

/**
 * Runs the CommonJS bundle through vm.Script with a V8 code cache beside it
 * (<build>/code-cache/<command>.bin, one per command: each compiles other functions). The cache
 * is written when a run ends with exit code 0 and there was none usable (none, damaged, from
 * another Node, or V8 rejected it): made after the run, it holds every function the run
 * compiled, which Node's module compile cache (made before a module runs) does not. A build
 * directory's bundle never changes (a new build gets a new directory), so a cache cannot
 * outlive its source. A cache that cannot be read or written (a read-only install) costs only
 * the speed-up; nothing is written outside the build directory.
 * @param {string} file the bundle's path
 */
function runBundle(file) {
  const dir = dirname(file);
  const command = /^[a-z][a-z-]{0,31}$/.test(process.argv[2] ?? "") ? process.argv[2] : "other";
  const cacheFile = join(dir, "code-cache", `${command}.bin`);
  let source = readFileSync(file, "utf8");
  // A hashbang is valid only at the very start of a script: keep the length and lines.
  if (source.startsWith("#!")) source = `//${source.slice(2)}`;
  const wrapped = module.wrap(source);
  const key = cacheKey(wrapped);
  const cachedData = readCodeCache(cacheFile, key);
  const script = new vm.Script(wrapped, {
    filename: file,
    cachedData,
    importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  if (!cachedData || script.cachedDataRejected) {
    process.once("exit", (code) => {
      if (code !== 0) return;
      try {
        mkdirSync(dirname(cacheFile), { recursive: true });
        const tmp = `${cacheFile}.${process.pid}.tmp`;
        writeFileSync(tmp, codeCacheFile(key, script.createCachedData()));
        renameSync(tmp, cacheFile);
      } catch {
        // A read-only install: every run compiles, as without the cache.
      }
    });
  }
  const bundle = { exports: {} };
  script.runInThisContext()(bundle.exports, module.createRequire(file), bundle, file, dir);
}

/**
 * The line a code cache must start with to be handed to V8: this Node (version, architecture,
 * V8's version-and-flags tag) and the script (length and CRC-32 of its source).
 * @param {string} source the script's source
 * @returns {Buffer}
 */
function cacheKey(source) {
  const tag = v8.cachedDataVersionTag();
  return Buffer.from(
    `${CODE_CACHE_MAGIC} ${process.version} ${process.arch} ${tag} ${source.length} ${crc32(source)}\n`,
  );
}

/**
 * V8's data from `file` when the file is whole and made for `key`, else undefined (missing,
 * truncated, damaged, another Node or script).
 * @param {string} file
 * @param {Buffer} key
 * @returns {Buffer | undefined}
 */
function readCodeCache(file, key) {
  let buf;
  try {
    buf = readFileSync(file);
  } catch {
    return undefined;
  }
  const head = key.length + 8;
  if (buf.length < head || !buf.subarray(0, key.length).equals(key)) return undefined;
  const data = buf.subarray(head);
  if (data.length !== buf.readUInt32LE(key.length)) return undefined;
  if (crc32(data) !== buf.readUInt32LE(key.length + 4)) return undefined;
  return data;
}

/**
 * The bytes of a code cache file for V8's `data` made under `key`.
 * @param {Buffer} key
 * @param {Buffer} data
 * @returns {Buffer}
 */
function codeCacheFile(key, data) {
  const sizes = Buffer.alloc(8);
  sizes.writeUInt32LE(data.length, 0);
  sizes.writeUInt32LE(crc32(data), 4);
  return Buffer.concat([key, sizes, data]);
}
