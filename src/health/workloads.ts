// Health rules for the apps/ and batch/ workload kinds. The generic checks (deletion, observed
// generation) run before these in assessHealth, so each rule sees a status the controller
// has computed for the current spec.

import type { KubeObject } from "../core/index.ts";
import {
  arr,
  conditionsOf,
  describe,
  findCondition,
  formatAge,
  type HealthResult,
  num,
  obj,
  plural,
  result,
  specOf,
  statusOf,
  str,
  timeOf,
} from "./util.ts";

/**
 * apps/Deployment, after kubectl rollout status as used by Argo CD
 * (gitops-engine pkg/health/health_deployment.go) and kstatus (core.go deploymentConditions).
 * - spec.paused → Suspended.
 * - Progressing condition with reason ProgressDeadlineExceeded → Degraded.
 * - status.updatedReplicas < spec.replicas (default 1), status.replicas > updatedReplicas (old
 *   pods still terminating) or availableReplicas < updatedReplicas → Progressing (Argo).
 * - readyReplicas < spec.replicas, an Available condition that is not True, or (with a
 *   progress deadline, which apps/v1 always defaults) a Progressing condition other than
 *   True/NewReplicaSetAvailable → Progressing: the controller has not declared the rollout
 *   complete (kstatus).
 * - else Healthy.
 */
export function deploymentHealth(o: KubeObject): HealthResult {
  const spec = specOf(o);
  const st = statusOf(o);
  if (spec["paused"] === true) return result("Suspended", "rollout paused");
  const conds = conditionsOf(o);
  const progressing = findCondition(conds, "Progressing");
  if (progressing?.reason === "ProgressDeadlineExceeded") {
    return result("Degraded", `progress deadline exceeded: ${progressing.message ?? ""}`.trim());
  }
  const replicas = num(spec["replicas"], 1);
  const total = num(st["replicas"], 0);
  const updated = num(st["updatedReplicas"], 0);
  const available = num(st["availableReplicas"], 0);
  const ready = num(st["readyReplicas"], 0);
  if (updated < replicas) {
    return result("Progressing", `${updated} of ${replicas} replicas updated`);
  }
  if (total > updated) {
    return result("Progressing", `${plural(total - updated, "old replica")} pending termination`);
  }
  if (available < updated) {
    return result("Progressing", `${available} of ${updated} updated replicas available`);
  }
  if (ready < replicas) return result("Progressing", `${ready} of ${replicas} replicas ready`);
  const availableCond = findCondition(conds, "Available");
  if (availableCond && availableCond.status !== "True") {
    return result("Progressing", `not available: ${describe(availableCond)}`);
  }
  const complete =
    progressing?.status === "True" && progressing.reason === "NewReplicaSetAvailable";
  if (typeof spec["progressDeadlineSeconds"] === "number" && progressing && !complete) {
    return result("Progressing", `rollout not complete: ${describe(progressing)}`);
  }
  return result("Healthy", `${available} of ${replicas} replicas available`);
}

/**
 * apps/StatefulSet, after Argo CD (health_statefulset.go) and kstatus (core.go stsConditions).
 * - status.readyReplicas < spec.replicas (default 1) → Progressing.
 * - updateStrategy OnDelete → Healthy: pods are replaced only when someone deletes them, so a
 *   rollout's progress is not the controller's to report.
 * - status.replicas > spec.replicas → Progressing (pods of a scale-down still terminating).
 * - RollingUpdate with partition P > 0 → only ordinals >= P are updated: Progressing while
 *   updatedReplicas < replicas - P, else Healthy (currentRevision stays behind by design).
 * - status.currentReplicas < spec.replicas, or currentRevision != updateRevision → Progressing
 *   (rolling update not finished; kstatus checks both).
 * - else Healthy.
 */
export function statefulSetHealth(o: KubeObject): HealthResult {
  const spec = specOf(o);
  const st = statusOf(o);
  const strategy = obj(spec["updateStrategy"]);
  const replicas = num(spec["replicas"], 1);
  const ready = num(st["readyReplicas"], 0);
  const total = num(st["replicas"], 0);
  const updated = num(st["updatedReplicas"], 0);
  if (ready < replicas) return result("Progressing", `${ready} of ${replicas} replicas ready`);
  if (strategy["type"] === "OnDelete") {
    return result("Healthy", `${ready} of ${replicas} replicas ready (OnDelete updates)`);
  }
  if (total > replicas) {
    return result(
      "Progressing",
      `${plural(total - replicas, "extra replica")} pending termination`,
    );
  }
  const partition = num(obj(strategy["rollingUpdate"])["partition"], 0);
  if (partition > 0) {
    const want = Math.max(0, replicas - partition);
    if (updated < want) {
      return result(
        "Progressing",
        `${updated} of ${want} replicas updated (partition ${partition})`,
      );
    }
    return result("Healthy", `${updated} of ${want} replicas updated (partition ${partition})`);
  }
  const current = str(st["currentRevision"]);
  const next = str(st["updateRevision"]);
  if (current !== next) {
    return result("Progressing", `${updated} of ${replicas} replicas updated to ${next ?? "?"}`);
  }
  const currentReplicas = num(st["currentReplicas"], 0);
  if (currentReplicas < replicas) {
    return result(
      "Progressing",
      `${currentReplicas} of ${replicas} replicas at the current revision`,
    );
  }
  return result("Healthy", `${ready} of ${replicas} replicas ready`);
}

