// A packaged Helm chart (spec.source.chart) from a chart repository or an OCI registry: the
// version its constraint picks, rendered by the Helm engine.
import { SourceError } from "../../core/index.ts";
import { EngineError } from "../../render/index.ts";
import type { RunContext } from "../context.ts";
import type { ChartPort } from "../ports.ts";
import { HELM_NEEDS_NODE, renderWithEngine } from "../render-source.ts";
import type { SourceKind } from "./kind.ts";

/** Resolves to "<version>@sha256:<hex>"; on Workers (no Helm engine) says so before reading. */
export const chart: SourceKind<"chart"> = {
  name: "chart",
  secretRef: (source) => source.secretRef,
  resolve(ctx, source, auth) {
    if (!ctx.ports.engines?.helm) throw new EngineError("unsupported", HELM_NEEDS_NODE);
    return charts(ctx).resolve(source, auth);
  },
  async render(ctx, spec, source, revision, auth) {
    const archive = await charts(ctx).fetch(source, revision, auth);
    return renderWithEngine(ctx, spec, { kind: "chart", archive });
  },
};

/** The chart repositories port, where the runtime has one. */
function charts(ctx: RunContext): ChartPort {
  if (!ctx.ports.charts) {
    throw new SourceError("chart sources are not configured in this runtime", false);
  }
  return ctx.ports.charts;
}
