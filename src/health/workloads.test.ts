import { describe, expect, it } from "vitest";
import type { KubeObject } from "../core/index.ts";
import { assessHealth } from "./index.ts";

const NOW = new Date("2025-06-01T12:00:00Z");

function deployment(spec: Record<string, unknown>, status: Record<string, unknown>): KubeObject {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "web", namespace: "team-a", generation: 2, uid: "3f1c" },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: "web" } },
      strategy: {
        type: "RollingUpdate",
        rollingUpdate: { maxSurge: "25%", maxUnavailable: "25%" },
      },
      progressDeadlineSeconds: 600,
      template: { metadata: { labels: { app: "web" } }, spec: { containers: [{ name: "nginx" }] } },
      ...spec,
    },
    status: { observedGeneration: 2, ...status },
  };
}

const AVAILABLE = {
  type: "Available",
  status: "True",
  lastUpdateTime: "2025-06-01T11:50:00Z",
  lastTransitionTime: "2025-06-01T11:50:00Z",
  reason: "MinimumReplicasAvailable",
  message: "Deployment has minimum availability.",
};
const PROGRESSED = {
  type: "Progressing",
  status: "True",
  lastUpdateTime: "2025-06-01T11:55:00Z",
  lastTransitionTime: "2025-06-01T11:40:00Z",
  reason: "NewReplicaSetAvailable",
  message: 'ReplicaSet "web-5d8f9c7b6d" has successfully progressed.',
};

describe("apps/Deployment", () => {
  it("is Healthy when every replica is updated and available", () => {
    const d = deployment(
      {},
      {
        replicas: 3,
        updatedReplicas: 3,
        readyReplicas: 3,
        availableReplicas: 3,
        conditions: [AVAILABLE, PROGRESSED],
      },
    );
    expect(assessHealth(d, NOW)).toEqual({
      status: "Healthy",
      message: "3 of 3 replicas available",
    });
  });

  it("is Suspended when paused", () => {
    const d = deployment({ paused: true }, { replicas: 3, updatedReplicas: 1 });
    expect(assessHealth(d, NOW)).toEqual({ status: "Suspended", message: "rollout paused" });
  });

  it("is Degraded when the progress deadline was exceeded", () => {
    const d = deployment(
      {},
      {
        replicas: 4,
        updatedReplicas: 2,
        availableReplicas: 2,
        unavailableReplicas: 2,
        conditions: [
          AVAILABLE,
          {
            type: "Progressing",
            status: "False",
            reason: "ProgressDeadlineExceeded",
            message: 'ReplicaSet "web-7c9d8f6b5" has timed out progressing.',
          },
        ],
      },
    );
    expect(assessHealth(d, NOW)).toEqual({
      status: "Degraded",
      message: 'progress deadline exceeded: ReplicaSet "web-7c9d8f6b5" has timed out progressing.',
    });
  });

  it("is Progressing while replicas are being updated", () => {
    const d = deployment({}, { replicas: 4, updatedReplicas: 2, availableReplicas: 3 });
    expect(assessHealth(d, NOW)).toEqual({
      status: "Progressing",
      message: "2 of 3 replicas updated",
    });
  });

  it("is Progressing while old replicas terminate", () => {
    const d = deployment({}, { replicas: 4, updatedReplicas: 3, availableReplicas: 3 });
    expect(assessHealth(d, NOW)).toEqual({
      status: "Progressing",
      message: "1 old replica pending termination",
    });
  });

  it("is Progressing until updated replicas are available", () => {
    const d = deployment({}, { replicas: 3, updatedReplicas: 3, availableReplicas: 2 });
    expect(assessHealth(d, NOW)).toEqual({
      status: "Progressing",
      message: "2 of 3 updated replicas available",
    });
  });

  it("defaults spec.replicas to 1", () => {
    const d = deployment({ replicas: undefined }, { replicas: 1, updatedReplicas: 0 });
    expect(assessHealth(d, NOW)).toEqual({
      status: "Progressing",
      message: "0 of 1 replicas updated",
    });
  });

  it("is Healthy scaled to zero", () => {
    const d = deployment({ replicas: 0 }, {});
    expect(assessHealth(d, NOW)).toEqual({
      status: "Healthy",
      message: "0 of 0 replicas available",
    });
  });

  it("is Progressing before the controller observed the new generation", () => {
    const d = deployment({}, { observedGeneration: 1, replicas: 3, updatedReplicas: 3 });
    expect(assessHealth(d, NOW)).toEqual({
      status: "Progressing",
      message: "waiting for the controller to observe generation 2",
    });
  });

  it("is Progressing when just created, before any status", () => {
    const d = deployment({}, {});
    delete d["status"];
    expect(assessHealth(d, NOW)).toEqual({
      status: "Progressing",
      message: "waiting for the controller to observe generation 2",
    });
  });
});

