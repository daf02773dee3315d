// The render engines in Cloudflare Workers: Kustomize runs in a second Worker (plumb-render,
// functions/render-worker.ts) reached through a service binding, because the engine (5 MB
// gzipped) does not fit beside the main Worker's 1 MiB budget. Helm does not run on Workers.
import { EngineError, RENDER_TIMEOUT_MS, type RenderEngines } from "../engine.ts";
import { decodeKustomizeResponse, encodeKustomizeRequest } from "./wire.ts";

/** A service binding (Cloudflare's Fetcher), as far as plumb uses it. */
export interface ServiceBinding {
  fetch(input: string, init?: RequestInit): Promise<Response>;
}

/**
 * Engines over the RENDER service binding: kustomize only. The render Worker answers
 * POST /kustomize with the engine's JSON. A render that takes longer than `timeoutMs` (plus
 * the engine's load) fails with EngineError("timeout"); the render Worker's own CPU limit
 * (wrangler.render.toml, limits.cpu_ms) stops the engine itself.
 */
export function serviceBindingEngines(
  binding: ServiceBinding,
  timeoutMs = RENDER_TIMEOUT_MS,
): RenderEngines {
  return {
    async kustomize(request) {
      const signal = AbortSignal.timeout(timeoutMs + 5_000);
      let res: Response;
      try {
        res = await binding.fetch("https://plumb-render/kustomize", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: encodeKustomizeRequest(request),
          signal,
        });
      } catch (err) {
        if (signal.aborted) {
          throw new EngineError(
            "timeout",
            `kustomize build did not finish within ${timeoutMs / 1000}s`,
          );
        }
        throw new EngineError(
          "unavailable",
          `the render Worker failed: ${err instanceof Error ? err.message : String(err)}`,
        );
      }
      const text = await res.text();
      if (res.status !== 200) {
        throw new EngineError(
          "unavailable",
          `the render Worker answered HTTP ${res.status}: ${text.slice(0, 300)}`,
        );
      }
      return decodeKustomizeResponse(text);
    },
  };
}
