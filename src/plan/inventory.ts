// Inventory arithmetic: what an App owns after a run applied and pruned. Pure.
// Model: Flux kustomize-controller's inventory (the applied set; an object whose delete failed
// stays so the next run retries it).
import type { InventoryEntry } from "../app/index.ts";
import { type ObjectRef, refKey } from "../core/index.ts";
import { dedupeRefs } from "./resources.ts";

export interface InventoryInput {
  /** The previous inventory (status.inventory). */
  previous: readonly InventoryEntry[];
  /** The refs of the set this run applied, in render order. */
  desired: readonly ObjectRef[];
  /** refKeys of desired objects whose apply failed. */
  failed: ReadonlySet<string>;
  /** refKeys of failed objects the API server may have stored all the same (lost answers). */
  uncertain?: ReadonlySet<string>;
  /** Objects to keep although not desired: failed deletes, prune:false leftovers, skips kept. */
  kept: readonly InventoryEntry[];
  /** The hash of each desired object's rendered form, by refKey (recorded for what applied). */
  hashes?: ReadonlyMap<string, string> | undefined;
  /** ownedFieldsHash of each object this run applied, as the API server returned it, by refKey. */
  owned?: ReadonlyMap<string, string> | undefined;
}

/**
 * The inventory after an apply: every desired object that applied, with the hash of the form
 * it applied; a desired object whose apply failed only if it was already owned (it may exist
 * from an earlier apply), as rendered but with the hash of the form it last applied, or if the
 * failure leaves it uncertain whether the server stored it (tracked, so it is
 * pruned if the source drops it) — a new one that surely never applied is not ours; then the
 * kept objects as they were (a pending prune with the time it was first held). No repeats.
 * Each entry's `owned` is the one this run's apply returned, else the previous entry's while
 * its hash stands (the form it was taken for).
 */
export function inventoryAfterApply(input: InventoryInput): InventoryEntry[] {
  const previous = new Map(input.previous.map((e) => [refKey(e), e]));
  const desiredKeys = new Set(input.desired.map(refKey));
  const pending = new Map(
    input.kept.filter((e) => e.prunePending !== undefined).map((e) => [refKey(e), e.prunePending]),
  );
  const out: InventoryEntry[] = [];
  for (const ref of dedupeRefs([...input.desired, ...input.kept])) {
    const key = refKey(ref);
    const before = previous.get(key);
    const desired = desiredKeys.has(key);
    if (desired && input.failed.has(key) && !before && !input.uncertain?.has(key)) continue;
    const applied = desired && !input.failed.has(key);
    const hash = applied ? input.hashes?.get(key) : before?.hash;
    const entry: InventoryEntry = { ...refOnly(ref) };
    if (hash !== undefined) entry.hash = hash;
    const since = desired ? undefined : pending.get(key);
    if (since !== undefined) entry.prunePending = since;
    const owned = input.owned?.get(key) ?? (hash === before?.hash ? before?.owned : undefined);
    if (owned !== undefined) entry.owned = owned;
    out.push(entry);
  }
  return out;
}

/**
 * refKeys of the desired objects whose rendered form is the one plumb last applied: the
 * inventory entry's hash equals the render's. An entry without a hash (an older status) counts
 * when the whole render is the one last applied (`appliedObjectHash === objectHash`).
 */
export function appliedForms(
  inventory: readonly InventoryEntry[],
  hashes: ReadonlyMap<string, string>,
  appliedObjectHash: string | undefined,
  objectHash: string,
): Set<string> {
  const out = new Set<string>();
  for (const entry of inventory) {
    const key = refKey(entry);
    const hash = hashes.get(key);
    if (hash === undefined) continue;
    const same = entry.hash !== undefined ? entry.hash === hash : appliedObjectHash === objectHash;
    if (same) out.add(key);
  }
  return out;
}

/** The ObjectRef of an entry (without its hash). */
export function refOnly(entry: ObjectRef): ObjectRef {
  const ref: ObjectRef = { apiVersion: entry.apiVersion, kind: entry.kind, name: entry.name };
  if (entry.namespace !== undefined) ref.namespace = entry.namespace;
  return ref;
}

/** What the previous inventory has and the desired set lacks: the prune candidates. */
export function staleRefs(
  previous: readonly ObjectRef[],
  desired: readonly ObjectRef[],
): ObjectRef[] {
  const want = new Set(desired.map(refKey));
  return previous.filter((r) => !want.has(refKey(r)));
}