function statefulSet(spec: Record<string, unknown>, status: Record<string, unknown>): KubeObject {
  return {
    apiVersion: "apps/v1",
    kind: "StatefulSet",
    metadata: { name: "db", namespace: "team-a", generation: 5 },
    spec: {
      replicas: 3,
      serviceName: "db",
      podManagementPolicy: "OrderedReady",
      updateStrategy: { type: "RollingUpdate", rollingUpdate: { partition: 0 } },
      ...spec,
    },
    status: {
      observedGeneration: 5,
      replicas: 3,
      readyReplicas: 3,
      currentReplicas: 3,
      updatedReplicas: 3,
      availableReplicas: 3,
      currentRevision: "db-6c7f8d9b5",
      updateRevision: "db-6c7f8d9b5",
      collisionCount: 0,
      ...status,
    },
  };
}

describe("apps/StatefulSet", () => {
  it("is Healthy when all replicas are ready at the update revision", () => {
    expect(assessHealth(statefulSet({}, {}), NOW)).toEqual({
      status: "Healthy",
      message: "3 of 3 replicas ready",
    });
  });

  it("is Progressing while replicas are not ready", () => {
    const s = statefulSet({}, { readyReplicas: 1, availableReplicas: 1 });
    expect(assessHealth(s, NOW)).toEqual({
      status: "Progressing",
      message: "1 of 3 replicas ready",
    });
  });

  it("is Progressing while the rolling update has not reached every pod", () => {
    const s = statefulSet(
      {},
      { currentReplicas: 2, updatedReplicas: 1, updateRevision: "db-84d5b7c6f9" },
    );
    expect(assessHealth(s, NOW)).toEqual({
      status: "Progressing",
      message: "1 of 3 replicas updated to db-84d5b7c6f9",
    });
  });

  it("is Progressing while extra pods of a scale-down terminate", () => {
    const s = statefulSet({ replicas: 2 }, { replicas: 3 });
    expect(assessHealth(s, NOW)).toEqual({
      status: "Progressing",
      message: "1 extra replica pending termination",
    });
  });

  it("with a partition, needs only replicas - partition updated", () => {
    const strategy = { type: "RollingUpdate", rollingUpdate: { partition: 2 } };
    const partial = { updatedReplicas: 1, currentReplicas: 2, updateRevision: "db-84d5b7c6f9" };
    expect(assessHealth(statefulSet({ updateStrategy: strategy }, partial), NOW)).toEqual({
      status: "Healthy",
      message: "1 of 1 replicas updated (partition 2)",
    });
    const none = { ...partial, updatedReplicas: 0, currentReplicas: 3 };
    expect(assessHealth(statefulSet({ updateStrategy: strategy }, none), NOW)).toEqual({
      status: "Progressing",
      message: "0 of 1 replicas updated (partition 2)",
    });
  });

  it("with OnDelete, is Healthy once ready whatever the revisions", () => {
    const s = statefulSet(
      { updateStrategy: { type: "OnDelete" } },
      { updatedReplicas: 0, updateRevision: "db-84d5b7c6f9" },
    );
    expect(assessHealth(s, NOW)).toEqual({
      status: "Healthy",
      message: "3 of 3 replicas ready (OnDelete updates)",
    });
    const notReady = statefulSet({ updateStrategy: { type: "OnDelete" } }, { readyReplicas: 2 });
    expect(assessHealth(notReady, NOW)).toEqual({
      status: "Progressing",
      message: "2 of 3 replicas ready",
    });
  });
});

