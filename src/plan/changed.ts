// Apply only what changed: which objects of a render a sync can leave alone, and the
// hash of a render that does not depend on the order of its objects. Pure.
import type {
  DriftEntry,
  HealthStatus,
  InventoryEntry,
  ObjectRef,
  ResourceStatus,
} from "../app/index.ts";
import { hashObjects, type KubeObject, refKey, refOf } from "../core/index.ts";
import { hookOf } from "../render/index.ts";
import { autoscaledTargets } from "./autoscaled.ts";

/**
 * status.objectHash of a render: the hash of its objects' hashes (`hashes`, by refKey) in
 * refKey order, so a render whose objects are identical but come in another order (a file
 * renamed, documents moved between files) is the same render.
 */
export function renderHash(hashes: ReadonlyMap<string, string>): Promise<string> {
  const entries = [...hashes].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return hashObjects(entries);
}

/** What the last run recorded about the objects (status.inventory, .resources, .drift). */
export interface LastSeen {
  inventory: readonly InventoryEntry[];
  resources?: readonly ResourceStatus[] | undefined;
  drift?: readonly DriftEntry[] | undefined;
}

/**
 * The desired objects a sync need not apply, with the health the last run saw for each (the
 * sync reports it; the next full comparison looks again). An object is left alone when:
 * - the form rendered now is the one plumb last applied (its inventory entry's hash equals
 *   `hashes`' — a failed apply keeps the earlier hash, so it is applied again);
 * - the last run found it live and as desired (its status.resources line is Synced with a
 *   health other than Missing, and status.drift does not list it) — so an object someone
 *   changed or deleted since it was last looked at is applied;
 * - no HPA of the render that targets it is new or changed (autoscaledApplyForms hands a newly
 *   autoscaled workload's replicas over when it applies the workload);
 * - it is not a Helm hook (hooks run on every sync, as in Argo CD).
 * Flux applies only what its dry run finds changed; this needs no request per object.
 */
export function unchangedObjects(
  objects: readonly KubeObject[],
  hashes: ReadonlyMap<string, string> | undefined,
  last: LastSeen,
): Map<string, { status: HealthStatus; message?: string }> {
  const out = new Map<string, { status: HealthStatus; message?: string }>();
  if (!hashes) return out;
  const applied = new Map(last.inventory.map((e) => [refKey(e), e.hash]));
  const lines = new Map((last.resources ?? []).map((r) => [refKey(r), r]));
  const drifted = new Set((last.drift ?? []).map((d) => refKey(d)));
  const sameForm = (key: string) => {
    const hash = hashes.get(key);
    return hash !== undefined && applied.get(key) === hash;
  };
  const hpaOf = autoscaledTargets(objects);
  for (const obj of objects) {
    const key = refKey(refOf(obj));
    if (!sameForm(key) || drifted.has(key)) continue;
    const hook = hookOf(obj);
    if (hook !== undefined && hook !== "skip") continue;
    const hpa = hpaOf.get(key);
    if (hpa !== undefined && !sameForm(hpa)) continue;
    const line = lines.get(key);
    if (line?.status !== "Synced" || !line.health || line.health === "Missing") continue;
    out.set(
      key,
      line.message ? { status: line.health, message: line.message } : { status: line.health },
    );
  }
  return out;
}

/**
 * Whether a sync of `toApply` must know which objects other Apps own (one list of every App):
 * when it applies an object new to the inventory (is it another App's?) or a Namespace (Apps
 * share them), or prunes (never what another App owns).
 */
export function needsOwners(
  toApply: readonly KubeObject[],
  inventory: readonly ObjectRef[],
  stale: readonly ObjectRef[],
): boolean {
  const owned = new Set(inventory.map(refKey));
  return (
    stale.length > 0 || toApply.some((o) => o.kind === "Namespace" || !owned.has(refKey(refOf(o))))
  );
}
