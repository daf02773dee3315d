// The render engines on Node: Kustomize and Helm as native helper processes (plumb-kustomize,
// plumb-helm, built from Go modules by scripts/build-engines.sh into dist/engines/). Each starts
// on the first render that needs it and serves every later render of the process.
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { ENGINE_LOAD_TIMEOUT_MS, RENDER_TIMEOUT_MS, type RenderEngines } from "../render/engine.ts";
import { HelperProcess, type HelperStats } from "./helper.ts";
import {
  decodeHelmResponse,
  decodeKustomizeResponse,
  encodeHelmRequest,
  encodeKustomizeRequest,
} from "./wire.ts";

export interface NodeEnginesOptions {
  /** Where the built engines are (default PLUMB_ENGINES_DIR, else dist/engines/ of this checkout). */
  dir?: string;
  /** Time limit of one render, ms, loading not included (default 10 000; PLUMB_RENDER_TIMEOUT). */
  timeoutMs?: number | undefined;
  /** Time limit of loading an engine, ms (default 60 000, and never under timeoutMs). */
  loadTimeoutMs?: number | undefined;
  /** Heap limit of each helper, MiB (default 1024): past it the render fails. */
  maxHeapMb?: number;
}

export type EngineName = "kustomize" | "helm";

export interface NodeEngines extends Required<RenderEngines> {
  /** Starts an engine without rendering (the benchmark's load time). @throws EngineError */
  load(engine: EngineName): Promise<void>;
  /** Stops the helper processes. */
  close(): Promise<void>;
  /** A helper's process id while it runs (for measurements). */
  pid(engine: EngineName): number | undefined;
  /** What each helper has done (loads, renders, the last load's and render's ms). */
  stats(): Record<EngineName, HelperStats>;
}

const BUILD_HINT = "run `npm run build:engines` (needs Go >= 1.26)";

/**
 * dist/engines/ of the checkout this module belongs to: the nearest directory above it that
 * holds package.json, whether it runs from src/engines/ or from the bundled CLI in dist/cli/.
 */
export function defaultEnginesDir(from: string = import.meta.url): string {
  let dir = dirname(fileURLToPath(from));
  for (;;) {
    if (existsSync(join(dir, "package.json"))) return join(dir, "dist", "engines");
    const up = dirname(dir);
    if (up === dir) return join(dirname(fileURLToPath(from)), "dist", "engines");
    dir = up;
  }
}

/** The Kustomize and Helm engines for this Node process; nothing starts until a render. */
export function createNodeEngines(options: NodeEnginesOptions = {}): NodeEngines {
  const dir = options.dir ?? (process.env["PLUMB_ENGINES_DIR"] || defaultEnginesDir());
  const renderTimeoutMs = options.timeoutMs ?? RENDER_TIMEOUT_MS;
  const loadTimeoutMs = Math.max(options.loadTimeoutMs ?? ENGINE_LOAD_TIMEOUT_MS, renderTimeoutMs);
  const env = { PLUMB_ENGINE_MAX_HEAP_MB: String(options.maxHeapMb ?? 1024) };
  const helper = (name: string, action: string, bin: string) =>
    new HelperProcess({
      name,
      action,
      command: join(dir, bin),
      env,
      renderTimeoutMs,
      loadTimeoutMs,
      notBuilt: `the ${name} engine is not built (no ${bin} in ${dir}): ${BUILD_HINT}`,
    });
  const helpers: Record<EngineName, HelperProcess> = {
    kustomize: helper("Kustomize", "kustomize build", "plumb-kustomize"),
    helm: helper("Helm", "helm template", "plumb-helm"),
  };
  return {
    async kustomize(request) {
      return decodeKustomizeResponse(
        await helpers.kustomize.render(encodeKustomizeRequest(request)),
      );
    },
    async helm(request) {
      return decodeHelmResponse(await helpers.helm.render(encodeHelmRequest(request)));
    },
    load: (engine) => helpers[engine].load(),
    async close() {
      await Promise.all([helpers.kustomize.stop(), helpers.helm.stop()]);
    },
    pid: (engine) => helpers[engine].pid(),
    stats: () => ({ kustomize: helpers.kustomize.stats(), helm: helpers.helm.stats() }),
  };
}
