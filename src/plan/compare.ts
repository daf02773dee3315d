// The desired-versus-live comparison of a run that applies nothing: each object's sync status
// and message for status.resources, and what drifted (status.drift). Pure.
import type { DriftEntry, HealthStatus, ResourceStatus } from "../app/index.ts";
import { type KubeObject, type ObjectRef, refKey, refOf } from "../core/index.ts";
import { applyOnlyIfAbsent } from "./apply-policy.ts";
import { detectDrift } from "./drift.ts";
import { dedupeRefs, resourceStatus, sortResources } from "./resources.ts";

export interface CompareInput {
  /** status.inventory: what the App owns. */
  inventory: readonly ObjectRef[];
  /** The rendered desired set, or undefined when this run did not render (the fast path). */
  desired: readonly KubeObject[] | undefined;
  /** Live objects carrying the App's tracking labels, by refKey. */
  live: ReadonlyMap<string, KubeObject>;
  /** Health by refKey (of the inventory's objects). */
  health: ReadonlyMap<string, { status: HealthStatus; message?: string }>;
  /** The desired set is held for approval: describe what approving would do, report no drift. */
  held: boolean;
  /**
   * Held only: by refKey, the fields a real apply would change (from a server-side dry run,
   * issue 16). Objects without an entry fall back to detectDrift, which misses fields plumb
   * already owns.
   */
  changes?: ReadonlyMap<string, readonly string[]> | undefined;
  /** status.resources of the last run (kept as they were on the fast path). */
  previous: readonly ResourceStatus[];
}

export interface Comparison {
  /** One line per object of the inventory and the desired set, in refKey order. */
  resources: ResourceStatus[];
  /** Objects whose live state differs from the desired one, field by field. */
  drift: DriftEntry[];
}

/**
 * Compares each object of the inventory and the desired set with its live state:
 * - not rendered (fast path): the last comparison stands — each line's status, and its message
 *   unless Synced, with fresh health; previews of objects not yet created stay as they were;
 * - owned but no longer desired: OutOfSync, "not in the source" ("will be pruned" when held);
 * - desired but not live: OutOfSync Missing, "will be created" — or "deleted", and drift
 *   `(object)` exists → deleted, when it was owned (someone deleted it; selfHeal recreates it);
 * - both: the fields detectDrift finds ("drifted: a, b"), or when held the fields `changes`
 *   names ("will change: a, b"); none for an apply-if-absent object (plumb.dev/ssa:
 *   IfNotPresent).
 * When held, nothing is drift: the preview says what approving will create, change and prune.
 */
export function compareDesired(input: CompareInput): Comparison {
  const desiredRefs = input.desired?.map(refOf) ?? [];
  const refs = dedupeRefs([...input.inventory, ...desiredRefs]);
  const inventoryKeys = new Set(input.inventory.map(refKey));
  const desiredByKey = new Map((input.desired ?? []).map((o) => [refKey(refOf(o)), o]));
  const resources: ResourceStatus[] = [];
  const drift: DriftEntry[] = [];
  for (const ref of refs) {
    const key = refKey(ref);
    const health = input.health.get(key);
    if (!input.desired) {
      const previous = input.previous.find((r) => refKey(r) === key);
      const status = previous?.status ?? "Synced";
      const message = status === "Synced" ? undefined : previous?.message;
      resources.push(resourceStatus(ref, status, health, message));
      continue;
    }
    const want = desiredByKey.get(key);
    const have = input.live.get(key);
    if (!want) {
      const message = input.held ? "will be pruned" : "not in the source";
      resources.push(resourceStatus(ref, "OutOfSync", health, message));
      continue;
    }
    if (!have) {
      const deleted = !input.held && inventoryKeys.has(key);
      if (deleted) {
        drift.push({ ...ref, fields: [{ path: "(object)", desired: "exists", live: "deleted" }] });
      }
      const message = deleted ? "deleted" : "will be created";
      resources.push(resourceStatus(ref, "OutOfSync", { status: "Missing" }, message));
      continue;
    }
    // An apply-if-absent object is never drift: once it exists, it is not plumb's to correct.
    const changed = input.held ? input.changes?.get(key) : undefined;
    const fields = applyOnlyIfAbsent(want)
      ? []
      : changed
        ? changed.map((path) => ({ path }))
        : detectDrift(want, have);
    if (fields.length > 0 && !input.held) drift.push({ ...ref, fields });
    const message =
      fields.length > 0
        ? `${input.held ? "will change" : "drifted"}: ${fields.map((f) => f.path).join(", ")}`
        : undefined;
    resources.push(
      resourceStatus(ref, fields.length > 0 ? "OutOfSync" : "Synced", health, message),
    );
  }
  if (!input.desired) {
    const previews = input.previous.filter(
      (r) => r.status === "OutOfSync" && !inventoryKeys.has(refKey(r)),
    );
    resources.push(...previews);
  }
  return { resources: sortResources(resources), drift };
}
