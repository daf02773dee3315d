// The table of health rules, keyed by "group/Kind" ("Kind" for the core group), and the entry
// point that applies the checks every kind shares before its own rule.

import type { KubeObject } from "../core/index.ts";
import {
  alwaysHealthy,
  crdHealth,
  hpaHealth,
  ingressHealth,
  namespaceHealth,
  pvcHealth,
  serviceHealth,
} from "./core.ts";
import { genericHealth } from "./generic.ts";
import { podHealth } from "./pod.ts";
import { type HealthResult, num, type Rule, result, statusOf } from "./util.ts";
import {
  cronJobHealth,
  daemonSetHealth,
  deploymentHealth,
  jobHealth,
  replicaSetHealth,
  statefulSetHealth,
} from "./workloads.ts";

/** Rules by group/Kind. Any version of the group matches (autoscaling/v1 and v2 alike). */
export const RULES: Readonly<Record<string, Rule>> = {
  "apps/Deployment": deploymentHealth,
  "apps/StatefulSet": statefulSetHealth,
  "apps/DaemonSet": daemonSetHealth,
  "apps/ReplicaSet": replicaSetHealth,
  "batch/Job": jobHealth,
  "batch/CronJob": cronJobHealth,
  Pod: podHealth,
  PersistentVolumeClaim: pvcHealth,
  Service: serviceHealth,
  Namespace: namespaceHealth,
  "networking.k8s.io/Ingress": ingressHealth,
  "autoscaling/HorizontalPodAutoscaler": hpaHealth,
  "apiextensions.k8s.io/CustomResourceDefinition": crdHealth,
  ConfigMap: alwaysHealthy,
  Secret: alwaysHealthy,
  ServiceAccount: alwaysHealthy,
  LimitRange: alwaysHealthy,
  ResourceQuota: alwaysHealthy,
  "rbac.authorization.k8s.io/Role": alwaysHealthy,
  "rbac.authorization.k8s.io/RoleBinding": alwaysHealthy,
  "rbac.authorization.k8s.io/ClusterRole": alwaysHealthy,
  "rbac.authorization.k8s.io/ClusterRoleBinding": alwaysHealthy,
  "networking.k8s.io/NetworkPolicy": alwaysHealthy,
  "policy/PodDisruptionBudget": alwaysHealthy,
};

/**
 * Kinds whose controller always writes status.observedGeneration, so its absence means the
 * controller has not seen the object yet (kstatus core.go checkGenerationSet for DaemonSet;
 * Argo CD treats a missing observedGeneration as 0 for Deployment, StatefulSet, DaemonSet).
 */
const OBSERVED_GENERATION_REQUIRED: ReadonlySet<string> = new Set([
  "apps/Deployment",
  "apps/StatefulSet",
  "apps/DaemonSet",
  "apps/ReplicaSet",
]);

/** "apps/Deployment" for apiVersion "apps/v1", "Pod" for "v1". */
export function ruleKey(apiVersion: string, kind: string): string {
  const slash = apiVersion.indexOf("/");
  return slash < 0 ? kind : `${apiVersion.slice(0, slash)}/${kind}`;
}

/** The rule for apiVersion+kind: the table's, or the generic kstatus rule. */
export function ruleFor(apiVersion: string, kind: string): Rule {
  return RULES[ruleKey(apiVersion, kind)] ?? genericHealth;
}

/**
 * Health of one live object. `obj` undefined means the object is missing.
 * Checks shared by every kind come first (kstatus generic.go, Argo CD health.go):
 * - missing → Missing "not found".
 * - metadata.deletionTimestamp set → Progressing "being deleted".
 * - metadata.generation > status.observedGeneration (or observedGeneration absent on the apps/
 *   workloads, whose controllers always set it) → Progressing "waiting for the controller to
 *   observe generation N": the status describes an older spec.
 * Then the kind's rule from RULES, else the generic condition rule (generic.ts). Never throws:
 * a rule that fails on malformed input yields Unknown.
 * @param now the current time, for rules that report ages.
 */
export function assessHealth(obj: KubeObject | undefined, now: Date): HealthResult {
  if (!obj) return result("Missing", "not found");
  if (obj.metadata.deletionTimestamp) return result("Progressing", "being deleted");
  const key = ruleKey(obj.apiVersion, obj.kind);
  const generation = obj.metadata.generation;
  if (typeof generation === "number") {
    const observed = num(statusOf(obj)["observedGeneration"], Number.NaN);
    const behind = Number.isNaN(observed)
      ? OBSERVED_GENERATION_REQUIRED.has(key)
      : generation > observed;
    if (behind) {
      return result(
        "Progressing",
        `waiting for the controller to observe generation ${generation}`,
      );
    }
  }
  try {
    return (RULES[key] ?? genericHealth)(obj, now);
  } catch (err) {
    return result("Unknown", `health assessment failed: ${(err as Error).message}`);
  }
}
