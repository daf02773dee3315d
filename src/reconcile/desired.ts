// Desired state: resolve the source's revision and render it to objects.
import type { App, AppSpec, Issue } from "../app/index.ts";
import { gvkKey, hashObjects, type KubeObject, SourceError } from "../core/index.ts";
import { type ParsedObject, parseManifests, renderImage, renderObjects } from "../render/index.ts";
import type { Ports, SourceAuth } from "./ports.ts";

export type Desired =
  | { ok: true; revision: string; objects: KubeObject[]; objectHash: string }
  | {
      ok: false;
      reason: "SourceFailed" | "RenderFailed";
      message: string;
      transient: boolean;
      issues?: Issue[];
    };

/** Credentials from spec.source.*.secretRef (keys: token, or username and password). */
export async function sourceAuth(
  app: App,
  spec: AppSpec,
  ports: Ports,
): Promise<SourceAuth | undefined> {
  const ref = spec.source.git?.secretRef ?? spec.source.image?.secretRef;
  if (!ref) return undefined;
  const data = await ports.kube.getSecret(app.metadata.namespace, ref.name);
  if (!data)
    throw new SourceError(
      `Secret ${app.metadata.namespace}/${ref.name} (spec.source secretRef) not found`,
      true,
    );
  const auth: SourceAuth = {};
  if (data["token"]) auth.token = data["token"];
  if (data["username"]) auth.username = data["username"];
  if (data["password"]) auth.password = data["password"];
  return auth;
}

/** The revision the source names now: a commit SHA (git) or a digest (image). Throws SourceError. */
export async function resolveRevision(
  spec: AppSpec,
  auth: SourceAuth | undefined,
  ports: Ports,
): Promise<string> {
  if (spec.source.git) return ports.git.resolve(spec.source.git, auth);
  if (spec.source.image) {
    if (!ports.image)
      throw new SourceError("image sources are not configured in this runtime", false);
    return ports.image.resolve(spec.source.image, auth);
  }
  throw new SourceError("spec.source has neither git nor image", false);
}

/**
 * Fetches and renders `revision`. Discovery tells which kinds are namespaced (one request per
 * group-version, cached). Any fetch, parse or render problem gives `ok: false` with the
 * issues listed, and the caller then neither applies nor prunes.
 */
export async function renderRevision(
  app: App,
  spec: AppSpec,
  revision: string,
  auth: SourceAuth | undefined,
  ports: Ports,
): Promise<Desired> {
  let parsed: ParsedObject[];
  try {
    if (spec.source.git) {
      const files = await ports.git.fetch(spec.source.git, revision, auth);
      const result = parseManifests(files);
      if (!result.ok) return renderFailed(result.issues);
      parsed = result.objects;
    } else if (spec.source.image) {
      parsed = renderImage(app.metadata.name, spec.source.image, revision);
    } else {
      return renderFailed([{ path: "spec.source", message: "no source" }]);
    }
  } catch (err) {
    return sourceFailed(err);
  }
  const scopes = new Map<string, boolean>();
  for (const { object } of parsed) {
    const key = gvkKey(object.apiVersion, object.kind);
    if (scopes.has(key)) continue;
    const info = await ports.kube.resourceFor(object.apiVersion, object.kind);
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
  if (!rendered.ok) return renderFailed(rendered.issues);
  return {
    ok: true,
    revision,
    objects: rendered.objects,
    objectHash: await hashObjects(rendered.objects),
  };
}

/** A source error as a Desired failure; messages never carry credentials (the adapter strips them). */
export function sourceFailed(err: unknown): Desired {
  if (err instanceof SourceError) {
    return { ok: false, reason: "SourceFailed", message: err.message, transient: err.transient };
  }
  return {
    ok: false,
    reason: "SourceFailed",
    message: err instanceof Error ? err.message : String(err),
    transient: true,
  };
}

function renderFailed(issues: Issue[]): Desired {
  const shown = issues.slice(0, 10).map((i) => `${i.path}: ${i.message}`);
  if (issues.length > 10) shown.push(`and ${issues.length - 10} more`);
  return { ok: false, reason: "RenderFailed", message: shown.join("; "), transient: false, issues };
}
