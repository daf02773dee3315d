// Per-object apply and prune policy from annotations any App may set (src/app/annotations.ts):
// apply only if absent, generated Secret values, never prune. Pure.
import {
  ANNOTATION_GENERATE,
  ANNOTATION_PRUNE,
  ANNOTATION_SSA,
  PRUNE_DISABLED,
  SSA_IF_NOT_PRESENT,
} from "../app/index.ts";
import { base64, isRecord, type KubeObject } from "../core/index.ts";

/**
 * True when plumb applies `obj` only while it does not exist (`plumb.dev/ssa: IfNotPresent`,
 * Flux's `kustomize.toolkit.fluxcd.io/ssa: IfNotPresent`), which a `plumb.dev/generate`
 * annotation implies: a generated value is never replaced. Such an object is never drift.
 */
export function applyOnlyIfAbsent(obj: KubeObject): boolean {
  const annotations = obj.metadata.annotations ?? {};
  return annotations[ANNOTATION_SSA] === SSA_IF_NOT_PRESENT || generatedKeys(obj).length > 0;
}

/** True when the live object says it is never pruned (`plumb.dev/prune: disabled`). */
export function pruneDisabled(obj: KubeObject): boolean {
  return obj.metadata.annotations?.[ANNOTATION_PRUNE] === PRUNE_DISABLED;
}

/** The keys a v1 Secret's `plumb.dev/generate` annotation lists ("password, token"), sorted. */
export function generatedKeys(obj: KubeObject): string[] {
  if (obj.apiVersion !== "v1" || obj.kind !== "Secret") return [];
  const list = obj.metadata.annotations?.[ANNOTATION_GENERATE] ?? "";
  const keys = list
    .split(",")
    .map((k) => k.trim())
    .filter((k) => /^[-._a-zA-Z0-9]{1,253}$/.test(k));
  return [...new Set(keys)].sort();
}

/**
 * The Secret `obj` with each generated key that `data` lacks set to `value(key)` (base64, as
 * `data` holds it). The caller passes fresh random values: 32 random bytes as 64 lower-case hex
 * characters, which are safe in URLs. Other objects come back as they are.
 */
export function withGeneratedValues(obj: KubeObject, value: (key: string) => string): KubeObject {
  const keys = generatedKeys(obj);
  if (keys.length === 0) return obj;
  const data: Record<string, unknown> = isRecord(obj["data"]) ? { ...obj["data"] } : {};
  for (const key of keys) if (data[key] === undefined) data[key] = base64(value(key));
  return { ...obj, data };
}
