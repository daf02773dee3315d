// Resolve the source to a revision and render a revision to the desired set, for every source
// kind (sources/: Git, an image, an app source, a chart): what the kinds share is here.
import type { AppSpec, SourceKindName } from "../app/index.ts";
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
import { type Failure, renderHash } from "../plan/index.ts";
import {
  EngineError,
  isDeleteHook,
  isDeleteOnlyHook,
  type ParsedObject,
  renderObjects,
} from "../render/index.ts";
import type { RunContext } from "./context.ts";
import type { Ports, SourceAuth } from "./ports.ts";
import { engineFailure } from "./render-source.ts";
import { kindOf, SOURCES } from "./sources/index.ts";

/** A rendered revision: the objects to apply and the hash of the set (status.objectHash). */
export interface Desired {
  revision: string;
  objects: KubeObject[];
  objectHash: string;
  /** The hash of each object's rendered form, by refKey (status.inventory[].hash once applied). */
  hashes: ReadonlyMap<string, string>;
  /**
   * The render's pre-delete and post-delete hooks (isDeleteHook): run by the finalizer, never
   * by a sync. Those with no other event are not in `objects` (nor in the hashes).
   */
  deleteHooks: KubeObject[];
}

/** What the resolve step found: the revision the source names now, and the credentials used. */
export interface ResolvedSource {
  revision: string;
  auth: SourceAuth | undefined;
}

/**
 * Reads the source's credentials (spec.source.<kind>.secretRef: keys `token`, or `username`
 * and `password`) and resolves the revision with the source's kind (sources/): a commit SHA
 * (Git ls-refs — or the revision the trigger resolved for this very source, ctx.hint), a digest
 * (tag → digest), an app source's image pins ("<repository>:<tag>@<digest>,…"), or
 * "<version>@sha256:<hex>" (a chart: the version its constraint picks).
 * @returns SourceFailed (transient unless the adapter says otherwise) when either fails;
 *   RenderFailed for a chart where no Helm engine runs (Workers).
 */
export async function resolveSource(
  ctx: RunContext,
  spec: AppSpec,
): Promise<Result<ResolvedSource, Failure>> {
  try {
    return ok(await resolveAs(ctx, sourceKind(spec), spec));
  } catch (e) {
    return err(sourceFailed(e));
  }
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
    const result = await renderAs(ctx, sourceKind(spec), spec, revision, auth);
    if (!result.ok) return err(renderFailed(result.error));
    parsed = result.value;
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
    allowedNamespaces: ctx.policy.destinations,
    allowedClusterKinds: ctx.policy.clusterKinds,
    ...(ctx.policy.source ? { policySource: ctx.policy.source } : {}),
    scopes,
  });
  if (!rendered.ok) return err(renderFailed(rendered.error));
  const objects = rendered.value.filter((o) => !isDeleteOnlyHook(o));
  const hashes = new Map<string, string>();
  for (const obj of objects) hashes.set(refKey(refOf(obj)), await hashObjects(obj));
  // Order-independent: the same objects in another order are the same render. The
  // destination is part of what is applied: a new cluster means a sync.
  const objectHash = await renderHash(hashes);
  return ok({
    revision,
    objects,
    deleteHooks: rendered.value.filter(isDeleteHook),
    objectHash: ctx.destination
      ? await hashObjects([ctx.destination.server, objectHash])
      : objectHash,
    hashes,
  });
}

/**
 * The credentials of the spec's source (its secretRef), without resolving a revision: for a
 * render of a revision known already (the finalizer's delete hooks). Throws SourceError.
 */
export async function sourceAuthOf(
  ctx: RunContext,
  spec: AppSpec,
): Promise<SourceAuth | undefined> {
  return authAs(ctx, sourceKind(spec), spec);
}

async function authAs<K extends SourceKindName>(
  ctx: RunContext,
  name: K,
  spec: AppSpec,
): Promise<SourceAuth | undefined> {
  const ref = SOURCES[name].secretRef(spec.source[name]!);
  return ref ? readSourceAuth(ctx.ports, ctx.ref.namespace, ref.name) : undefined;
}

/** The credentials and the revision of the spec's source, through its kind `name`. */
async function resolveAs<K extends SourceKindName>(
  ctx: RunContext,
  name: K,
  spec: AppSpec,
): Promise<ResolvedSource> {
  const kind = SOURCES[name];
  const source = spec.source[name]!;
  const ref = kind.secretRef(source);
  const auth = ref ? await readSourceAuth(ctx.ports, ctx.ref.namespace, ref.name) : undefined;
  return { revision: await kind.resolve(ctx, source, auth), auth };
}

/** The parsed objects of `revision` of the spec's source, through its kind `name`. */
function renderAs<K extends SourceKindName>(
  ctx: RunContext,
  name: K,
  spec: AppSpec,
  revision: string,
  auth: SourceAuth | undefined,
): Promise<Result<ParsedObject[], Issue[]>> {
  return SOURCES[name].render(ctx, spec, spec.source[name]!, revision, auth);
}

/** The kind of the spec's source; a spec without one is refused (validateSpec forbids it). */
function sourceKind(spec: AppSpec): SourceKindName {
  const name = kindOf(spec);
  if (!name) throw new SourceError("spec.source has neither git, image, app nor chart", false);
  return name;
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
