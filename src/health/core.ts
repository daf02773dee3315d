// Health rules for core/v1, networking, autoscaling and apiextensions kinds.

import type { KubeObject } from "../core/index.ts";
import {
  arr,
  type Cond,
  conditionsOf,
  describe,
  findCondition,
  type HealthResult,
  obj,
  parseConditions,
  result,
  specOf,
  statusOf,
  str,
} from "./util.ts";

/** Set by the scheduler on a WaitForFirstConsumer claim once a consuming pod is placed. */
const ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node";
/** Set by the PV controller when dynamic provisioning of the claim starts. */
const ANN_PROVISIONER = "volume.kubernetes.io/storage-provisioner";
const ANN_PROVISIONER_BETA = "volume.beta.kubernetes.io/storage-provisioner";
/** Where the autoscaling/v1 API carries the v2 conditions of an HPA. */
const ANN_HPA_V1_CONDITIONS = "autoscaling.alpha.kubernetes.io/conditions";

/**
 * v1/PersistentVolumeClaim, after Argo CD (health_pvc.go) and kstatus (core.go pvcConditions).
 * - phase Bound → Healthy; Lost (its volume is gone) → Degraded.
 * - phase Pending → Progressing, except a claim waiting for its first consumer → Healthy.
 *
 * WaitForFirstConsumer is a StorageClass setting and the PV controller only reports it as an
 * Event, so it is inferred from the claim alone: for a pending claim with a storage class and no
 * spec.volumeName, the PV controller (pkg/controller/volume/persistentvolume, syncUnboundClaim)
 * either starts provisioning, which sets the `volume.kubernetes.io/storage-provisioner`
 * annotation (and its beta twin), or, when binding is delayed and the scheduler has not set
 * `volume.kubernetes.io/selected-node`, waits. So: Pending, storageClassName set, no volumeName
 * and none of those three annotations → Healthy "waiting for first consumer". This is the rule
 * proposed for Argo CD in argoproj/argo-cd#29205 (issue #29201), tightened by the class and
 * selected-node checks. A claim without a class (static binding) stays Progressing. Cost: an
 * Immediate claim reads Healthy for the moment before the controller first syncs it.
 */
export function pvcHealth(o: KubeObject): HealthResult {
  const spec = specOf(o);
  const phase = str(statusOf(o)["phase"]) ?? "Pending";
  if (phase === "Bound") {
    return result("Healthy", `bound to ${str(spec["volumeName"]) ?? "volume"}`);
  }
  if (phase === "Lost") {
    return result("Degraded", "claim lost: its PersistentVolume no longer exists");
  }
  if (phase !== "Pending") return result("Unknown", `phase ${phase}`);
  const ann = o.metadata.annotations ?? {};
  const provisioner = ann[ANN_PROVISIONER] ?? ann[ANN_PROVISIONER_BETA];
  if (provisioner) return result("Progressing", `waiting for ${provisioner} to provision a volume`);
  const storageClass = str(spec["storageClassName"]);
  if (storageClass && !str(spec["volumeName"]) && !ann[ANN_SELECTED_NODE]) {
    return result("Healthy", `waiting for first consumer (storage class ${storageClass})`);
  }
  return result("Progressing", "waiting for a volume to bind");
}

/** "10.0.0.7, lb.example.com" from status.loadBalancer.ingress, or "" when empty. */
function lbAddresses(o: KubeObject): string {
  return arr(obj(statusOf(o)["loadBalancer"])["ingress"])
    .map((i) => str(obj(i)["ip"]) ?? str(obj(i)["hostname"]))
    .filter((a): a is string => a !== undefined)
    .join(", ");
}

/**
 * v1/Service, after Argo CD (health_service.go): type LoadBalancer without
 * status.loadBalancer.ingress → Progressing "waiting for load balancer"; every Service else is
 * Healthy (kstatus core.go serviceConditions only waits for a clusterIP).
 */
export function serviceHealth(o: KubeObject): HealthResult {
  if (specOf(o)["type"] !== "LoadBalancer") return result("Healthy");
  const addresses = lbAddresses(o);
  if (!addresses) return result("Progressing", "waiting for load balancer");
  return result("Healthy", `load balancer at ${addresses}`);
}

