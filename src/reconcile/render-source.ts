// Kustomize overlays and Helm charts to parsed objects through the injected engines.
// The loop's only contact with the engines; what goes in and out is built in src/render.
import type { AppSpec } from "../app/index.ts";
import { err, FailureReason, type Issue, type Result } from "../core/index.ts";
import type { Failure } from "../plan/index.ts";
import {
  EngineError,
  type HelmContext,
  helmRequestFromArchive,
  helmRequestFromRepo,
  kustomizeRequest,
  MAX_RENDER_OUTPUT_BYTES,
  type ParsedObject,
  parseHelmOutput,
  parseKustomizeOutput,
} from "../render/index.ts";
import type { RunContext } from "./context.ts";
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
        kustomizeRequest(source.files, source.path, spec.source.kustomize, MAX_RENDER_OUTPUT_BYTES),
      );
      return parseKustomizeOutput(source.path, output);
    }
    if (!engines?.helm) return fail(where, HELM_NEEDS_NODE);
    const helmContext: HelmContext = {
      releaseName: spec.source.helm?.releaseName ?? ctx.app.metadata.name,
      namespace: spec.destination.namespace ?? ctx.app.metadata.namespace,
      capabilities: ctx.cluster.capabilities ? await ctx.cluster.capabilities() : undefined,
      maxOutputBytes: MAX_RENDER_OUTPUT_BYTES,
    };
    if (source.kind === "chart") {
      const request = helmRequestFromArchive(source.archive, spec.source.helm, helmContext);
      return parseHelmOutput(await engines.helm(request));
    }
    const request = helmRequestFromRepo(source.files, source.path, spec.source.helm, helmContext);
    if (!request.ok) return request;
    return parseHelmOutput(await engines.helm(request.value));
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

function chartName(spec: AppSpec): string {
  const c = spec.source.chart;
  return c ? `${c.repository.replace(/\/+$/, "")}/${c.name}` : ".";
}

function fail(where: string, message: string) {
  return err([{ code: "RenderError" as const, path: where, message }]);
}
