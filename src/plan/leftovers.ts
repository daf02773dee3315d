// An App whose inventory still lists objects its render lacks is not done. Pure.
import type { AppSpec } from "../app/index.ts";
import { GateReason, type ObjectRef } from "../core/index.ts";
import type { Decision } from "./gates.ts";
import { staleRefs } from "./inventory.ts";

export interface LeftoversInput {
  /** What the gates decided (decide). */
  decision: Decision;
  spec: AppSpec;
  /** The source's revision now (the one whose render was last applied, when UpToDate). */
  revision: string;
  /** The inventory's entries on the run's destination. */
  inventory: readonly ObjectRef[];
  /** The refs of the source's render. */
  desired: readonly ObjectRef[];
  /** How many inventory entries are on former destinations. */
  departed: number;
}

/**
 * The gates' decision, or an apply of `revision` when they found the App up to date (UpToDate:
 * the render is the one last applied) while its inventory still lists objects that render
 * lacks — a delete that failed (PruneFailed), a Namespace or CRD the cascade guard kept
 * (others' objects in it, or it could not check), pruned once nothing but the App's would go
 * with it — or objects on a former destination. Only a sync prunes: without one those objects would stay in
 * the cluster while status says Synced, until the next commit (nothing stale; Flux
 * retries a failed prune on every reconcile the same way, its inventory keeping the object).
 * Only with automated sync and prune on, and never while a sync window blocks (the decision
 * carries the window). With prune off such entries are kept on purpose (reported OutOfSync).
 */
export function retryLeftovers(input: LeftoversInput): Decision {
  const { decision, spec } = input;
  if (decision.action !== "none" || decision.reason !== GateReason.UpToDate) return decision;
  if (decision.window || decision.operation) return decision;
  if (!spec.syncPolicy.automated || !spec.syncPolicy.prune || spec.freeze) return decision;
  const left = staleRefs(input.inventory, input.desired).length + input.departed;
  if (left === 0) return decision;
  return { action: "apply", revision: input.revision, reason: GateReason.Automated };
}
