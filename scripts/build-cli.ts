// `npm run build`: bundles the CLI (functions/cli.ts) with esbuild into dist/cli/<build>/, so a
// run loads a few bundled files instead of hundreds of TypeScript modules (the fixed
// cost of a run). functions/plumb.mjs (the `plumb` bin) calls this when a source changed.
import { mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { isBuiltin } from "node:module";
import { join, relative, resolve } from "node:path";
import type { Plugin } from "esbuild";

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
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node24",
    external: ["@kubernetes/client-node"],
    plugins: [builtinsWithoutFacades],
    // CommonJS dependencies call require() for Node built-ins.
    banner: {
      js: 'const require = process.getBuiltinModule("node:module").createRequire(import.meta.url);',
    },
    metafile: true,
    legalComments: "none",
    logLevel: "silent",
  });
  // Our own files (not packages, not the plugin's virtual "node-builtin:" modules).
  const own = Object.keys(result.metafile.inputs).filter(
    (p) => !p.includes("node_modules/") && !/^[a-z-]+:/.test(p),
  );
  const inputs: Manifest["inputs"] = {};
  for (const p of [...own, DEPENDENCIES_STAMP, "package.json"]) {
    const s = statSync(join(ROOT, p), { throwIfNoEntry: false });
    // A file changed while the build ran: record it as stale, so the next run builds again.
    inputs[p] = s ? [s.mtimeMs >= started ? -1 : s.mtimeMs, s.size] : [-1, -1];
  }
  const manifest: Manifest = { entry: `${id}/cli.js`, inputs };
  const tmp = join(DIST, `manifest.${id}.tmp`);
  writeFileSync(tmp, `${JSON.stringify(manifest)}\n`);
  renameSync(tmp, join(DIST, "manifest.json"));
  removeOldBuilds(id);
  return manifest;
}

/**
 * Node built-ins through process.getBuiltinModule instead of ESM imports. An ESM import of a
 * built-in makes Node build its namespace from every export, running lazy getters: node:fs
 * loads its streams, node:http loads undici (~30 ms and 15 MiB). Each named import becomes one
 * property read, marked pure so esbuild drops the ones nothing uses. CommonJS require() calls
 * are left to the banner's require, which returns the same object without a namespace.
 */
const builtinsWithoutFacades: Plugin = {
  name: "builtins-without-facades",
  setup(b) {
    b.onResolve({ filter: /^(node:)?[a-z0-9_/]+$/ }, (args) => {
      // require() in CommonJS dependencies already gets the plain object (the banner's require).
      if (args.kind !== "import-statement" && args.kind !== "dynamic-import") return undefined;
      const id = args.path.startsWith("node:") ? args.path : `node:${args.path}`;
      return isBuiltin(id) ? { path: id, namespace: "node-builtin" } : undefined;
    });
    b.onLoad({ filter: /.*/, namespace: "node-builtin" }, (args) => {
      const mod = process.getBuiltinModule(args.path) as Record<string, unknown>;
      const names = Object.getOwnPropertyNames(mod).filter(
        (n) => /^[A-Za-z_$][\w$]*$/.test(n) && n !== "default",
      );
      const lines = [
        `const __builtin = process.getBuiltinModule(${JSON.stringify(args.path)});`,
        "const __pick = (k) => __builtin[k];",
        "export default __builtin;",
        ...names.map((n) => `export const ${n} = /* @__PURE__ */ __pick(${JSON.stringify(n)});`),
      ];
      return { contents: lines.join("\n"), loader: "js" };
    });
  },
};

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
