// Steps 3 and 5: resolve the source to a revision, and render a revision to the desired set
// (Git manifests, an image, or an app source: see app-source.ts).
import type { AppSpec } from "../app/index.ts";
import {
  err,
  FailureReason,
  formatIssues,
  gvkKey,
  hashObjects,
  type Issue,
  type KubeObject,
  MIN_SECRET_LENGTH,
  needsSpecChange,
  ok,
  type Result,
  refKey,
  refOf,
  SourceError,
  shortCredential,
} from "../core/index.ts";
import { type Failure, hintFits, renderHash } from "../plan/index.ts";
import {
  dropSkippedHooks,
  EngineError,
  type ParsedObject,
  parseManifests,
  renderImage,
  renderObjects,
} from "../render/index.ts";
import { renderAppRevision, resolveAppRevision } from "./app-source.ts";
import type { RunContext } from "./context.ts";
import type { Ports, SourceAuth } from "./ports.ts";
import { engineFailure, HELM_NEEDS_NODE, renderWithEngine } from "./render-source.ts";

/** A rendered revision: the objects to apply and the hash of the set (status.objectHash). */
export interface Desired {
  revision: string;
  objects: KubeObject[];
  objectHash: string;
  /** The hash of each object's rendered form, by refKey (status.inventory[].hash once applied). */
  hashes: ReadonlyMap<string, string>;
}

/** What step 3 found: the revision the source names now, and the credentials used. */
export interface ResolvedSource {
  revision: string;
  auth: SourceAuth | undefined;
}

/**
 * Reads the source's credentials (spec.source.*.secretRef: keys `token`, or `username` and
 * `password`) and resolves the revision: a commit SHA (Git ls-refs — or the revision the
 * trigger resolved for this very source, ctx.hint), a digest (tag → digest),
 * an app source's image pins ("<repository>:<tag>@<digest>,…", see app-source.ts), or
 * "<version>@sha256:<hex>" (a chart: the version its constraint picks).
 * @returns SourceFailed (transient unless the adapter says otherwise) when either fails;
 *   RenderFailed for a chart where no Helm engine runs (Workers).
 */
export async function resolveSource(
  ctx: RunContext,
  spec: AppSpec,
): Promise<Result<ResolvedSource, Failure>> {
  try {
    const auth = await sourceAuth(ctx, spec);
    return ok({ revision: await resolveRevision(ctx, spec, auth), auth });
  } catch (e) {
    return err(sourceFailed(e));
  }
}

/**
 * Credentials from spec.source.*.secretRef, registered with the run's redactor. A token or
 * password shorter than MIN_SECRET_LENGTH is refused (plumb could not redact it).
 */
async function sourceAuth(ctx: RunContext, spec: AppSpec): Promise<SourceAuth | undefined> {
  const ref =
    spec.source.git?.secretRef ??
    spec.source.image?.secretRef ??
    spec.source.app?.secretRef ??
    spec.source.chart?.secretRef;
  if (!ref) return undefined;
  return readSourceAuth(ctx.ports, ctx.ref.namespace, ref.name);
}

/**
 * The source credentials in Secret `namespace/name` (keys `token`, or `username` and
 * `password`), registered with the ports' redactor. Throws SourceError when the Secret is
 * missing (transient: it may be created) or a credential is too short to be redacted.
 */
export async function readSourceAuth(
  ports: Pick<Ports, "kube" | "redactor">,
  namespace: string,
  name: string,
): Promise<SourceAuth> {
  const data = await ports.kube.getSecret(namespace, name);
  if (!data) {
    throw new SourceError(`Secret ${namespace}/${name} (spec.source secretRef) not found`, true);
  }
  const auth: SourceAuth = {};
  if (data["token"]) auth.token = data["token"];
  if (data["username"]) auth.username = data["username"];
  if (data["password"]) auth.password = data["password"];
  const short = shortCredential(auth);
  if (short) {
    throw new SourceError(
      `Secret ${namespace}/${name}: the ${short} is too short to be redacted from messages; plumb refuses it (use at least ${MIN_SECRET_LENGTH} characters)`,
      false,
    );
  }
  ports.redactor?.addCredentials(auth);
  return auth;
}

async function resolveRevision(
  ctx: RunContext,
  spec: AppSpec,
  auth: SourceAuth | undefined,
): Promise<string> {
  const git = spec.source.git;
  if (git) {
    const secret = git.secretRef ? `${ctx.ref.namespace}/${git.secretRef.name}` : undefined;
    if (ctx.hint && hintFits(ctx.hint, { url: git.url, ref: git.ref, secret })) {
      return ctx.hint.revision;
    }
    return ctx.ports.git.resolve(git, auth);
  }
  if (spec.source.image) {
    if (!ctx.ports.image) {
      throw new SourceError("image sources are not configured in this runtime", false);
    }
    return ctx.ports.image.resolve(spec.source.image, auth);
  }
  if (spec.source.app) return resolveAppRevision(ctx, spec.source.app, auth);
  if (spec.source.chart) {
    // On Workers there is no Helm engine: say so before reading any repository.
    if (!ctx.ports.engines?.helm) throw new EngineError("unsupported", HELM_NEEDS_NODE);
    if (!ctx.ports.charts) {
      throw new SourceError("chart sources are not configured in this runtime", false);
    }
    return ctx.ports.charts.resolve(spec.source.chart, auth);
  }
  throw new SourceError("spec.source has neither git, image, app nor chart", false);
}

