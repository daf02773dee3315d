// What Helm charts get beyond `helm template`, as pure decisions: which `lookup` calls the host
// answers (and how), and a post-renderer's Kustomize request over the rendered objects.
import type { HelmOptions } from "../app/index.ts";
import { type Issue, type Result, refKey, refOf } from "../core/index.ts";
import type { KustomizeOutput, KustomizeRequest, LookupKey } from "./engine.ts";
import { HOOK_ANNOTATION } from "./hooks.ts";
import { parseKustomizeOutput } from "./kustomize.ts";
import type { ParsedObject } from "./manifests.ts";
import { clusterKindAllowed } from "./render.ts";

/** Renders a chart with lookup may take: the first, and one per round of new lookups. */
export const MAX_LOOKUP_RENDERS = 5;

/** What the host does with one lookup. */
export type LookupPlan =
  | { read: "get"; namespace: string | undefined; name: string }
  | { read: "list"; namespace: string | undefined }
  | { read: "none"; why: string };

/** "v1 Secret team/name", "v1 Namespace web", "v1 ConfigMap in team" (a list): for logs. */
export function describeLookup(key: LookupKey): string {
  const where = key.namespace ? `${key.namespace}/` : "";
  return key.name === ""
    ? `${key.apiVersion} ${key.kind} list${key.namespace ? ` in ${key.namespace}` : ""}`
    : `${key.apiVersion} ${key.kind} ${where}${key.name}`;
}

/**
 * What the host reads for a template's `lookup` (Helm's pkg/engine/lookup_func.go: a get by
 * name, a list when the name is ""). An App reads what it could deploy: objects in its
 * destination namespace, that Namespace itself, and cluster-scoped kinds the cluster setting
 * lets Apps apply (allowedClusterKinds). Anything else — another namespace, all namespaces, a
 * kind the API server does not serve — is answered as absent (Helm's answer to a NotFound), and
 * `why` says so for the log.
 * @param scope the kind's scope from discovery; undefined when the API server has no such kind
 */
export function planLookup(
  key: LookupKey,
  scope: { namespaced: boolean } | undefined,
  ctx: { destinationNamespace: string; allowedClusterKinds: readonly string[] },
): LookupPlan {
  if (!scope) return { read: "none", why: "the API server serves no such kind" };
  if (scope.namespaced) {
    if (key.namespace !== ctx.destinationNamespace) {
      const which = key.namespace === "" ? "every namespace" : `namespace ${key.namespace}`;
      return {
        read: "none",
        why: `${which} is not the App's destination namespace ${ctx.destinationNamespace}`,
      };
    }
    return key.name === ""
      ? { read: "list", namespace: key.namespace }
      : { read: "get", namespace: key.namespace, name: key.name };
  }
  const ownNamespace =
    key.kind === "Namespace" && key.apiVersion === "v1" && key.name === ctx.destinationNamespace;
  const allowed = { allowedClusterKinds: ctx.allowedClusterKinds };
  if (!ownNamespace && !clusterKindAllowed(allowed, key.apiVersion, key.kind)) {
    return {
      read: "none",
      why: `cluster-scoped ${key.kind} is not a kind Apps may apply (PLUMB_ALLOWED_CLUSTER_KINDS)`,
    };
  }
  return key.name === ""
    ? { read: "list", namespace: undefined }
    : { read: "get", namespace: undefined, name: key.name };
}

/** The lookup setting of spec.source.helm: on unless `lookup: false`. */
export function lookupEnabled(helm: HelmOptions | undefined): boolean {
  return helm?.lookup !== false;
}

type PostRenderer = NonNullable<HelmOptions["postRenderers"]>[number];

/**
 * The streams the post-renderers run over, and what they leave as it is, by
 * spec.source.helm.postRenderStrategy (Helm 4's pkg/action/action.go PostRenderStrategy, as
 * Flux's HelmRelease names it): "combined" (default) one stream; "separate" the chart's
 * objects and its hooks apart (no duplicate-resource error between them); "nohooks" (Helm 3)
 * hooks untouched.
 */
export function postRenderStreams(
  objects: readonly ParsedObject[],
  strategy: HelmOptions["postRenderStrategy"],
): { streams: ParsedObject[][]; untouched: ParsedObject[] } {
  const some = (streams: ParsedObject[][]) => streams.filter((s) => s.length > 0);
  if (strategy === undefined || strategy === "combined") {
    return { streams: some([[...objects]]), untouched: [] };
  }
  const isHook = (p: ParsedObject) =>
    p.object.metadata.annotations?.[HOOK_ANNOTATION] !== undefined;
  const hooks = objects.filter(isHook);
  const rest = objects.filter((p) => !isHook(p));
  if (strategy === "nohooks") return { streams: some([rest]), untouched: hooks };
  return { streams: some([rest, hooks]), untouched: [] };
}

const INPUT = "helm-output.yaml";

/**
 * A post-renderer as one `kustomize build` over the chart's objects, as Flux's helm-controller
 * runs it (internal/postrender/kustomize.go): the objects are the one resource of a
 * kustomization whose images and patches are the post-renderer's.
 */
export function postRenderRequest(
  objects: readonly ParsedObject[],
  postRenderer: PostRenderer,
  maxOutputBytes: number,
): KustomizeRequest {
  const encoder = new TextEncoder();
  // JSON documents are YAML; one object per document, in the chart's order.
  const docs = objects.map((o) => JSON.stringify(o.object)).join("\n---\n");
  const kustomization = {
    apiVersion: "kustomize.config.k8s.io/v1beta1",
    kind: "Kustomization",
    resources: [INPUT],
  };
  const request: KustomizeRequest = {
    files: [
      { path: "kustomization.yaml", data: encoder.encode(JSON.stringify(kustomization)) },
      { path: INPUT, data: encoder.encode(`${docs}\n`) },
    ],
    path: "",
    maxOutputBytes,
  };
  const { images, patches } = postRenderer.kustomize;
  if (images?.length) request.images = images;
  if (patches?.length) request.patches = patches;
  return request;
}

/**
 * The post-renderer's output as objects: an object that is still the one the chart rendered
 * (same apiVersion, kind, namespace and name) keeps the chart's origin (template and line).
 */
export function postRenderedObjects(
  before: readonly ParsedObject[],
  output: KustomizeOutput,
): Result<ParsedObject[], Issue[]> {
  const parsed = parseKustomizeOutput("", output);
  if (!parsed.ok) return parsed;
  const origins = new Map(before.map((p) => [refKey(refOf(p.object)), p.origin]));
  return {
    ok: true,
    value: parsed.value.map((p) => ({
      object: p.object,
      origin: origins.get(refKey(refOf(p.object))) ?? `postRenderers: ${p.origin}`,
    })),
  };
}
