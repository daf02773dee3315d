// Before the apply step applies: a host one of the App's Ingresses would serve must not be
// served by another Ingress in the cluster. One list of every Ingress, only when the desired
// set has one.
import { FailureReason, type KubeObject } from "../core/index.ts";
import { type Failure, hostConflicts, ingressHosts } from "../plan/index.ts";
import type { RunContext } from "./context.ts";

/**
 * The HostConflict failure (nothing is applied) when another Ingress already serves a host of
 * the desired Ingresses, naming it; undefined otherwise. Not Stalled, and retried: the other
 * Ingress may go.
 */
export async function checkHosts(
  ctx: RunContext,
  objects: readonly KubeObject[],
): Promise<Failure | undefined> {
  if (!objects.some((o) => ingressHosts(o).length > 0)) return undefined;
  const live = await ctx.cluster.list("networking.k8s.io/v1", "Ingress", "");
  const conflicts = hostConflicts(objects, live, ctx.ref);
  if (conflicts.length === 0) return undefined;
  const what = conflicts.map((c) => `${c.host} is already served by ${c.ingress}`).join("; ");
  return {
    reason: FailureReason.HostConflict,
    message: `${what}; nothing applied`,
    stalled: false,
    transient: true,
  };
}
