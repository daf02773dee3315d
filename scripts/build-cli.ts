// `npm run build`: bundles the CLI (functions/cli.ts) with esbuild into dist/cli/<build>/cli.cjs,
// so a run loads one file instead of hundreds of TypeScript modules (the fixed cost of a run).
// functions/plumb.mjs (the `plumb` bin) calls this when a source changed.
import {
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join, relative, resolve } from "node:path";

export const ROOT = resolve(import.meta.dirname, "..");
export const DIST = join(ROOT, "dist/cli");
/** Changes whenever npm installs or removes a package (dependencies live in the bundle). */
const DEPENDENCIES_STAMP = "node_modules/.package-lock.json";
/** Build directories other than the current one are removed when older than this, ms. */
const KEEP_OLD_MS = 10 * 60_000;

/**
 * dist/cli/manifest.json: the build to run and what it was built from (path relative to the
 * repository → [mtimeMs, size]); the launcher rebuilds when any of them differs.
 */
export interface Manifest {
  entry: string;
  inputs: Record<string, [number, number]>;
}

/**
 * Builds the bundle and points dist/cli/manifest.json at it (written by rename: a concurrent
 * run reads the old or the new manifest, never half of one). @kubernetes/client-node stays
 * outside the bundle: it is loaded only for kubeconfigs with exec plugins or auth providers.
 * @returns the manifest written
 */
export async function buildCli(): Promise<Manifest> {
  const { build } = await import("esbuild");
  const started = Date.now();
  const id = `${started.toString(36)}-${process.pid}`;
  const outdir = join(DIST, id);
  mkdirSync(outdir, { recursive: true });
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: { cli: "functions/cli.ts" },
    outdir,
    // One CommonJS file, not ES modules: functions/plumb.mjs runs it through vm.Script, whose
    // code cache (made after a run, so it holds every function that run compiled) V8 can
    // take whole; Node's module compile cache holds only what is compiled eagerly.
    outExtension: { ".js": ".cjs" },
    bundle: true,
    format: "cjs",
    platform: "node",
    target: "node24",
    external: ["@kubernetes/client-node"],
    // import.meta has no CommonJS form: the bundle's own file URL (src/engines/node.ts finds
    // dist/engines/ from it).
    define: { "import.meta.url": "__plumb_bundle_url" },
    // Strict, as the ES module bundle before it was (every module of it ran in strict mode).
    banner: {
      js: '"use strict";\nvar __plumb_bundle_url = require("node:url").pathToFileURL(__filename).href;',
    },
    metafile: true,
    legalComments: "none",
    logLevel: "silent",
  });
  const bundle = join(outdir, "cli.cjs");
  writeFileSync(bundle, asciiOnly(readFileSync(bundle, "utf8")));
  // Our own files (not packages, not Node's built-ins).
  const own = Object.keys(result.metafile.inputs).filter(
    (p) => !p.includes("node_modules/") && !/^[a-z-]+:/.test(p),
  );
  const inputs: Manifest["inputs"] = {};
  // The build's own recipe too: a bundle of another shape when this file changes.
  for (const p of [...own, DEPENDENCIES_STAMP, "package.json", "scripts/build-cli.ts"]) {
    const s = statSync(join(ROOT, p), { throwIfNoEntry: false });
    // A file changed while the build ran: record it as stale, so the next run builds again.
    inputs[p] = s ? [s.mtimeMs >= started ? -1 : s.mtimeMs, s.size] : [-1, -1];
  }
  const manifest: Manifest = { entry: `${id}/cli.cjs`, inputs };
  const tmp = join(DIST, `manifest.${id}.tmp`);
  writeFileSync(tmp, `${JSON.stringify(manifest)}\n`);
  renameSync(tmp, join(DIST, "manifest.json"));
  removeOldBuilds(id);
  return manifest;
}

/**
 * `source` with every character above U+007F written as a `\uXXXX` escape (one per UTF-16 code
 * unit), so V8 holds the bundle as a one-byte string: a single non-ASCII character anywhere
 * makes the whole source two bytes per character (measured: 7.5 MB of heap instead of 3.75 MB
 * for the CLI, and the bin holds it twice while it wraps and checks it). esbuild already escapes
 * strings, templates and identifiers (its default `charset: "ascii"`); what it leaves are
 * comments, where the escape is only text, and regular expression literals, where `\uXXXX`
 * (and a pair of surrogate escapes, in a `u` expression) means the same character.
 * @param source the bundle as esbuild wrote it
 * @returns the same program in ASCII
 */
export function asciiOnly(source: string): string {
  return source.replace(
    /[\u0080-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

function removeOldBuilds(current: string): void {
  for (const name of readdirSync(DIST)) {
    if (name === current || name === "manifest.json") continue;
    const path = join(DIST, name);
    const s = statSync(path, { throwIfNoEntry: false });
    if (s && Date.now() - s.mtimeMs > KEEP_OLD_MS) rmSync(path, { recursive: true, force: true });
  }
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  const m = await buildCli();
  console.log(
    `${relative(ROOT, join(DIST, m.entry))}: built from ${Object.keys(m.inputs).length} files`,
  );
}
