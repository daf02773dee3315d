// Observe: the live objects of an App, one list per kind (by tracking labels), and their health.
import type { HealthStatus, ObjectRef, ResourceStatus } from "../app/index.ts";
import { LABEL_APP, LABEL_APP_NAMESPACE } from "../app/index.ts";
import { gvkKey, type KubeObject, refKey } from "../core/index.ts";
import { aggregateHealth, assessHealth, type HealthItem } from "../health/index.ts";
import type { Ports } from "./ports.ts";

/** Label selector for the objects of App namespace/name. */
export function appSelector(namespace: string, name: string): string {
  return `${LABEL_APP}=${name},${LABEL_APP_NAMESPACE}=${namespace}`;
}

/**
 * Lists the live objects of the given refs' kinds that carry the App's tracking labels:
 * one list request per kind (in the namespace when all refs of the kind share one).
 * @returns live objects by refKey
 */
export async function listLive(
  refs: readonly ObjectRef[],
  app: { namespace: string; name: string },
  ports: Ports,
): Promise<Map<string, KubeObject>> {
  const byKind = new Map<string, ObjectRef[]>();
  for (const ref of refs) {
    const key = gvkKey(ref.apiVersion, ref.kind);
    byKind.set(key, [...(byKind.get(key) ?? []), ref]);
  }
  const live = new Map<string, KubeObject>();
  for (const group of byKind.values()) {
    const first = group[0]!;
    const namespaces = new Set(group.map((r) => r.namespace ?? ""));
    const ns = namespaces.size === 1 && first.namespace ? first.namespace : undefined;
    const items = await ports.kube.list(
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

/** Health of each ref (Missing when not live), and the worst-first aggregate. */
export function healthOf(
  refs: readonly ObjectRef[],
  live: ReadonlyMap<string, KubeObject>,
  now: Date,
): {
  byKey: Map<string, { status: HealthStatus; message?: string }>;
  status: HealthStatus;
  reason: string;
} {
  const byKey = new Map<string, { status: HealthStatus; message?: string }>();
  const items: HealthItem[] = [];
  for (const ref of refs) {
    const h = assessHealth(live.get(refKey(ref)), now);
    byKey.set(refKey(ref), h);
    items.push({ kind: ref.kind, namespace: ref.namespace, name: ref.name, health: h });
  }
  const agg =
    items.length > 0
      ? aggregateHealth(items)
      : { status: "Healthy" as const, reason: "no objects" };
  return { byKey, status: agg.status, reason: agg.reason };
}

/** A resource line for status.resources. */
export function resourceStatus(
  ref: ObjectRef,
  status: ResourceStatus["status"],
  health: { status: HealthStatus; message?: string } | undefined,
  message?: string,
): ResourceStatus {
  const out: ResourceStatus = { ...ref, status };
  if (health) out.health = health.status;
  const text = message ?? health?.message;
  if (text) out.message = text.slice(0, 1024);
  return out;
}
