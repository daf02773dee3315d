// The table of health rules, keyed by "group/Kind" ("Kind" for the core group), and the entry
// point that applies the checks every kind shares before its own rule.

import type { KubeObject } from "../core/index.ts";
import { HEALTH_ORDER } from "./aggregate.ts";
import { certificateHealth, issuerHealth } from "./certmanager.ts";
import {
  alwaysHealthy,
  apiServiceHealth,
  crdHealth,
  hpaHealth,
  ingressHealth,
  namespaceHealth,
  pdbHealth,
  pvcHealth,
  serviceHealth,
} from "./core.ts";
import { genericHealth } from "./generic.ts";
import { podHealth } from "./pod.ts";
import {
  generationOf,
  type HealthResult,
  metaOf,
  num,
  type Rule,
  result,
  statusOf,
} from "./util.ts";
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
  "apiregistration.k8s.io/APIService": apiServiceHealth,
  "policy/PodDisruptionBudget": pdbHealth,
  "cert-manager.io/Certificate": certificateHealth,
  "cert-manager.io/Issuer": issuerHealth,
  "cert-manager.io/ClusterIssuer": issuerHealth,
  "certmanager.k8s.io/Certificate": certificateHealth,
  "certmanager.k8s.io/Issuer": issuerHealth,
  "certmanager.k8s.io/ClusterIssuer": issuerHealth,
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
 * Then the kind's rule from RULES, else the generic condition rule (generic.ts).
 * Never throws, whatever the input's shape: live objects are untyped JSON, so an
 * object without metadata, or with a mistyped field anywhere, is judged by what it does have;
 * anything that is not an object at all, or a rule that fails, yields Unknown.
 * @param now the current time, for rules that report ages or deadlines.
 */
export function assessHealth(obj: KubeObject | undefined, now: Date): HealthResult {
  if (obj === undefined || obj === null) return result("Missing", "not found");
  try {
    if (typeof obj !== "object" || Array.isArray(obj)) {
      return result("Unknown", "not a Kubernetes object");
    }
    const meta = metaOf(obj);
    if (meta["deletionTimestamp"]) return result("Progressing", "being deleted");
    const apiVersion = typeof obj.apiVersion === "string" ? obj.apiVersion : "";
    const kind = typeof obj.kind === "string" ? obj.kind : "";
    const key = ruleKey(apiVersion, kind);
    const generation = generationOf(obj);
    if (generation !== undefined) {
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
    const health = (RULES[key] ?? genericHealth)(obj, now);
    return HEALTH_STATUSES.has(health?.status) ? health : result("Unknown", "no health verdict");
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return result("Unknown", `health assessment failed: ${message}`);
  }
}

const HEALTH_STATUSES: ReadonlySet<unknown> = new Set(HEALTH_ORDER);