function daemonSet(spec: Record<string, unknown>, status: Record<string, unknown>): KubeObject {
  return {
    apiVersion: "apps/v1",
    kind: "DaemonSet",
    metadata: { name: "node-exporter", namespace: "monitoring", generation: 1 },
    spec: {
      updateStrategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } },
      ...spec,
    },
    status: {
      observedGeneration: 1,
      currentNumberScheduled: 3,
      desiredNumberScheduled: 3,
      numberMisscheduled: 0,
      numberReady: 3,
      numberAvailable: 3,
      updatedNumberScheduled: 3,
      ...status,
    },
  };
}

describe("apps/DaemonSet", () => {
  it("is Healthy when every node runs an updated, available pod", () => {
    expect(assessHealth(daemonSet({}, {}), NOW)).toEqual({
      status: "Healthy",
      message: "3 of 3 pods available",
    });
  });

  it("is Progressing while pods are updated", () => {
    const d = daemonSet({}, { updatedNumberScheduled: 1 });
    expect(assessHealth(d, NOW)).toEqual({ status: "Progressing", message: "1 of 3 pods updated" });
  });

  it("is Progressing while pods are not available", () => {
    const d = daemonSet({}, { numberReady: 2, numberAvailable: 2, numberUnavailable: 1 });
    expect(assessHealth(d, NOW)).toEqual({
      status: "Progressing",
      message: "2 of 3 pods available",
    });
  });

  it("with OnDelete, ignores outdated pods", () => {
    const d = daemonSet({ updateStrategy: { type: "OnDelete" } }, { updatedNumberScheduled: 0 });
    expect(assessHealth(d, NOW)).toEqual({ status: "Healthy", message: "3 of 3 pods available" });
  });

  it("is Progressing when the controller has not written status yet", () => {
    const d = daemonSet({}, {});
    d["status"] = {};
    expect(assessHealth(d, NOW)).toEqual({
      status: "Progressing",
      message: "waiting for the controller to observe generation 1",
    });
  });
});

function replicaSet(status: Record<string, unknown>): KubeObject {
  return {
    apiVersion: "apps/v1",
    kind: "ReplicaSet",
    metadata: { name: "web-5d8f9c7b6d", namespace: "team-a", generation: 1 },
    spec: { replicas: 2, selector: { matchLabels: { app: "web" } } },
    status: { observedGeneration: 1, replicas: 2, fullyLabeledReplicas: 2, ...status },
  };
}

describe("apps/ReplicaSet", () => {
  it("is Healthy when all replicas are available", () => {
    const rs = replicaSet({ readyReplicas: 2, availableReplicas: 2 });
    expect(assessHealth(rs, NOW)).toEqual({
      status: "Healthy",
      message: "2 of 2 replicas available",
    });
  });

  it("is Progressing while replicas are unavailable", () => {
    const rs = replicaSet({ readyReplicas: 1, availableReplicas: 1 });
    expect(assessHealth(rs, NOW)).toEqual({
      status: "Progressing",
      message: "1 of 2 replicas available",
    });
  });

  it("is Degraded on ReplicaFailure", () => {
    const rs = replicaSet({
      replicas: 0,
      conditions: [
        {
          type: "ReplicaFailure",
          status: "True",
          lastTransitionTime: "2025-06-01T11:58:00Z",
          reason: "FailedCreate",
          message:
            'pods "web-5d8f9c7b6d-x2x4k" is forbidden: exceeded quota: compute, requested: limits.cpu=1, used: limits.cpu=4, limited: limits.cpu=4',
        },
      ],
    });
    expect(assessHealth(rs, NOW)).toEqual({
      status: "Degraded",
      message:
        'FailedCreate: pods "web-5d8f9c7b6d-x2x4k" is forbidden: exceeded quota: compute, requested: limits.cpu=1, used: limits.cpu=4, limited: limits.cpu=4',
    });
  });
});

