// The desired-versus-live comparison of a run that applies nothing: each object's sync status
// and message for status.resources, what drifted (status.drift), and what applying the source
// would change (the approval preview). The differences come from the API server (drift.ts:
// serverDiff of a dry run), found by the loop; this only sorts them. Pure.
import type { DriftEntry, HealthStatus, ResourceStatus } from "../app/index.ts";
import { type KubeObject, type ObjectRef, refKey, refOf } from "../core/index.ts";
import { hookOf } from "../render/index.ts";
import { applyOnlyIfAbsent } from "./apply-policy.ts";
import type { DriftedField } from "./drift.ts";
import { refOnly } from "./inventory.ts";
import { dedupeRefs, resourceStatus, sortResources } from "./resources.ts";

/** What comparing one live object with its desired form found. */
export type ObjectDiff =
  /** The fields applying would change ([] when nothing suspected a difference). */
  | { fields: DriftedField[] }
  /** The API server refused the dry run: applying would fail the same way. */
  | { error: string; terminal: boolean };

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
  /** status.resources of the last run (kept as they were on the fast path). */
  previous: readonly ResourceStatus[];
  /** Per desired object that is live (refKey): what comparing it found. Absent: nothing differs. */
  diffs?: ReadonlyMap<string, ObjectDiff> | undefined;
  /**
   * refKeys of desired objects whose rendered form is the one plumb last applied: a difference
   * is drift (someone changed the cluster). For the others a difference is a change the source
   * makes that is not applied yet (held, rolled back, manual sync, frozen): not drift.
   */
  applied?: ReadonlySet<string>;
  /**
   * refKeys of owned objects that finished and went away (a Job removed by its
   * ttlSecondsAfterFinished), with the message to show: Synced, not Missing.
   */
  done?: ReadonlyMap<string, string>;
}

export interface Comparison {
  /** One line per object of the inventory and the desired set, in refKey order. */
  resources: ResourceStatus[];
  /** Objects whose live state differs from the desired one, field by field. */
  drift: DriftEntry[];
  /** Objects the API server refused to apply in a dry run: "Deployment a/b: message". */
  errors: Array<{ ref: ObjectRef; message: string; terminal: boolean }>;
}

/**
 * Compares each object of the inventory and the desired set with its live state:
 * - not rendered (fast path): the last comparison stands — each line's status, and its message
 *   and changes unless Synced, with fresh health; previews of objects not yet created stay;
 * - owned but no longer desired: OutOfSync, "not in the source" ("will be pruned" when held);
 * - desired but not live: OutOfSync Missing, "will be created" — or "deleted" when it was owned
 *   (someone deleted it), which is drift `(object)` exists → deleted when its form is the
 *   applied one (selfHeal recreates it) — unless it is done (a Job its TTL removed): Synced;
 * - both: the fields `diffs` lists: "drifted: a, b" and status.drift when the form is the
 *   applied one; otherwise "will change: a, b" when held, "differs from the source: a, b"
 *   when not, each line carrying the fields with their desired and live values (`changes`);
 *   a dry run the API server refused: Failed with its message ("will fail: ..." when held);
 *   none for an apply-if-absent object (plumb.dev/ssa: IfNotPresent).
 * When held, nothing is drift: the preview says what approving will create, change and prune.
 */
export function compareDesired(input: CompareInput): Comparison {
  const desiredRefs = input.desired?.map(refOf) ?? [];
  const refs = dedupeRefs([...input.inventory, ...desiredRefs]).map(refOnly);
  const inventoryKeys = new Set(input.inventory.map(refKey));
  const desiredByKey = new Map((input.desired ?? []).map((o) => [refKey(refOf(o)), o]));
  const resources: ResourceStatus[] = [];
  const drift: DriftEntry[] = [];
  const errors: Comparison["errors"] = [];
  for (const ref of refs) {
    const key = refKey(ref);
    const health = input.health.get(key);
    if (!input.desired) {
      const previous = input.previous.find((r) => refKey(r) === key);
      const status = previous?.status ?? "Synced";
      const message = status === "Synced" ? undefined : previous?.message;
      const line = resourceStatus(ref, status, health, message);
      if (status !== "Synced" && previous?.changes) line.changes = previous.changes;
      resources.push(line);
      continue;
    }
    const want = desiredByKey.get(key);
    const have = input.live.get(key);
    if (!want) {
      const message = input.held ? "will be pruned" : "not in the source";
      resources.push(resourceStatus(ref, "OutOfSync", health, message));
      continue;
    }
    const applied = input.applied?.has(key) ?? false;
    if (!have) {
      const done = input.done?.get(key);
      if (done !== undefined && inventoryKeys.has(key)) {
        resources.push(resourceStatus(ref, "Synced", { status: "Healthy" }, done));
        continue;
      }
      const deleted = !input.held && inventoryKeys.has(key);
      if (deleted && applied) {
        drift.push({ ...ref, fields: [{ path: "(object)", desired: "exists", live: "deleted" }] });
      }
      const message = deleted ? "deleted" : "will be created";
      resources.push(resourceStatus(ref, "OutOfSync", { status: "Missing" }, message));
      continue;
    }
    // An apply-if-absent object is never drift: once it exists, it is not plumb's to correct.
    // Nor is a hook: it runs when its event comes, not to correct the cluster (Argo CD leaves
    // hooks out of the comparison too).
    const diff = (!applyOnlyIfAbsent(want) && !isHook(want) && input.diffs?.get(key)) || {
      fields: [],
    };
    if ("error" in diff) {
      errors.push({ ref, message: diff.error, terminal: diff.terminal });
      const message = input.held ? `will fail: ${diff.error}` : diff.error;
      resources.push(resourceStatus(ref, input.held ? "OutOfSync" : "Failed", health, message));
      continue;
    }
    const { fields } = diff;
    if (fields.length === 0) {
      resources.push(resourceStatus(ref, "Synced", health));
      continue;
    }
    const paths = fields.map((f) => f.path).join(", ");
    if (applied && !input.held) {
      drift.push({ ...ref, fields });
      resources.push(resourceStatus(ref, "OutOfSync", health, `drifted: ${paths}`));
      continue;
    }
    const message = `${input.held ? "will change" : "differs from the source"}: ${paths}`;
    resources.push({ ...resourceStatus(ref, "OutOfSync", health, message), changes: fields });
  }
  if (!input.desired) {
    const previews = input.previous.filter(
      (r) => r.status === "OutOfSync" && !inventoryKeys.has(refKey(r)),
    );
    resources.push(...previews);
  }
  return { resources: sortResources(resources), drift, errors };
}

function isHook(obj: KubeObject): boolean {
  const hook = hookOf(obj);
  return hook !== undefined && hook !== "skip";
}
