// spec.source.helm.valuesFrom: the ConfigMaps and Secrets in the App's namespace whose keys
// hold Helm values, read at the start of each run (their versions decide a re-render).
import type { AppSpec, ValuesReference } from "../app/index.ts";
import {
  err,
  FailureReason,
  hashObjects,
  type KubeObject,
  ok,
  type Result,
} from "../core/index.ts";
import type { Failure } from "../plan/index.ts";
import type { HelmValuesRef } from "../render/index.ts";
import type { RunContext } from "./context.ts";

/** What the run read: the values for the engine, and the digest status records. */
export interface ValuesFromRead {
  refs: HelmValuesRef[];
  /** Over each entry's object version (never its content); undefined without valuesFrom. */
  digest: string | undefined;
}

const DEFAULT_KEY = "values.yaml";

/**
 * Reads spec.source.helm.valuesFrom from the App's own cluster and namespace, as Flux's
 * helm-controller does (fluxcd/pkg chartutil/values.go ChartValuesFromReferences): each
 * entry's key (default values.yaml); a missing object or key is skipped when `optional`, else
 * the run fails naming it (SourceFailed, retried: it may be created). Secrets read are
 * registered for redaction. The digest covers each entry and the resourceVersion it read (or
 * its absence), so any change to one renders again and nothing of the content is recorded.
 */
export async function readValuesFrom(
  ctx: RunContext,
  spec: AppSpec,
): Promise<Result<ValuesFromRead, Failure>> {
  const entries = spec.source.helm?.valuesFrom ?? [];
  if (entries.length === 0) return ok({ refs: [], digest: undefined });
  const namespace = ctx.app.metadata.namespace;
  const read = new Map<string, KubeObject | undefined>();
  const refs: HelmValuesRef[] = [];
  const versions: unknown[] = [];
  for (const [i, entry] of entries.entries()) {
    const id = `${entry.kind}/${entry.name}`;
    if (!read.has(id)) {
      const obj = await ctx.ports.kube.get({
        apiVersion: "v1",
        kind: entry.kind,
        namespace,
        name: entry.name,
      });
      if (obj && entry.kind === "Secret") ctx.ports.redactor?.addSecretsOf([obj]);
      read.set(id, obj);
    }
    const obj = read.get(id);
    const key = entry.valuesKey ?? DEFAULT_KEY;
    const where = `${entry.kind} ${namespace}/${entry.name}`;
    versions.push([entry, obj?.metadata.resourceVersion ?? null]);
    const data = obj ? keyData(obj, entry, key) : undefined;
    if (data === undefined) {
      if (entry.optional) continue;
      const what = obj ? `${where} has no key ${key}` : `${where} not found`;
      return err(missing(`${what} (spec.source.helm.valuesFrom[${i}])`));
    }
    const ref: HelmValuesRef = { source: `${where} key ${key}`, data };
    if (entry.targetPath) ref.targetPath = entry.targetPath;
    if (entry.kind === "Secret") ref.secret = true;
    refs.push(ref);
  }
  return ok({ refs, digest: await hashObjects(versions) });
}

/** The key's bytes: a Secret's data is base64, a ConfigMap's data text (binaryData base64). */
function keyData(obj: KubeObject, entry: ValuesReference, key: string): Uint8Array | undefined {
  const data = (obj as { data?: Record<string, string> }).data?.[key];
  if (entry.kind === "Secret") return data === undefined ? undefined : fromBase64(data);
  if (data !== undefined) return new TextEncoder().encode(data);
  return undefined;
}

function fromBase64(text: string): Uint8Array {
  const bin = atob(text);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

function missing(message: string): Failure {
  return { reason: FailureReason.SourceFailed, message, stalled: false, transient: true };
}
