// status.resources lines and object-ref sets: small pure helpers the loop's steps share.
import type { HealthStatus, ResourceStatus } from "../app/index.ts";
import { type ObjectRef, refKey } from "../core/index.ts";

/** Longest message kept on one resource line (status stays small). */
const MAX_MESSAGE = 1024;

/**
 * A status.resources line: the ref, its sync status, its health (when known) and a message
 * (`message`, else the health's own message), at most 1024 characters.
 */
export function resourceStatus(
  ref: ObjectRef,
  status: ResourceStatus["status"],
  health: { status: HealthStatus; message?: string } | undefined,
  message?: string,
): ResourceStatus {
  const out: ResourceStatus = {
    apiVersion: ref.apiVersion,
    kind: ref.kind,
    name: ref.name,
    status,
  };
  if (ref.namespace !== undefined) out.namespace = ref.namespace;
  if (health) out.health = health.status;
  const text = message ?? health?.message;
  if (text) out.message = text.slice(0, MAX_MESSAGE);
  return out;
}

/** Resource lines in refKey order (status is stable from run to run). */
export function sortResources(resources: ResourceStatus[]): ResourceStatus[] {
  return resources.sort((a, b) => (refKey(a) < refKey(b) ? -1 : refKey(a) > refKey(b) ? 1 : 0));
}

/** `refs` without repeats (by refKey), first occurrence kept, order kept. */
export function dedupeRefs(refs: readonly ObjectRef[]): ObjectRef[] {
  const seen = new Map<string, ObjectRef>();
  for (const r of refs) if (!seen.has(refKey(r))) seen.set(refKey(r), r);
  return [...seen.values()];
}

/**
 * status.resources once a held revision is rejected: the preview's lines of objects
 * not owned are dropped, and owned objects' "will …" lines become Synced again (they stay as
 * the applied revision left them). Other lines are kept as they are.
 */
export function dropPreview(
  resources: readonly ResourceStatus[],
  inventory: readonly ObjectRef[],
): ResourceStatus[] {
  const owned = new Set(inventory.map(refKey));
  return resources
    .filter((r) => owned.has(refKey(r)))
    .map((r) => {
      if (!r.message?.startsWith("will ")) return r;
      const { message: _m, ...rest } = r;
      return { ...rest, status: "Synced" as const };
    });
}
