// Health rules for core/v1, networking, autoscaling and apiextensions kinds.

import type { KubeObject } from "../core/index.ts";
import {
  annotation,
  arr,
  type Cond,
  conditionsOf,
  describe,
  findCondition,
  type HealthResult,
  num,
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
 * proposed to Argo CD for claims of a WaitForFirstConsumer class, tightened by the class and
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
  const provisioner = annotation(o, ANN_PROVISIONER) ?? annotation(o, ANN_PROVISIONER_BETA);
  if (provisioner) return result("Progressing", `waiting for ${provisioner} to provision a volume`);
  const storageClass = str(spec["storageClassName"]);
  if (storageClass && !str(spec["volumeName"]) && !annotation(o, ANN_SELECTED_NODE)) {
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
 * v1/Service, after Argo CD (health_service.go): type LoadBalancer with no entry in
 * status.loadBalancer.ingress → Progressing "waiting for load balancer"; with any entry, even
 * one without ip or hostname (`[{}]`, as some load balancer controllers publish) → Healthy.
 * Every other Service is Healthy (kstatus core.go serviceConditions only waits for a clusterIP).
 */
export function serviceHealth(o: KubeObject): HealthResult {
  if (specOf(o)["type"] !== "LoadBalancer") return result("Healthy");
  const entries = arr(obj(statusOf(o)["loadBalancer"])["ingress"]);
  if (entries.length === 0) return result("Progressing", "waiting for load balancer");
  const addresses = lbAddresses(o);
  return result("Healthy", addresses ? `load balancer at ${addresses}` : "load balancer ready");
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
 * apiextensions.k8s.io/CustomResourceDefinition, after kstatus (core.go CRDConditions) and
 * Argo CD (resource_customizations/apiextensions.k8s.io/CustomResourceDefinition/health.lua):
 * - Terminating=True → Progressing;
 * - NamesAccepted=False or NonStructuralSchema=True → Degraded;
 * - Established=True → Healthy; Established=False with reason Installing → Progressing, with
 *   another reason → Degraded;
 * - no Established condition yet → Progressing (kstatus; Argo calls a CRD with conditions but
 *   none of them Established Degraded, which the API server only shows for a moment).
 */
export function crdHealth(o: KubeObject): HealthResult {
  const conds = conditionsOf(o);
  const terminating = findCondition(conds, "Terminating");
  if (terminating?.status === "True")
    return result("Progressing", `terminating: ${describe(terminating)}`);
  const names = findCondition(conds, "NamesAccepted");
  if (names?.status === "False")
    return result("Degraded", `names not accepted: ${describe(names)}`);
  const schema = findCondition(conds, "NonStructuralSchema");
  if (schema?.status === "True")
    return result("Degraded", `schema violations: ${describe(schema)}`);
  const established = findCondition(conds, "Established");
  if (established?.status === "True") return result("Healthy", "established");
  if (established?.status === "False" && established.reason !== "Installing") {
    return result("Degraded", `not established: ${describe(established)}`);
  }
  return result(
    "Progressing",
    established ? `not established: ${describe(established)}` : "waiting to be established",
  );
}

/** HPA conditions: status.conditions (v2), or the JSON annotation the autoscaling/v1 API uses. */
function hpaConditions(o: KubeObject): Cond[] {
  const v2 = conditionsOf(o);
  if (v2.length > 0) return v2;
  const raw = annotation(o, ANN_HPA_V1_CONDITIONS);
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

/** AbleToScale reasons the HPA controller gives when it cannot read or update the target. */
const HPA_SCALE_ERRORS = new Set(["FailedGetScale", "FailedUpdateScale"]);

/**
 * autoscaling/HorizontalPodAutoscaler (v1 and v2), after Argo CD (health_hpa.go), made
 * independent of the order of the conditions (Argo takes the first condition that decides).
 * - no conditions yet → Progressing "waiting to autoscale".
 * - AbleToScale with reason FailedGetScale or FailedUpdateScale (whatever its status, as Argo
 *   matches it) → Degraded: the target cannot be read or scaled.
 * - ScalingActive=False with InvalidSelector, AmbiguousSelector or InvalidMetricSourceType →
 *   Degraded (Argo: InvalidSelector; the other two are the same kind of misconfiguration).
 * - AbleToScale=True or ScalingLimited=True → Healthy (Argo's healthy conditions), saying
 *   when the count is at a bound, when scaling is disabled (the target was scaled to zero:
 *   Argo and kstatus call that Healthy too), or when scaling is inactive for lack of metrics
 *   (FailedGetResourceMetric and the like: Argo lists FailedGetResourceMetric as Degraded, but
 *   only reaches it when that condition comes before AbleToScale, which the HPA controller
 *   never writes; an App should not turn Degraded on a cluster without metrics-server).
 * - else (no AbleToScale yet, or AbleToScale=False for another reason) → Progressing.
 */
export function hpaHealth(o: KubeObject): HealthResult {
  const conds = hpaConditions(o);
  if (conds.length === 0) return result("Progressing", "waiting to autoscale");
  const able = findCondition(conds, "AbleToScale");
  if (able?.reason && HPA_SCALE_ERRORS.has(able.reason)) return result("Degraded", describe(able));
  const active = findCondition(conds, "ScalingActive");
  if (active?.status === "False" && active.reason && HPA_CONFIG_ERRORS.has(active.reason)) {
    return result("Degraded", describe(active));
  }
  const limited = findCondition(conds, "ScalingLimited");
  if (able?.status !== "True" && limited?.status !== "True") {
    return result(
      "Progressing",
      able ? `waiting to autoscale: ${describe(able)}` : "waiting to autoscale",
    );
  }
  if (active?.status === "False") {
    const what = active.reason === "ScalingDisabled" ? "scaling disabled" : "scaling inactive";
    return result("Healthy", `${what}: ${describe(active)}`);
  }
  return result("Healthy", limited?.status === "True" ? describe(limited) : undefined);
}

/**
 * apiregistration.k8s.io/APIService, after Argo CD (health_apiservice.go): condition
 * Available=True → Healthy; Available False or Unknown → Progressing with its reason and
 * message (the aggregated API server is not answering yet); no condition → Progressing
 * "waiting to be processed". kstatus has no rule (an APIService would read Current).
 */
export function apiServiceHealth(o: KubeObject): HealthResult {
  const available = findCondition(conditionsOf(o), "Available");
  if (!available) return result("Progressing", "waiting to be processed");
  if (available.status === "True") return result("Healthy", describe(available));
  return result("Progressing", `not available: ${describe(available)}`);
}

/**
 * policy/PodDisruptionBudget, after Argo CD (resource_customizations/policy/
 * PodDisruptionBudget/health.lua): no status yet → Progressing (the disruption controller
 * has not computed it; a status with observedGeneration and no conditions, as before 1.21, is
 * Healthy as kstatus has it); a condition False for a reason other than InsufficientPods (SyncFailed:
 * the budget cannot be computed) → Degraded; else Healthy — no disruption allowed right now
 * (InsufficientPods) is a normal state. kstatus calls every PDB Current.
 */
export function pdbHealth(o: KubeObject): HealthResult {
  const conds = conditionsOf(o);
  if (conds.length === 0) {
    // Before Kubernetes 1.21 the status had no conditions: observedGeneration says it is computed.
    if (typeof statusOf(o)["observedGeneration"] === "number") return result("Healthy");
    return result("Progressing", "waiting for the disruption controller");
  }
  const failed = conds.find((c) => c.status === "False" && c.reason !== "InsufficientPods");
  if (failed) return result("Degraded", describe(failed));
  const allowed = num(statusOf(o)["disruptionsAllowed"], 0);
  return result("Healthy", `${allowed} disruption${allowed === 1 ? "" : "s"} allowed`);
}

/** Kinds with no status to speak of: always Healthy once they exist (kstatus alwaysReady). */
export function alwaysHealthy(): HealthResult {
  return result("Healthy");
}
