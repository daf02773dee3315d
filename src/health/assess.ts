// Health of a set of objects: each one's, and the worst-first aggregate. Pure.
import type { HealthStatus } from "../app/index.ts";
import { type KubeObject, type ObjectRef, refKey } from "../core/index.ts";
import { aggregateHealth, type HealthItem } from "./aggregate.ts";
import { celHealth, type HealthChecks } from "./cel.ts";
import { assessHealth } from "./rules.ts";
import type { HealthResult } from "./util.ts";

/** Health of each ref by refKey, and the aggregate (status and a reason naming the worst). */
export interface SetHealth {
  byKey: Map<string, HealthResult>;
  status: HealthStatus;
  reason: string;
}

/**
 * Health of each of `refs` (Missing when `live` lacks it) and their worst-first aggregate;
 * Healthy with reason "no objects" for an empty set.
 * @param live live objects by refKey
 * @param now the run's clock (health rules compare deadlines with it)
 * @param known health already decided by refKey, used as is (a finished Job its TTL removed)
 * @param checks the App's compiled spec.healthChecks: for a live object of a kind they name
 *   (and not being deleted), their verdict comes before the built-in rule (celHealth)
 */
export function assessSet(
  refs: readonly ObjectRef[],
  live: ReadonlyMap<string, KubeObject>,
  now: Date,
  known?: ReadonlyMap<string, HealthResult>,
  checks?: HealthChecks,
): SetHealth {
  const byKey = new Map<string, HealthResult>();
  for (const ref of refs) {
    const key = refKey(ref);
    byKey.set(key, known?.get(key) ?? assessWith(live.get(key), now, checks));
  }
  return aggregateSet(refs, byKey);
}

/**
 * The SetHealth of `refs` from each one's health in `byKey` (Unknown when absent): the worst-
 * first aggregate, e.g. after a workload's health was explained by its Pods.
 */
export function aggregateSet(
  refs: readonly ObjectRef[],
  byKey: ReadonlyMap<string, HealthResult>,
): SetHealth {
  const items: HealthItem[] = refs.map((ref) => ({
    kind: ref.kind,
    namespace: ref.namespace,
    name: ref.name,
    health: byKey.get(refKey(ref)) ?? { status: "Unknown" },
  }));
  const agg = aggregateHealth(items);
  return { byKey: new Map(byKey), status: agg.status, reason: agg.reason };
}

/** One object's health: the App's health check for its kind when one applies, else the rule. */
function assessWith(
  obj: KubeObject | undefined,
  now: Date,
  checks: HealthChecks | undefined,
): HealthResult {
  if (obj === undefined || !checks || obj.metadata?.deletionTimestamp)
    return assessHealth(obj, now);
  return celHealth(checks, obj) ?? assessHealth(obj, now);
}
