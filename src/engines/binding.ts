// The render engines in Cloudflare Workers: Kustomize runs in a second Worker (plumb-render,
// functions/render-worker.ts) reached through a service binding, because the engine (5 MB
// gzipped) does not fit beside the main Worker's 1 MiB budget. Helm does not run on Workers.
import {
  ENGINE_LOAD_TIMEOUT_MS,
  EngineError,
  RENDER_TIMEOUT_MS,
  type RenderEngines,
} from "../render/engine.ts";
import { COLD_HEADER, LOAD_APART_HEADER } from "./render-worker-headers.ts";
import { decodeKustomizeResponse, encodeKustomizeRequest } from "./wire.ts";

/** A service binding (Cloudflare's Fetcher), as far as plumb uses it. */
export interface ServiceBinding {
  fetch(input: string, init?: RequestInit): Promise<Response>;
}

export interface BindingEnginesOptions {
  /** Time limit of one render, ms, loading not included (default 10 000; PLUMB_RENDER_TIMEOUT). */
  timeoutMs?: number | undefined;
  /** Time limit of loading the engine in the render Worker, ms (default 60 000). */
  loadTimeoutMs?: number | undefined;
}

const seconds = (ms: number) => `${Number((ms / 1000).toFixed(3))}s`;

/**
 * Engines over the RENDER service binding: Kustomize only. POST /kustomize renders with a
 * loaded engine; an isolate without one answers 503 (COLD_HEADER), and POST /load loads it
 * under its own, longer limit before the render is sent again. A limit that passes is
 * EngineError("timeout") naming the part that ran out; the render Worker's own CPU limit
 * (wrangler.render.toml, limits.cpu_ms) stops a runaway build inside it.
 */
export function serviceBindingEngines(
  binding: ServiceBinding,
  options: BindingEnginesOptions = {},
): RenderEngines {
  const renderMs = options.timeoutMs ?? RENDER_TIMEOUT_MS;
  const loadMs = Math.max(options.loadTimeoutMs ?? ENGINE_LOAD_TIMEOUT_MS, renderMs);
  const post = async (path: string, body: string, ms: number, ranOut: () => string) => {
    const signal = AbortSignal.timeout(ms);
    let res: Response;
    try {
      res = await binding.fetch(`https://plumb-render${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", [LOAD_APART_HEADER]: "apart" },
        body,
        signal,
      });
      return { res, text: await res.text() };
    } catch (err) {
      if (signal.aborted) throw new EngineError("timeout", ranOut());
      throw new EngineError(
        "unavailable",
        `the render Worker failed: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
  };
  const refused = (what: string, res: Response, text: string) =>
    /exceeded (its )?(CPU|resource)/i.test(text)
      ? new EngineError(
          "timeout",
          `${what}: the render Worker ran out of CPU time (limits.cpu_ms in wrangler.render.toml)`,
        )
      : new EngineError(
          "unavailable",
          `${what}: the render Worker answered HTTP ${res.status}: ${text.slice(0, 300)}`,
        );
  return {
    async kustomize(request) {
      const body = encodeKustomizeRequest(request);
      // Cold isolates: load, then render; twice at most (the binding may reach another isolate).
      for (let loads = 0; ; loads++) {
        const { res, text } = await post(
          "/kustomize",
          body,
          renderMs,
          () =>
            `kustomize build did not finish within ${seconds(renderMs)} (the render's limit, PLUMB_RENDER_TIMEOUT; loading the engine is not counted)`,
        );
        if (res.status === 200) return decodeKustomizeResponse(text);
        if (res.status !== 503 || res.headers.get(COLD_HEADER) === null || loads === 2) {
          throw refused("kustomize build", res, text);
        }
        const load = await post(
          "/load",
          "",
          loadMs,
          () =>
            `the Kustomize engine did not load in the render Worker within ${seconds(loadMs)} (its start-up limit); the render did not start`,
        );
        if (load.res.status !== 200)
          throw refused("loading the Kustomize engine", load.res, load.text);
      }
    },
  };
}