/**
 * apps/DaemonSet, after Argo CD (health_daemonset.go) and kstatus (core.go daemonsetConditions).
 * - status.desiredNumberScheduled absent → Progressing (the controller has not counted the
 *   nodes yet; kstatus).
 * - currentNumberScheduled < desiredNumberScheduled → Progressing (pods not placed yet).
 * - updateStrategy RollingUpdate and updatedNumberScheduled < desiredNumberScheduled → Progressing.
 * - numberAvailable or numberReady < desiredNumberScheduled → Progressing (also with OnDelete,
 *   whose updates are not tracked: like StatefulSet, it is Healthy once every scheduled pod is
 *   available).
 * - else Healthy.
 */
export function daemonSetHealth(o: KubeObject): HealthResult {
  const st = statusOf(o);
  if (typeof st["desiredNumberScheduled"] !== "number") {
    return result("Progressing", "waiting for the controller to schedule pods");
  }
  const onDelete = obj(specOf(o)["updateStrategy"])["type"] === "OnDelete";
  const desired = num(st["desiredNumberScheduled"], 0);
  const current = num(st["currentNumberScheduled"], 0);
  const updated = num(st["updatedNumberScheduled"], 0);
  const available = num(st["numberAvailable"], 0);
  const ready = num(st["numberReady"], 0);
  if (current < desired) return result("Progressing", `${current} of ${desired} pods scheduled`);
  if (!onDelete && updated < desired) {
    return result("Progressing", `${updated} of ${desired} pods updated`);
  }
  if (available < desired) {
    return result("Progressing", `${available} of ${desired} pods available`);
  }
  if (ready < desired) return result("Progressing", `${ready} of ${desired} pods ready`);
  return result("Healthy", `${available} of ${desired} pods available`);
}

/**
 * apps/ReplicaSet, after Argo CD (health_replicaset.go) and kstatus (core.go replicasetConditions).
 * - ReplicaFailure condition True (pods could not be created, e.g. quota) → Degraded.
 * - status.availableReplicas or readyReplicas < spec.replicas (default 1) → Progressing.
 * - else Healthy.
 */
export function replicaSetHealth(o: KubeObject): HealthResult {
  const failure = findCondition(conditionsOf(o), "ReplicaFailure");
  if (failure?.status === "True") return result("Degraded", describe(failure));
  const replicas = num(specOf(o)["replicas"], 1);
  const available = num(statusOf(o)["availableReplicas"], 0);
  const ready = num(statusOf(o)["readyReplicas"], 0);
  if (available < replicas) {
    return result("Progressing", `${available} of ${replicas} replicas available`);
  }
  if (ready < replicas) return result("Progressing", `${ready} of ${replicas} replicas ready`);
  return result("Healthy", `${available} of ${replicas} replicas available`);
}

/**
 * batch/Job, after Argo CD (health_job.go) and kstatus (core.go jobConditions).
 * - condition Failed=True, or FailureTarget=True (failure decided, pods terminating) → Degraded
 *   with the condition's reason and message.
 * - condition Complete=True, or SuccessCriteriaMet=True (success policy met) → Healthy.
 * - spec.suspend → Suspended. Checked after the terminal conditions: a finished Job stays
 *   finished whatever its suspend flag says.
 * - else Progressing "running: N active, N succeeded, N failed".
 */
export function jobHealth(o: KubeObject): HealthResult {
  const conds = conditionsOf(o);
  const failed = conds.find(
    (c) => (c.type === "Failed" || c.type === "FailureTarget") && c.status === "True",
  );
  if (failed) return result("Degraded", describe(failed));
  const done = conds.find(
    (c) => (c.type === "Complete" || c.type === "SuccessCriteriaMet") && c.status === "True",
  );
  const st = statusOf(o);
  const succeeded = num(st["succeeded"], 0);
  if (done) return result("Healthy", `completed: ${plural(succeeded, "pod")} succeeded`);
  if (specOf(o)["suspend"] === true) return result("Suspended", "suspended");
  const active = num(st["active"], 0);
  const nFailed = num(st["failed"], 0);
  return result(
    "Progressing",
    `running: ${active} active, ${succeeded} succeeded, ${nFailed} failed`,
  );
}

/**
 * batch/CronJob, after Argo CD (resource_customizations/batch/CronJob/health.lua) with one
 * difference, and kstatus (core.go: batch/CronJob is alwaysReady).
 * - spec.suspend → Suspended. (Argo reports Healthy "CronJob is Suspended", as a workaround
 *   for its own sync problem with suspended CronJobs; a suspended CronJob is what Suspended means.)
 * - never scheduled, a Job running now, or no successful run yet → Healthy, saying which.
 * - status.lastSuccessfulTime before status.lastScheduleTime with no Job active → Degraded:
 *   the last scheduled run ended without succeeding.
 * - else Healthy, with when it last scheduled a Job relative to `now`.
 * The Jobs it creates are not assessed here: they are not in the App's inventory.
 */
export function cronJobHealth(o: KubeObject, now: Date): HealthResult {
  if (specOf(o)["suspend"] === true) return result("Suspended", "suspended");
  const st = statusOf(o);
  const scheduled = timeOf(st["lastScheduleTime"]);
  if (scheduled === undefined) return result("Healthy", "not scheduled yet");
  const ago = `last scheduled ${formatAge(now.getTime() - scheduled)} ago`;
  if (arr(st["active"]).length > 0) return result("Healthy", `${ago}, running now`);
  const succeeded = timeOf(st["lastSuccessfulTime"]);
  if (succeeded === undefined) return result("Healthy", `${ago}, no successful run yet`);
  if (succeeded < scheduled) {
    return result(
      "Degraded",
      `the last run (${ago}) did not succeed; last success ${formatAge(now.getTime() - succeeded)} ago`,
    );
  }
  return result("Healthy", ago);
}
