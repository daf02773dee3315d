// Helm sources: a chart (from a repository tree or a packaged .tgz) and spec.source.helm to the
// engine's request, and the rendered templates back to parsed objects. Pure.
import type { HelmOptions } from "../app/index.ts";
import { err, type Issue, ok, type Result, type RunBudget } from "../core/index.ts";
import type {
  ClusterCapabilities,
  HelmOutput,
  HelmRequest,
  HelmValuesRef,
  RepoFile,
} from "./engine.ts";
import { dropSkippedHooks } from "./hooks.ts";
import { type ParsedObject, parseManifests } from "./manifests.ts";

/** What every Helm render is given besides the chart and values. */
export interface HelmContext {
  /** spec.source.helm.releaseName, else the App's name. */
  releaseName: string;
  /** The destination namespace (.Release.Namespace). */
  namespace: string;
  capabilities?: ClusterCapabilities | undefined;
  maxOutputBytes: number;
  /** Templates' lookup is answered by the host (spec.source.helm.lookup, default on). */
  lookup: boolean;
  /** spec.source.helm.valuesFrom as read (values-from.ts in the loop). */
  valuesFrom?: readonly HelmValuesRef[] | undefined;
}

/**
 * The request for the chart at `chartPath` in a repository: the chart's files (relative to
 * the chart; .helmignore is applied by the engine) and spec.source.helm.valuesFiles, each a
 * path relative to the chart that must stay inside the repository (else InvalidSpec: only the
 * spec can fix it) and exist (else RenderError: a commit may add it).
 */
export function helmRequestFromRepo(
  files: readonly RepoFile[],
  chartPath: string,
  helm: HelmOptions | undefined,
  ctx: HelmContext,
): Result<HelmRequest, Issue[]> {
  const prefix = chartPath === "" ? "" : `${chartPath}/`;
  const chart = files
    .filter((f) => f.path.startsWith(prefix))
    .map((f) => ({ path: f.path.slice(prefix.length), data: f.data }));
  const byPath = new Map(files.map((f) => [f.path, f]));
  const issues: Issue[] = [];
  const valuesFiles: RepoFile[] = [];
  for (const name of helm?.valuesFiles ?? []) {
    const resolved = joinPath(chartPath, name);
    if (resolved === undefined || name.startsWith("/")) {
      issues.push({
        code: "InvalidSpec",
        path: chartPath === "" ? "." : chartPath,
        message: `values file "${name}" (spec.source.helm.valuesFiles) is outside the repository`,
      });
      continue;
    }
    const file = byPath.get(resolved);
    if (!file) {
      issues.push({
        code: "RenderError",
        path: resolved,
        message: `values file "${name}" (spec.source.helm.valuesFiles) not found`,
      });
      continue;
    }
    valuesFiles.push({ path: resolved, data: file.data });
  }
  if (issues.length > 0) return err(issues);
  return ok(baseRequest({ files: chart, valuesFiles }, helm, ctx));
}

/**
 * The request for a packaged chart: spec.source.helm.valuesFiles name files inside the chart
 * (the engine reads them from the archive).
 */
export function helmRequestFromArchive(
  archive: Uint8Array,
  helm: HelmOptions | undefined,
  ctx: HelmContext,
): HelmRequest {
  const request = baseRequest({ archive, valuesFiles: [] }, helm, ctx);
  if (helm?.valuesFiles?.length) request.chartValuesFiles = [...helm.valuesFiles];
  return request;
}

function baseRequest(
  chart: Pick<HelmRequest, "files" | "archive" | "valuesFiles">,
  helm: HelmOptions | undefined,
  ctx: HelmContext,
): HelmRequest {
  const request: HelmRequest = {
    ...chart,
    releaseName: ctx.releaseName,
    namespace: ctx.namespace,
    maxOutputBytes: ctx.maxOutputBytes,
  };
  if (helm?.values) request.values = helm.values;
  if (ctx.valuesFrom?.length) request.valuesFrom = [...ctx.valuesFrom];
  if (ctx.lookup) request.lookup = true;
  if (ctx.capabilities) {
    request.kubeVersion = ctx.capabilities.kubeVersion;
    request.apiVersions = ctx.capabilities.apiVersions;
  }
  return request;
}

/**
 * Parses the rendered templates (origin "<chart>/templates/x.yaml:<line>") and drops hooks
 * that never run in a sync (Helm tests and the like; see hooks.ts). `budget`: the parse caps
 * (parseManifests; default runBudget()).
 */
export function parseHelmOutput(
  output: HelmOutput,
  budget?: RunBudget,
): Result<ParsedObject[], Issue[]> {
  const parsed = parseManifests(output.manifests, budget);
  return parsed.ok ? ok(dropSkippedHooks(parsed.value)) : parsed;
}

/** `dir`/`rel` normalized ("." and ".." resolved); undefined when it leaves the root. */
export function joinPath(dir: string, rel: string): string | undefined {
  const out: string[] = [];
  for (const part of [...dir.split("/"), ...rel.split("/")]) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (out.length === 0) return undefined;
      out.pop();
    } else out.push(part);
  }
  return out.join("/");
}