/**
 * networking.k8s.io/Ingress: always Healthy, as kstatus does (no rule, so "current").
 * Argo CD (health_ingress.go) reports Progressing until status.loadBalancer.ingress is set, but
 * many controllers never write that field (and none runs in a bare test cluster), which would
 * leave the App Progressing forever. The address, when published, is given as the message.
 */
export function ingressHealth(o: KubeObject): HealthResult {
  const addresses = lbAddresses(o);
  return result("Healthy", addresses ? `address ${addresses}` : undefined);
}

/** v1/Namespace: status.phase Terminating → Progressing; else Healthy. */
export function namespaceHealth(o: KubeObject): HealthResult {
  if (statusOf(o)["phase"] === "Terminating") return result("Progressing", "terminating");
  return result("Healthy");
}

/**
 * apiextensions.k8s.io/CustomResourceDefinition, after kstatus (core.go crdConditions) and
 * Argo CD (health_customresourcedefinition.go):
 * NamesAccepted=False → Degraded; Established=True → Healthy; else Progressing.
 */
export function crdHealth(o: KubeObject): HealthResult {
  const conds = conditionsOf(o);
  const names = findCondition(conds, "NamesAccepted");
  if (names?.status === "False") return result("Degraded", describe(names));
  const established = findCondition(conds, "Established");
  if (established?.status === "True") return result("Healthy", "established");
  return result(
    "Progressing",
    established ? `not established: ${describe(established)}` : "waiting to be established",
  );
}

/** HPA conditions: status.conditions (v2), or the JSON annotation the autoscaling/v1 API uses. */
function hpaConditions(o: KubeObject): Cond[] {
  const v2 = conditionsOf(o);
  if (v2.length > 0) return v2;
  const raw = o.metadata.annotations?.[ANN_HPA_V1_CONDITIONS];
  if (!raw) return [];
  try {
    return parseConditions(JSON.parse(raw));
  } catch {
    return [];
  }
}

/** ScalingActive=False reasons that mean the HPA itself is misconfigured. */
const HPA_CONFIG_ERRORS = new Set([
  "InvalidSelector",
  "AmbiguousSelector",
  "InvalidMetricSourceType",
]);

/**
 * autoscaling/HorizontalPodAutoscaler (v1 and v2), after Argo CD (health_hpa.go) with one
 * deliberate difference.
 * - no conditions yet → Progressing "waiting to autoscale" (Argo).
 * - AbleToScale=False → Degraded (FailedGetScale, FailedUpdateScale: the target cannot be
 *   scaled), except the transient Backoff* reasons of a stabilization window.
 * - ScalingActive=False:
 *   - InvalidSelector, AmbiguousSelector, InvalidMetricSourceType → Degraded (Argo: InvalidSelector).
 *   - ScalingDisabled (the target was scaled to 0, which switches autoscaling off) → Suspended.
 *   - any other reason, typically FailedGetResourceMetric/FailedGetPodsMetric when no metrics
 *     server answers → Healthy "scaling inactive: ...". Argo reports Degraded here; plumb does
 *     not, because the workload itself is fine and only autoscaling lacks input — Degraded would
 *     keep every App with an HPA unhealthy on clusters without metrics-server.
 * - else Healthy, with the ScalingLimited reason when the replica count is at a bound.
 */
export function hpaHealth(o: KubeObject): HealthResult {
  const conds = hpaConditions(o);
  if (conds.length === 0) return result("Progressing", "waiting to autoscale");
  const able = findCondition(conds, "AbleToScale");
  if (able?.status === "False" && !able.reason?.startsWith("Backoff")) {
    return result("Degraded", describe(able));
  }
  const active = findCondition(conds, "ScalingActive");
  if (active?.status === "False") {
    if (active.reason && HPA_CONFIG_ERRORS.has(active.reason)) {
      return result("Degraded", describe(active));
    }
    if (active.reason === "ScalingDisabled") return result("Suspended", describe(active));
    return result("Healthy", `scaling inactive: ${describe(active)}`);
  }
  const limited = findCondition(conds, "ScalingLimited");
  return result("Healthy", limited?.status === "True" ? describe(limited) : undefined);
}

/** Kinds with no status to speak of: always Healthy once they exist (kstatus alwaysReady). */
export function alwaysHealthy(): HealthResult {
  return result("Healthy");
}