function job(spec: Record<string, unknown>, status: Record<string, unknown>): KubeObject {
  return {
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: { name: "migrate", namespace: "team-a", generation: 1 },
    spec: { backoffLimit: 2, completions: 1, parallelism: 1, suspend: false, ...spec },
    status,
  };
}

describe("batch/Job", () => {
  it("is Progressing while running", () => {
    const j = job({}, { startTime: "2025-06-01T11:59:00Z", active: 1, ready: 0, terminating: 0 });
    expect(assessHealth(j, NOW)).toEqual({
      status: "Progressing",
      message: "running: 1 active, 0 succeeded, 0 failed",
    });
  });

  it("is Healthy when complete", () => {
    const j = job(
      {},
      {
        startTime: "2025-06-01T11:59:00Z",
        completionTime: "2025-06-01T11:59:20Z",
        succeeded: 1,
        conditions: [
          {
            type: "SuccessCriteriaMet",
            status: "True",
            reason: "CompletionsReached",
            message: "Reached expected number of succeeded pods",
          },
          {
            type: "Complete",
            status: "True",
            reason: "CompletionsReached",
            message: "Reached expected number of succeeded pods",
          },
        ],
      },
    );
    expect(assessHealth(j, NOW)).toEqual({
      status: "Healthy",
      message: "completed: 1 pod succeeded",
    });
  });

  it("is Healthy on SuccessCriteriaMet alone (success policy, pods terminating)", () => {
    const j = job(
      {},
      { succeeded: 2, conditions: [{ type: "SuccessCriteriaMet", status: "True" }] },
    );
    expect(assessHealth(j, NOW)).toEqual({
      status: "Healthy",
      message: "completed: 2 pods succeeded",
    });
  });

  it("is Degraded when failed, with the condition's reason and message", () => {
    const j = job(
      {},
      {
        startTime: "2025-06-01T11:50:00Z",
        failed: 3,
        conditions: [
          {
            type: "FailureTarget",
            status: "True",
            reason: "BackoffLimitExceeded",
            message: "Job has reached the specified backoff limit",
          },
          {
            type: "Failed",
            status: "True",
            reason: "BackoffLimitExceeded",
            message: "Job has reached the specified backoff limit",
          },
        ],
      },
    );
    expect(assessHealth(j, NOW)).toEqual({
      status: "Degraded",
      message: "BackoffLimitExceeded: Job has reached the specified backoff limit",
    });
  });

  it("is Suspended when spec.suspend is set", () => {
    const j = job(
      { suspend: true },
      {
        conditions: [
          { type: "Suspended", status: "True", reason: "JobSuspended", message: "Job suspended" },
        ],
      },
    );
    expect(assessHealth(j, NOW)).toEqual({ status: "Suspended", message: "suspended" });
  });
});

function cronJob(spec: Record<string, unknown>, status: Record<string, unknown>): KubeObject {
  return {
    apiVersion: "batch/v1",
    kind: "CronJob",
    metadata: { name: "report", namespace: "team-a", generation: 1 },
    spec: { schedule: "*/5 * * * *", concurrencyPolicy: "Forbid", suspend: false, ...spec },
    status,
  };
}

describe("batch/CronJob", () => {
  it("is Healthy, reporting when it last scheduled", () => {
    const c = cronJob(
      {},
      { lastScheduleTime: "2025-06-01T11:55:00Z", lastSuccessfulTime: "2025-06-01T11:55:09Z" },
    );
    expect(assessHealth(c, NOW)).toEqual({ status: "Healthy", message: "last scheduled 5m ago" });
  });

  it("is Healthy before its first run", () => {
    expect(assessHealth(cronJob({}, {}), NOW)).toEqual({
      status: "Healthy",
      message: "not scheduled yet",
    });
  });

  it("is Suspended when spec.suspend is set", () => {
    expect(assessHealth(cronJob({ suspend: true }, {}), NOW)).toEqual({
      status: "Suspended",
      message: "suspended",
    });
  });
});
