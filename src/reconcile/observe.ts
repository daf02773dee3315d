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
  confirmOwned,
  dedupeRefs,
  finishedJobs,
  finishedMessages,
  keepIgnoredLive,
  keepLiveSelector,
  lastApplied,
  markFinished,
} from "../plan/index.ts";
import { redactOf } from "./apply.ts";
import { compareWithServer } from "./compare.ts";
import type { RunContext } from "./context.ts";
import { ignoreRules } from "./ignore.ts";
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
  /** The health of `assessed`, each object's by refKey. */
  health: SetHealth;
  /** The objects whose health counts, in order: the inventory (and the render, see observe). */
  assessed: readonly ObjectRef[];
  /** The live objects of the inventory and the desired set, by refKey. */
  live: Map<string, KubeObject>;
  comparison: Comparison;
  /** The inventory with its finished Jobs marked (finishedJobs). */
  inventory: InventoryEntry[];
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
  const done = finishedMessages(finished, desired?.objects);
  // Health is the inventory's; while the render whose apply failed is the desired one, its
  // objects count too, so one the API server refused is Missing, not left out (a failed
  // apply never reads as Healthy; Argo CD counts every resource of the App the same way).
  // So do the objects of a held render: one approving would create is Missing, not left out
  // (an App held before anything was applied is not Healthy; Argo CD shows an App never
  // synced as Missing: controller/health.go setApplicationHealth).
  const failed = desired && !held && ctx.prev.failedObjectHash === desired.objectHash;
  const assessed =
    desired && (failed || held)
      ? dedupeRefs([...ctx.inventory, ...desired.objects.map(refOf)])
      : ctx.inventory;
  const known = finishedHealth(done);
  if (desired && held)
    for (const [key, h] of heldMissing(desired, live, ctx.inventory)) known.set(key, h);
  // A workload that does not progress is named by its Pods' reason (ImagePullBackOff...).
  const health = await explainProgressing(
    ctx,
    assessed,
    assessSet(assessed, live, ctx.now, known, ctx.healthChecks),
    live,
  );
  // An adopting App keeps immutable selectors from the live objects: compare with those.
  // Ignored fields (spec.ignoreDifferences) take their live values: never a difference.
  const rules = ignoreRules(ctx);
  const wanted = desired?.objects.map((o) => {
    const have = live.get(refKey(refOf(o)));
    if (!have) return o;
    return keepIgnoredLive(adopting(ctx) ? keepLiveSelector(o, have) : o, have, rules);
  });
  const applied = desired
    ? appliedForms(ctx.inventory, desired.hashes, ctx.prev.objectHash, desired.objectHash)
    : new Set<string>();
  const diffs = desired
    ? await compareWithServer(
        autoscaledCompareForms(wanted ?? []),
        live,
        lastApplied(ctx.inventory, applied),
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
    done,
  });
  // Objects found as desired hold plumb's values in their owned fields now: recorded, so a
  // dry run that confirmed a normalised value is not asked again next run.
  const confirmed = new Set(
    [...(diffs ?? [])]
      .filter(([key, d]) => applied.has(key) && "fields" in d && d.fields.length === 0)
      .map(([key]) => key),
  );
  const inventory = await confirmOwned(markFinished(ctx.inventory, finished), confirmed, live);
  return { health, assessed, live, comparison, inventory };
}

/** The health of finished objects (finishedMessages: Jobs their TTL removed, hooks that ran):
 * Healthy, saying so. */
export function finishedHealth(done: ReadonlyMap<string, string>): Map<string, HealthResult> {
  return new Map([...done].map(([key, message]) => [key, { status: "Healthy" as const, message }]));
}

/** What the held preview says of an object approving creates (as its line: compareDesired). */
const HELD_CREATE_MESSAGE = "will be created";

/**
 * The health of each object of a held render that is neither live nor in the inventory:
 * Missing, "will be created" (what approving does), by refKey.
 */
function heldMissing(
  desired: Desired,
  live: ReadonlyMap<string, KubeObject>,
  inventory: readonly ObjectRef[],
): Map<string, HealthResult> {
  const owned = new Set(inventory.map(refKey));
  const out = new Map<string, HealthResult>();
  for (const o of desired.objects) {
    const key = refKey(refOf(o));
    if (!live.has(key) && !owned.has(key)) {
      out.set(key, { status: "Missing", message: HELD_CREATE_MESSAGE });
    }
  }
  return out;
}
