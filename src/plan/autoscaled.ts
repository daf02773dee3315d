// Workloads an autoscaler scales: their spec.replicas belongs to the
// HorizontalPodAutoscaler once it exists, so plumb neither resets it nor calls it drift. Pure.
import { isRecord, type KubeObject, refKey, refOf } from "../core/index.ts";

/** The field manager that keeps a workload's first replicas until the autoscaler changes them. */
export const REPLICAS_HANDOVER_MANAGER = "plumb-replicas-handover";

/** "Kind/namespace/name" of a workload, whatever its group and version. */
const workloadKey = (kind: string, namespace: string | undefined, name: string) =>
  `${kind}/${namespace ?? ""}/${name}`;

/**
 * The workloads the render's HorizontalPodAutoscalers target (any autoscaling version), by
 * refKey, each with the refKey of its HPA. A target is matched by kind, name and the HPA's
 * namespace (scaleTargetRef names no namespace; its apiVersion may be omitted). An HPA that
 * plumb does not render (another tool's) is not seen: such a workload's manifest should leave
 * replicas out, as Argo CD and Flux advise.
 */
export function autoscaledTargets(objects: readonly KubeObject[]): Map<string, string> {
  const hpas = new Map<string, string>();
  for (const obj of objects) {
    if (obj.kind !== "HorizontalPodAutoscaler" || !obj.apiVersion.startsWith("autoscaling/"))
      continue;
    const spec = obj["spec"];
    const target = isRecord(spec) ? spec["scaleTargetRef"] : undefined;
    if (
      !isRecord(target) ||
      typeof target["kind"] !== "string" ||
      typeof target["name"] !== "string"
    ) {
      continue;
    }
    hpas.set(
      workloadKey(target["kind"], obj.metadata.namespace, target["name"]),
      refKey(refOf(obj)),
    );
  }
  const out = new Map<string, string>();
  for (const obj of objects) {
    const hpa = hpas.get(workloadKey(obj.kind, obj.metadata.namespace, obj.metadata.name));
    if (hpa !== undefined) out.set(refKey(refOf(obj)), hpa);
  }
  return out;
}

/** A copy of `obj` without spec.replicas (the object itself when it sets none). */
export function withoutReplicas(obj: KubeObject): KubeObject {
  const spec = obj["spec"];
  if (!isRecord(spec) || !("replicas" in spec)) return obj;
  const { replicas: _r, ...rest } = spec;
  return { ...obj, spec: rest };
}

/**
 * The forms to apply when HPAs target workloads of the render:
 * - a targeted workload that was already applied together with its HPA (both in the previous
 *   inventory, `owned`) is applied without spec.replicas, so an apply never resets what the
 *   HPA (or `kubectl scale`) set;
 * - otherwise (the workload or its HPA is new) it is applied with its replicas, and listed in
 *   `handover`: the loop then gives those replicas to REPLICAS_HANDOVER_MANAGER, so that
 *   dropping them from plumb's next apply does not delete them (the hand-over the Kubernetes
 *   docs describe: kubernetes.io/docs/reference/using-api/server-side-apply/#transferring-ownership).
 * @param render the whole render, where the HPAs are found (default `objects`: a sync that
 *   applies only what changed passes the objects to apply and the render apart)
 */
export function autoscaledApplyForms(
  objects: readonly KubeObject[],
  owned: ReadonlySet<string>,
  render: readonly KubeObject[] = objects,
): { objects: KubeObject[]; handover: Set<string> } {
  const targets = autoscaledTargets(render);
  const handover = new Set<string>();
  const out = objects.map((obj) => {
    const key = refKey(refOf(obj));
    const hpa = targets.get(key);
    if (hpa === undefined || !hasReplicas(obj)) return obj;
    if (owned.has(key) && owned.has(hpa)) return withoutReplicas(obj);
    handover.add(key);
    return obj;
  });
  return { objects: out, handover };
}

/** The forms to compare with the live state: spec.replicas of an HPA's target is never drift. */
export function autoscaledCompareForms(objects: readonly KubeObject[]): KubeObject[] {
  const targets = autoscaledTargets(objects);
  return objects.map((obj) => (targets.has(refKey(refOf(obj))) ? withoutReplicas(obj) : obj));
}

/**
 * The object that hands `stored`'s replicas over (an apply of spec.replicas alone, under
 * REPLICAS_HANDOVER_MANAGER), or undefined when it has none.
 */
export function replicasHandover(stored: KubeObject): KubeObject | undefined {
  const spec = stored["spec"];
  const replicas = isRecord(spec) ? spec["replicas"] : undefined;
  if (typeof replicas !== "number") return undefined;
  const metadata: KubeObject["metadata"] = { name: stored.metadata.name };
  if (stored.metadata.namespace) metadata.namespace = stored.metadata.namespace;
  return { apiVersion: stored.apiVersion, kind: stored.kind, metadata, spec: { replicas } };
}

function hasReplicas(obj: KubeObject): boolean {
  const spec = obj["spec"];
  return isRecord(spec) && spec["replicas"] !== undefined;
}
