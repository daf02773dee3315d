// The observe step: the live objects of an App, one list per kind (by tracking labels), their
// health, and how they compare with the desired state.
import { type InventoryEntry, LABEL_APP, LABEL_APP_NAMESPACE } from "../app/index.ts";
import {
  gvkKey,
  type KubeObject,
  type NamespacedName,
  type ObjectRef,
  refKey,
  refOf,
} from "../core/index.ts";
import { assessSet, type HealthResult, type SetHealth } from "../health/index.ts";
import {
  appliedForms,
  autoscaledCompareForms,
  type Comparison,
  compareDesired,
  dedupeRefs,
  FINISHED_MESSAGE,
  finishedJobs,
  keepLiveSelector,
  markFinished,
} from "../plan/index.ts";
import { redactOf } from "./apply.ts";
import { compareWithServer } from "./compare.ts";
import type { RunContext } from "./context.ts";
import { explainProgressing } from "./pods.ts";
import type { ClusterPort } from "./ports.ts";
import type { Desired } from "./source.ts";
import { adopting } from "./takeover.ts";

/** Label selector for the objects of App namespace/name. */
export function appSelector(namespace: string, name: string): string {
  return `${LABEL_APP}=${name},${LABEL_APP_NAMESPACE}=${namespace}`;
}

/**
 * Lists the live objects of the given refs' kinds that carry the App's tracking labels:
 * one list request per kind (in the namespace when all refs of the kind share one). Namespaces
 * are read by name instead (one get each), whoever labels them: several Apps may render one.
 * @returns live objects by refKey
 */
export async function listLive(
  refs: readonly ObjectRef[],
  app: NamespacedName,
  cluster: ClusterPort,
): Promise<Map<string, KubeObject>> {
  const byKind = new Map<string, ObjectRef[]>();
  for (const ref of refs) {
    const key = gvkKey(ref.apiVersion, ref.kind);
    byKind.set(key, [...(byKind.get(key) ?? []), ref]);
  }
  const live = new Map<string, KubeObject>();
  for (const group of byKind.values()) {
    const first = group[0]!;
    if (first.kind === "Namespace" && first.apiVersion === "v1") {
      // A Namespace may be shared: another App's labels may be on it.
      for (const ref of group) {
        const ns = await cluster.get(ref);
        if (ns) live.set(refKey(ref), { ...ns, apiVersion: "v1", kind: "Namespace" });
      }
      continue;
    }
    const namespaces = new Set(group.map((r) => r.namespace ?? ""));
    const ns = namespaces.size === 1 && first.namespace ? first.namespace : undefined;
    const items = await cluster.list(
      first.apiVersion,
      first.kind,
      appSelector(app.namespace, app.name),
      ns,
    );
    for (const obj of items) {
      const ref: ObjectRef = {
        apiVersion: first.apiVersion,
        kind: first.kind,
        name: obj.metadata.name,
      };
      if (obj.metadata.namespace) ref.namespace = obj.metadata.namespace;
      live.set(refKey(ref), obj);
    }
  }
  return live;
}

/** What the observe step saw: health of the inventory and the desired-versus-live comparison. */
export interface Observation {
  health: SetHealth;
  comparison: Comparison;
  /** The inventory with its finished Jobs marked (finishedJobs). */
  inventory: InventoryEntry[];
  /** The live objects of the inventory and the desired set, by refKey. */
  live: ReadonlyMap<string, KubeObject>;
}

/**
 * Lists the live objects of the inventory and the desired set (one list per kind), assesses
 * the inventory's health and compares each object with what the API server would store if it
 * were applied (compareWithServer: a dry run per suspect object; compareDesired).
 * @param desired the rendered set, or undefined on the fast path (health only)
 * @param held the desired set is held for approval (a preview, not drift)
 * @param dryRuns receives the dry runs' results by refKey, when given (`plumb diff`)
 */
export async function observe(
  ctx: RunContext,
  desired: Desired | undefined,
  held = false,
  dryRuns?: Map<string, KubeObject>,
): Promise<Observation> {
  const refs = dedupeRefs([...ctx.inventory, ...(desired?.objects.map(refOf) ?? [])]);
  const live = await listLive(refs, ctx.ref, ctx.cluster);
  const finished = finishedJobs(ctx.inventory, live, desired);
  // Health is the inventory's; while the render whose apply failed is the desired one, its
  // objects count too, so one the API server refused is Missing, not left out (a failed
  // apply never reads as Healthy; Argo CD counts every resource of the App the same way).
  const failed = desired && !held && ctx.prev.failedObjectHash === desired.objectHash;
  const assessed = failed
    ? dedupeRefs([...ctx.inventory, ...desired.objects.map(refOf)])
    : ctx.inventory;
  // A workload that does not progress is named by its Pods' reason (ImagePullBackOff...).
  const health = await explainProgressing(
    ctx,
    assessed,
    assessSet(assessed, live, ctx.now, finishedHealth(finished)),
    live,
  );
  // An adopting App keeps immutable selectors from the live objects: compare with those.
  const wanted = adopting(ctx)
    ? desired?.objects.map((o) => {
        const have = live.get(refKey(refOf(o)));
        return have ? keepLiveSelector(o, have) : o;
      })
    : desired?.objects;
  const applied = desired
    ? appliedForms(ctx.inventory, desired.hashes, ctx.prev.objectHash, desired.objectHash)
    : new Set<string>();
  const diffs = desired
    ? await compareWithServer(
        autoscaledCompareForms(wanted ?? []),
        live,
        applied,
        ctx.cluster,
        redactOf(ctx),
        dryRuns,
      )
    : undefined;
  const comparison = compareDesired({
    inventory: ctx.inventory,
    desired: wanted,
    live,
    health: health.byKey,
    held,
    previous: ctx.prev.resources ?? [],
    diffs,
    applied,
    done: new Map([...finished].map((key) => [key, FINISHED_MESSAGE])),
  });
  return { health, comparison, inventory: markFinished(ctx.inventory, finished), live };
}

/** The health of finished Jobs its TTL removed: Healthy, saying so. */
export function finishedHealth(finished: ReadonlySet<string>): Map<string, HealthResult> {
  return new Map(
    [...finished].map((key) => [key, { status: "Healthy" as const, message: FINISHED_MESSAGE }]),
  );
}
