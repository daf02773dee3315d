// The render engines as the loop sees them: Kustomize (krusty) and Helm (helm.sh/helm/v3), Go
// code built by scripts/build-engines.sh and hosted per runtime by the adapters in src/engines/
// (a helper process on Node, the render Worker on Cloudflare). Types only.

/** One file of a repository or chart: path from its root ("/"-separated), raw bytes. */
export interface RepoFile {
  path: string;
  data: Uint8Array;
}

/** kustomize's Image (images field). */
export interface KustomizeImage {
  name: string;
  newName?: string | undefined;
  newTag?: string | undefined;
  digest?: string | undefined;
}

/** kustomize's Patch with an inline patch. */
export interface KustomizePatch {
  patch: string;
  target?: Record<string, string | undefined> | undefined;
}

/** One `kustomize build` of `path` over the repository `files`. */
export interface KustomizeRequest {
  files: RepoFile[];
  /** Directory of the kustomization, relative to the repository root ("" = root). */
  path: string;
  images?: KustomizeImage[];
  patches?: KustomizePatch[];
  /** Cap on the rendered YAML, bytes. */
  maxOutputBytes: number;
}

/**
 * What a Kustomize build produced: its resources in output order, each as `kubectl apply -k`
 * decodes the YAML `kustomize build` prints (the engine does that decoding), with the line its
 * document starts on in that output.
 */
export interface KustomizeOutput {
  objects: Array<{ line: number; object: Record<string, unknown> }>;
}

/** One `helm template --include-crds` of a chart. */
export interface HelmRequest {
  /** The chart directory's files (paths relative to the chart root), or... */
  files?: RepoFile[];
  /** ...a packaged chart (.tgz). */
  archive?: Uint8Array;
  /** Values files merged over values.yaml, in order (path for messages). */
  valuesFiles: RepoFile[];
  /** With `archive`: values files inside the chart, by path, merged in order. */
  chartValuesFiles?: string[];
  /** Inline values, merged last. */
  values?: Record<string, unknown>;
  /** spec.source.helm.valuesFrom as read: merged over the values files, before `values`. */
  valuesFrom?: HelmValuesRef[];
  releaseName: string;
  namespace: string;
  /** "v1.35.4"; absent: Helm's default. */
  kubeVersion?: string;
  /** "apps/v1" and "apps/v1/Deployment" entries; absent: Helm's default set. */
  apiVersions?: string[];
  maxOutputBytes: number;
  /** Templates' `lookup` is answered from `lookups` (off: it returns nothing, as helm template). */
  lookup?: boolean;
  /** The host's answers to lookups an earlier pass asked for. */
  lookups?: LookupAnswer[];
}

/** One entry of spec.source.helm.valuesFrom: the content of a ConfigMap's or Secret's key. */
export interface HelmValuesRef {
  /** For messages: "ConfigMap team/web key values.yaml". */
  source: string;
  data: Uint8Array;
  /** The content is one value set at this path (Helm's --set syntax), not a map. */
  targetPath?: string | undefined;
  /** The content is a Secret's: the engine's messages never quote it. */
  secret?: boolean | undefined;
}

/**
 * One `lookup` a template made (Helm's pkg/engine/lookup_func.go arguments): an object by name,
 * or a list when name is "". namespace is as the template gave it, for cluster-scoped kinds too.
 */
export interface LookupKey {
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
}

/** The answer to a lookup: the object or list, or none (the template sees an empty map). */
export interface LookupAnswer extends LookupKey {
  object?: Record<string, unknown>;
}

/** What a Helm render produced: each rendered template (or crds/ file) by chart path. */
export interface HelmOutput {
  chart: string;
  version: string;
  manifests: Array<{ path: string; content: string }>;
  /**
   * Lookups the request did not answer (only with `lookup`): the host answers them and renders
   * again; until then `manifests` are a render that lacked them.
   */
  lookups?: LookupKey[];
}

/** Server version and served API versions, as Helm's .Capabilities wants them. */
export interface ClusterCapabilities {
  kubeVersion: string;
  apiVersions: string[];
}

/**
 * The engines a runtime offers. A missing engine means "not in this runtime": Kustomize runs on
 * Node and in workerd (a second Worker); Helm runs on Node only.
 */
export interface RenderEngines {
  /** The built objects. Throws EngineError. */
  kustomize?(request: KustomizeRequest): Promise<KustomizeOutput>;
  /** Throws EngineError. */
  helm?(request: HelmRequest): Promise<HelmOutput>;
}

/**
 * Why a render did not produce objects, and whether retrying the same source can help:
 * - "failed": the engine's own error (a template or build error, with the file and line it
 *   gives; an output or memory cap). Terminal: the source must change.
 * - "unsupported": this runtime has no such engine (Helm on Cloudflare Workers). Terminal: the
 *   App must run where the engine does.
 * - "timeout": the render passed its time limit, or the engine did not load within its own.
 *   Transient: retried later (the message says which limit ran out).
 * - "unavailable": the engine is not built, could not start, or crashed. Transient: retried
 *   later (the message says what to do, e.g. build the engines).
 */
export type EngineErrorKind = "failed" | "unsupported" | "timeout" | "unavailable";

/** A render the engine refused or could not finish; `kind` as EngineErrorKind says. */
export class EngineError extends Error {
  readonly kind: EngineErrorKind;
  constructor(kind: EngineErrorKind, message: string) {
    super(message);
    this.name = "EngineError";
    this.kind = kind;
  }

  /** True when the same render may succeed later without a change to the source. */
  get transient(): boolean {
    return this.kind === "timeout" || this.kind === "unavailable";
  }
}

/**
 * Default time limit of one render, ms: the build itself, from the request reaching a loaded
 * engine to its answer (a template that loops fails clearly). PLUMB_RENDER_TIMEOUT sets it.
 */
export const RENDER_TIMEOUT_MS = 10_000;
/**
 * Default time limit of loading an engine, ms (starting the helper process or instantiating
 * the WebAssembly module, up to its first answer), counted apart from the render's.
 */
export const ENGINE_LOAD_TIMEOUT_MS = 60_000;
/** Default cap on an engine's output, bytes (as the manifests cap of a Git source). */
export const MAX_RENDER_OUTPUT_BYTES = 20 * 1024 * 1024;
