// Kustomize overlays and Helm charts to parsed objects through the injected engines.
// The loop's only contact with the engines; what goes in and out is built in src/render.
import type { AppSpec } from "../app/index.ts";
import { err, FailureReason, type Issue, type Result, runBudget } from "../core/index.ts";
import type { Failure } from "../plan/index.ts";
import {
  EngineError,
  type HelmContext,
  type HelmRequest,
  helmRequestFromArchive,
  helmRequestFromRepo,
  kustomizeRequest,
  lookupEnabled,
  type ParsedObject,
  parseHelmOutput,
  parseKustomizeOutput,
  postRenderedObjects,
  postRenderRequest,
  postRenderStreams,
  type RenderEngines,
} from "../render/index.ts";
import type { RunContext } from "./context.ts";
import { renderHelm } from "./helm-lookup.ts";
import type { FetchedSource } from "./ports.ts";

/** The condition message of a Helm source where no Helm engine runs (Cloudflare Workers). */
export const HELM_NEEDS_NODE =
  "Helm charts need the Node runtime: Helm's engine does not fit a Cloudflare Worker (81 MB of WebAssembly, 225 MB of memory; a Worker has 10 MB and 128 MB). Run this App with plumb on Node (plumb reconcile or plumb serve); Kustomize and plain manifests work on both.";

/** What an engine renders: a Kustomize or Helm directory of a repository, or a packaged chart. */
export type EngineSource =
  | Extract<FetchedSource, { kind: "kustomize" | "helm" }>
  | { kind: "chart"; archive: Uint8Array };

/**
 * Renders `source` with the runtime's engine (ctx.ports.engines). The engine's own error (with
 * the file and line it gives), a missing engine or values file: an error with the issues (code
 * RenderError, or InvalidSpec for a spec value no commit can fix), so the caller neither
 * applies nor prunes. Throws when the engine could not run (EngineError, transient: not built,
 * crashed, timed out; its message prefixed with the path), for engineFailure to map, and what
 * the ports throw (KubeApiError).
 */
export async function renderWithEngine(
  ctx: RunContext,
  spec: AppSpec,
  source: EngineSource,
): Promise<Result<ParsedObject[], Issue[]>> {
  const engines = ctx.ports.engines;
  const budget = ctx.ports.budget ?? runBudget();
  const where = source.kind === "chart" ? chartName(spec) : source.path === "" ? "." : source.path;
  try {
    if (source.kind === "kustomize") {
      if (!engines?.kustomize) {
        return fail(
          where,
          "Kustomize is not available in this runtime (no render engine configured)",
        );
      }
      const output = await engines.kustomize(
        kustomizeRequest(
          source.files,
          source.path,
          spec.source.kustomize,
          budget.maxRenderOutputBytes,
        ),
      );
      return parseKustomizeOutput(source.path, output);
    }
    const helm = engines?.helm;
    if (!engines || !helm) return fail(where, HELM_NEEDS_NODE);
    const helmContext: HelmContext = {
      releaseName: spec.source.helm?.releaseName ?? ctx.app.metadata.name,
      namespace: spec.destination.namespace ?? ctx.app.metadata.namespace,
      capabilities: ctx.cluster.capabilities ? await ctx.cluster.capabilities() : undefined,
      maxOutputBytes: budget.maxRenderOutputBytes,
      lookup: lookupEnabled(spec.source.helm),
      valuesFrom: ctx.valuesFrom,
    };
    let request: HelmRequest;
    if (source.kind === "chart") {
      request = helmRequestFromArchive(source.archive, spec.source.helm, helmContext);
    } else {
      const fromRepo = helmRequestFromRepo(
        source.files,
        source.path,
        spec.source.helm,
        helmContext,
      );
      if (!fromRepo.ok) return fromRepo;
      request = fromRepo.value;
    }
    const parsed = parseHelmOutput(
      await renderHelm(ctx, (r) => helm.call(engines, r), request, helmContext.namespace),
      budget,
    );
    if (!parsed.ok) return parsed;
    return postRender(engines, spec, parsed.value, where, budget.maxRenderOutputBytes);
  } catch (e) {
    if (!(e instanceof EngineError)) throw e;
    const prefix =
      e.kind === "timeout"
        ? "render timed out: "
        : e.kind === "unavailable"
          ? "engine unavailable: "
          : "";
    if (e.transient) throw new EngineError(e.kind, `${where}: ${prefix}${e.message}`);
    return fail(where, prefix + e.message);
  }
}

/**
 * An engine that could not render, as the run's Failure (RenderFailed): not built, crashed or
 * timed out are transient (retried with backoff, nothing to change in the source; the message
 * says what to do); any other kind (this runtime has no such engine) is terminal until the App
 * changes. The engine's own errors never get here: renderWithEngine returns them as issues.
 */
export function engineFailure(e: EngineError): Failure {
  return {
    reason: FailureReason.RenderFailed,
    message: e.message,
    stalled: false,
    transient: e.transient,
  };
}

/**
 * spec.source.helm.postRenderers over the chart's objects, in order, each one `kustomize build`
 * (Flux's helm-controller, internal/postrender/kustomize.go). Without Kustomize in this runtime:
 * a render error saying so.
 */
async function postRender(
  engines: RenderEngines,
  spec: AppSpec,
  objects: ParsedObject[],
  where: string,
  maxOutputBytes: number,
): Promise<Result<ParsedObject[], Issue[]>> {
  const postRenderers = spec.source.helm?.postRenderers ?? [];
  if (postRenderers.length === 0) return { ok: true, value: objects };
  if (!engines.kustomize) {
    return fail(where, "postRenderers need the Kustomize engine, which this runtime lacks");
  }
  const { streams, untouched } = postRenderStreams(objects, spec.source.helm?.postRenderStrategy);
  const out: ParsedObject[] = [];
  for (let current of streams) {
    for (const postRenderer of postRenderers) {
      const output = await engines.kustomize(
        postRenderRequest(current, postRenderer, maxOutputBytes),
      );
      const next = postRenderedObjects(current, output);
      if (!next.ok) return next;
      current = next.value;
    }
    out.push(...current);
  }
  return { ok: true, value: [...out, ...untouched] };
}

function chartName(spec: AppSpec): string {
  const c = spec.source.chart;
  return c ? `${c.repository.replace(/\/+$/, "")}/${c.name}` : ".";
}

function fail(where: string, message: string) {
  return err([{ code: "RenderError" as const, path: where, message }]);
}
