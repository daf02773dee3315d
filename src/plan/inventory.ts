// Inventory arithmetic: what an App owns after a run applied and pruned. Pure.
// Model: Flux kustomize-controller's inventory (the applied set; an object whose delete failed
// stays so the next run retries it).
import { type ObjectRef, refKey } from "../core/index.ts";
import { dedupeRefs } from "./resources.ts";

export interface InventoryInput {
  /** The previous inventory (status.inventory). */
  previous: readonly ObjectRef[];
  /** The refs of the set this run applied, in render order. */
  desired: readonly ObjectRef[];
  /** refKeys of desired objects whose apply failed. */
  failed: ReadonlySet<string>;
  /** Objects to keep although not desired: failed deletes, prune:false leftovers, skips kept. */
  kept: readonly ObjectRef[];
}

/**
 * The inventory after an apply: every desired object that applied; a desired object whose
 * apply failed only if it was already owned (it may exist from an earlier apply; a new one
 * that never applied is not ours); then the kept objects. No repeats.
 */
export function inventoryAfterApply(input: InventoryInput): ObjectRef[] {
  const previous = new Set(input.previous.map(refKey));
  const owned = input.desired.filter((ref) => {
    const key = refKey(ref);
    return !input.failed.has(key) || previous.has(key);
  });
  return dedupeRefs([...owned, ...input.kept]);
}

/** What the previous inventory has and the desired set lacks: the prune candidates. */
export function staleRefs(
  previous: readonly ObjectRef[],
  desired: readonly ObjectRef[],
): ObjectRef[] {
  const want = new Set(desired.map(refKey));
  return previous.filter((r) => !want.has(refKey(r)));
}