/**
 * Fetches and renders `revision`. Discovery tells which kinds are namespaced (one request per
 * group-version, cached). A fetch problem is SourceFailed; a parse or render problem is
 * RenderFailed listing the issues (Stalled when one needs a spec change); the caller then
 * neither applies nor prunes.
 */
export async function renderRevision(
  ctx: RunContext,
  spec: AppSpec,
  revision: string,
  auth: SourceAuth | undefined,
): Promise<Result<Desired, Failure>> {
  const { ports, app } = ctx;
  let parsed: ParsedObject[];
  try {
    if (spec.source.git) {
      // Plain manifests, or a kustomization / Chart.yaml at the path rendered by its engine.
      const fetched = ports.git.fetchSource
        ? await ports.git.fetchSource(spec.source.git, revision, auth)
        : {
            kind: "manifests" as const,
            files: await ports.git.fetch(spec.source.git, revision, auth),
          };
      const misplaced = misplacedOptions(spec, fetched.kind);
      if (misplaced) return err(renderFailed([misplaced]));
      const result =
        fetched.kind === "manifests"
          ? parseManifests(fetched.files)
          : await renderWithEngine(ctx, spec, fetched);
      if (!result.ok) return err(renderFailed(result.error));
      parsed = dropSkippedHooks(result.value);
    } else if (spec.source.chart) {
      if (!ports.charts)
        throw new SourceError("chart sources are not configured in this runtime", false);
      const archive = await ports.charts.fetch(spec.source.chart, revision, auth);
      const result = await renderWithEngine(ctx, spec, { kind: "chart", archive });
      if (!result.ok) return err(renderFailed(result.error));
      parsed = result.value;
    } else if (spec.source.image) {
      parsed = renderImage(app.metadata.name, spec.source.image, revision);
    } else if (spec.source.app) {
      const result = renderAppRevision(ctx, spec.source.app, revision);
      if (!result.ok) return err(renderFailed(result.error));
      parsed = result.value;
    } else {
      return err(
        renderFailed([{ code: "InvalidSpec", path: "spec.source", message: "no source" }]),
      );
    }
  } catch (e) {
    return err(sourceFailed(e));
  }
  // Secrets rendered from any source (manifests, Kustomize generators, Helm templates) are
  // registered for redaction.
  ports.redactor?.addSecretsOf(parsed.map((p) => p.object));
  const scopes = new Map<string, boolean>();
  for (const { object } of parsed) {
    const key = gvkKey(object.apiVersion, object.kind);
    if (scopes.has(key)) continue;
    const info = await ctx.cluster.resourceFor(object.apiVersion, object.kind);
    if (info) scopes.set(key, info.namespaced);
  }
  const rendered = renderObjects(parsed, {
    appNamespace: app.metadata.namespace,
    appName: app.metadata.name,
    destinationNamespace: spec.destination.namespace ?? app.metadata.namespace,
    allowedNamespaces: ports.allowedDestinations ?? [],
    allowedClusterKinds: ports.allowedClusterKinds ?? [],
    scopes,
  });
  if (!rendered.ok) return err(renderFailed(rendered.error));
  const hashes = new Map<string, string>();
  for (const obj of rendered.value) hashes.set(refKey(refOf(obj)), await hashObjects(obj));
  // Order-independent: the same objects in another order are the same render. The
  // destination is part of what is applied: a new cluster means a sync.
  const objectHash = await renderHash(hashes);
  return ok({
    revision,
    objects: rendered.value,
    objectHash: ctx.destination
      ? await hashObjects([ctx.destination.server, objectHash])
      : objectHash,
    hashes,
  });
}

/** spec.source.kustomize or .helm given for a path that is not a kustomization or chart. */
function misplacedOptions(
  spec: AppSpec,
  kind: "manifests" | "kustomize" | "helm",
): Issue | undefined {
  const path = "spec.source";
  if (spec.source.kustomize && kind !== "kustomize") {
    return {
      code: "RenderError",
      path,
      message: `kustomize is set, but ${spec.source.git?.path ?? "."} holds no kustomization`,
    };
  }
  if (spec.source.helm && kind !== "helm") {
    return {
      code: "RenderError",
      path,
      message: `helm is set, but ${spec.source.git?.path ?? "."} holds no Chart.yaml`,
    };
  }
  return undefined;
}

/** A source error as a Failure; messages never carry credentials (the adapter strips them). */
function sourceFailed(e: unknown): Failure {
  if (e instanceof EngineError) return engineFailure(e);
  if (e instanceof SourceError) {
    return {
      reason: FailureReason.SourceFailed,
      message: e.message,
      stalled: false,
      transient: e.transient,
    };
  }
  const message = e instanceof Error ? e.message : String(e);
  return { reason: FailureReason.SourceFailed, message, stalled: false, transient: true };
}

/** At most 10 issues in the message; Stalled when one needs a spec change. */
export function renderFailed(issues: readonly Issue[]): Failure {
  const shown = formatIssues(issues.slice(0, 10));
  const more = issues.length > 10 ? `; and ${issues.length - 10} more` : "";
  return {
    reason: FailureReason.RenderFailed,
    message: shown + more,
    stalled: needsSpecChange(issues),
    transient: false,
  };
}
