// Jobs that finish and go away: a Job with ttlSecondsAfterFinished is removed
// by the TTL controller once it finished. Such a Job is done — Synced, Healthy, not recreated by
// selfHeal or by the next apply — until its rendered form changes. plumb's memory of it is the
// inventory entry: the hash of the form applied, and `finished` once it is gone. Pure.
import type { InventoryEntry } from "../app/index.ts";
import { groupOf, isRecord, type KubeObject, refKey, refOf } from "../core/index.ts";
import { hookOf } from "../render/index.ts";

/** What a finished Job's resource line and health say. */
export const FINISHED_MESSAGE = "finished; removed after its ttlSecondsAfterFinished";
/**
 * What the resource line and health of a hook that is not there say: it was deleted by its
 * delete policy once it ran, or its event has not come (a pre-upgrade hook after the install).
 */
export const HOOK_FINISHED_MESSAGE =
  "hook not present: it runs on its events only, and its delete policy removes it once run";

const isHook = (obj: KubeObject | undefined) => {
  const hook = obj && hookOf(obj);
  return hook !== undefined && hook !== "skip";
};

const isJob = (r: { apiVersion: string; kind: string }) =>
  r.kind === "Job" && groupOf(r.apiVersion) === "batch";

/** A batch Job whose spec sets ttlSecondsAfterFinished (the TTL controller will remove it). */
export function hasTtl(obj: KubeObject): boolean {
  const spec = obj["spec"];
  return isJob(obj) && isRecord(spec) && typeof spec["ttlSecondsAfterFinished"] === "number";
}

/**
 * refKeys of the desired Jobs with a TTL whose rendered form is the one plumb applied (the
 * inventory entry's hash): re-applying them would only recreate a Job its TTL removed, so the
 * apply leaves them (the loop reads each to tell live from gone).
 */
export function unchangedTtlJobs(
  objects: readonly KubeObject[],
  inventory: readonly InventoryEntry[],
  hashes: ReadonlyMap<string, string> | undefined,
): Set<string> {
  const applied = new Map(inventory.map((e) => [refKey(e), e.hash]));
  const out = new Set<string>();
  for (const obj of objects) {
    const key = refKey(refOf(obj));
    const hash = hashes?.get(key);
    // A hook runs whenever its event comes, whatever its form (hooks.ts).
    if (hasTtl(obj) && !isHook(obj) && hash !== undefined && applied.get(key) === hash) {
      out.add(key);
    }
  }
  return out;
}

/**
 * refKeys of the inventory's Jobs that are finished and gone: absent from `live`, and either
 * - rendered with a TTL in the very form plumb applied (the TTL controller removes only finished
 *   Jobs; with `ttlSecondsAfterFinished: 0` plumb may never see one complete), or
 * - a Helm hook of the render (any kind) that plumb applied in this very form: a hook is
 *   deleted by its delete policy once run (hook-succeeded, hook-failed), and comes back only
 *   when its event does (a hook is never drift, as in Argo CD), or
 * - marked `finished` by an earlier run, when this run did not render (the fast path).
 * A Job whose rendered form changed is not finished: its new form is due.
 * @param rendered the render and its per-object hashes, or undefined on the fast path
 */
export function finishedJobs(
  inventory: readonly InventoryEntry[],
  live: ReadonlyMap<string, KubeObject>,
  rendered: { objects: readonly KubeObject[]; hashes: ReadonlyMap<string, string> } | undefined,
): Set<string> {
  const byKey = new Map(rendered?.objects.map((o) => [refKey(refOf(o)), o]));
  const out = new Set<string>();
  for (const entry of inventory) {
    const key = refKey(entry);
    if (live.has(key)) continue;
    if (!rendered) {
      if (entry.finished) out.add(key);
      continue;
    }
    const obj = byKey.get(key);
    const form = entry.hash !== undefined && rendered.hashes.get(key) === entry.hash;
    if (obj && form && (isHook(obj) || (isJob(entry) && hasTtl(obj)))) out.add(key);
  }
  return out;
}

/** `inventory` with `finished: true` on exactly the entries `finished` names. */
export function markFinished(
  inventory: readonly InventoryEntry[],
  finished: ReadonlySet<string>,
): InventoryEntry[] {
  return inventory.map((e) => {
    const { finished: _f, ...rest } = e;
    return finished.has(refKey(e)) ? { ...rest, finished: true } : rest;
  });
}

/**
 * The message of each finished object (finishedJobs, ApplyOutcome.finished): a hook's says it
 * ran (HOOK_FINISHED_MESSAGE), a Job's its TTL removed it (FINISHED_MESSAGE).
 * @param objects the render the keys are of (a key not in it reads as a TTL Job)
 */
export function finishedMessages(
  finished: ReadonlySet<string>,
  objects: readonly KubeObject[] | undefined,
): Map<string, string> {
  const byKey = new Map(objects?.map((o) => [refKey(refOf(o)), o]));
  return new Map(
    [...finished].map((key) => [
      key,
      isHook(byKey.get(key)) ? HOOK_FINISHED_MESSAGE : FINISHED_MESSAGE,
    ]),
  );
}
