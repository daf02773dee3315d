// The fast path: when a run has nothing to do but look at health. Pure.
import type { AppSpec, AppStatus } from "../app/index.ts";
import { pendingOperation } from "./operations.ts";

/**
 * True when the last full run saw the same revision, spec (generation) and render, nothing is
 * pending (no operation, no failure being retried, no prune waiting for a rollout, no selfHeal
 * comparison owed) and this run
 * does not owe a full comparison (`compare`: its slot in the interval came, or a person asked
 * for the run; the stateless schedule keeps nothing in status to tell). Then the run skips
 * the fetch and the render and only observes the inventory's health. Where the last render
 * (observedObjectHash) is not the applied one, it must be one the gates would not apply anyway:
 * frozen, manual sync, held for approval, rejected, or the render a Rollback moved
 * away from.
 * @param generation metadata.generation of the App now
 * @param revision what the source resolved to this run
 * @param compare the run owes a full comparison (RunContext.compare)
 */
export function isSteady(
  spec: AppSpec,
  prev: AppStatus,
  generation: number | undefined,
  revision: string,
  compare: boolean,
): boolean {
  return (
    pendingOperation(spec, prev) === undefined &&
    !spec.syncPolicy.selfHeal &&
    !prev.failures &&
    // A prune waiting for a rollout is retried by a full run (retryLeftovers), never skipped.
    !prev.inventory?.some((e) => e.prunePending !== undefined) &&
    prev.observedGeneration === generation &&
    prev.observedRevision === revision &&
    prev.observedObjectHash !== undefined &&
    (prev.objectHash === prev.observedObjectHash ||
      spec.freeze ||
      !spec.syncPolicy.automated ||
      prev.heldObjectHash === prev.observedObjectHash ||
      prev.rejectedObjectHash === prev.observedObjectHash ||
      (prev.rejectedObjectHash === undefined && prev.rejectedRevision === revision) ||
      prev.rolledBackFromObjectHash === prev.observedObjectHash ||
      (prev.rolledBackFromObjectHash === undefined && prev.rolledBackFrom === revision)) &&
    !compare
  );
}
