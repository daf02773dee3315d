// Before a prune deletes a Namespace or a CRD: what would go with it.
import { KubeApiError, type KubeObject, refKey } from "../core/index.ts";
import { cascadeOf, cascadeReason, foreignContents, type PrunePlan } from "../plan/index.ts";
import type { RunContext } from "./context.ts";

/**
 * Moves out of `plan.delete` every Namespace or CustomResourceDefinition whose deletion would
 * delete objects that are not this App's (foreignContents): everything in the Namespace, every
 * custom resource of the CRD in any namespace. They are kept with a reason worth a Warning
 * Event, and stay in the inventory (`keep`): the App still owns them and prunes them on a later
 * run, once nothing but its own objects would go with them (dropped, nothing would). A repository cannot opt out
 * (its annotation plumb.dev/prune only opts the object in); the cluster-wide setting
 * `ports.allowCascadingPrune` (PLUMB_ALLOW_CASCADING_PRUNE) skips the check. When what the
 * deletion would take cannot be listed (a kind plumb may not list), the object is kept too.
 * Reads: 2 discovery requests and one list per namespaced kind for a Namespace; one get and
 * one list for a CRD. Only when such an object is about to be pruned.
 */
export async function guardCascades(ctx: RunContext, plan: PrunePlan): Promise<PrunePlan> {
  if (ctx.ports.allowCascadingPrune) return plan;
  const out: PrunePlan = { delete: [], skip: [...plan.skip] };
  const inventory = new Set(ctx.inventory.map(refKey));
  for (const ref of plan.delete) {
    const cascade = cascadeOf(ref);
    if (!cascade) {
      out.delete.push(ref);
      continue;
    }
    let contents: KubeObject[];
    try {
      contents = await (cascade === "namespace"
        ? ctx.cluster.listNamespaceContents(ref.name)
        : customResources(ctx, ref));
    } catch (e) {
      if (!(e instanceof KubeApiError)) throw e;
      out.skip.push({
        ref,
        reason: `${ref.kind} ${ref.name} is not pruned: what deleting it would delete could not be listed (${e.message})`,
        keep: true,
        warn: true,
      });
      continue;
    }
    const foreign = foreignContents({ contents, app: ctx.ref, inventory });
    if (foreign.length === 0) out.delete.push(ref);
    else out.skip.push({ ref, reason: cascadeReason(ref, foreign), keep: true, warn: true });
  }
  return out;
}

/** Every custom resource of the CRD `ref`, in every namespace (its served, stored version). */
async function customResources(
  ctx: RunContext,
  ref: { apiVersion: string; kind: string; name: string },
): Promise<KubeObject[]> {
  const crd = await ctx.cluster.get(ref);
  if (!crd) return [];
  const spec = (crd["spec"] ?? {}) as {
    group?: string;
    names?: { kind?: string };
    versions?: Array<{ name: string; served?: boolean; storage?: boolean }>;
  };
  const version =
    spec.versions?.find((v) => v.storage && v.served) ?? spec.versions?.find((v) => v.served);
  if (!spec.group || !spec.names?.kind || !version) return [];
  return ctx.cluster.list(`${spec.group}/${version.name}`, spec.names.kind, "");
}
