import { describe, expect, it } from "vitest";
import type { KubeObject } from "../core/index.ts";
import { assessHealth } from "./index.ts";

const NOW = new Date("2025-06-01T12:00:00Z");

function pod(status: Record<string, unknown>, spec: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: "web-5d8f",
      namespace: "team-a",
      creationTimestamp: "2025-06-01T11:58:00Z",
      ownerReferences: [{ apiVersion: "apps/v1", kind: "ReplicaSet", name: "web-5d8f9c7b6d" }],
    },
    spec: {
      restartPolicy: "Always",
      containers: [{ name: "nginx", image: "nginx:1.27" }],
      ...spec,
    },
    status,
  };
}

function cond(type: string, status: string, extra: Record<string, unknown> = {}) {
  return {
    type,
    status,
    lastProbeTime: null,
    lastTransitionTime: "2025-06-01T11:58:05Z",
    ...extra,
  };
}

const RUNNING_NGINX = {
  name: "nginx",
  image: "nginx:1.27",
  imageID: "docker.io/library/nginx@sha256:0a39",
  containerID: "containerd://9f2c",
  ready: true,
  started: true,
  restartCount: 0,
  state: { running: { startedAt: "2025-06-01T11:58:10Z" } },
  lastState: {},
};

describe("v1/Pod", () => {
  it("is Healthy when running and ready", () => {
    const p = pod({
      phase: "Running",
      podIP: "10.244.0.12",
      conditions: [
        cond("PodReadyToStartContainers", "True"),
        cond("Initialized", "True"),
        cond("Ready", "True"),
        cond("ContainersReady", "True"),
        cond("PodScheduled", "True"),
      ],
      containerStatuses: [RUNNING_NGINX],
    });
    expect(assessHealth(p, NOW)).toEqual({ status: "Healthy", message: "pod web-5d8f: running" });
  });

  it("is Progressing when running but not ready", () => {
    const p = pod({
      phase: "Running",
      conditions: [
        cond("Initialized", "True"),
        cond("Ready", "False", {
          reason: "ContainersNotReady",
          message: "containers with unready status: [nginx]",
        }),
        cond("PodScheduled", "True"),
      ],
      containerStatuses: [{ ...RUNNING_NGINX, ready: false }],
    });
    expect(assessHealth(p, NOW)).toEqual({
      status: "Progressing",
      message: "pod web-5d8f: 0 of 1 containers ready",
    });
  });

  it("is Degraded on ImagePullBackOff, naming pod, container and reason", () => {
    const p = pod({
      phase: "Pending",
      conditions: [cond("Ready", "False"), cond("PodScheduled", "True")],
      containerStatuses: [
        {
          name: "nginx",
          image: "nginx:bad",
          imageID: "",
          ready: false,
          started: false,
          restartCount: 0,
          state: {
            waiting: {
              reason: "ImagePullBackOff",
              message: 'Back-off pulling image "nginx:bad"',
            },
          },
          lastState: {},
        },
      ],
    });
    expect(assessHealth(p, NOW)).toEqual({
      status: "Degraded",
      message: 'pod web-5d8f/nginx: ImagePullBackOff: Back-off pulling image "nginx:bad"',
    });
  });

  it("is Degraded on CrashLoopBackOff, init containers included", () => {
    const p = pod({
      phase: "Pending",
      conditions: [cond("Initialized", "False"), cond("PodScheduled", "True")],
      initContainerStatuses: [
        {
          name: "migrate",
          ready: false,
          restartCount: 4,
          state: {
            waiting: {
              reason: "CrashLoopBackOff",
              message:
                "back-off 1m20s restarting failed container=migrate pod=web-5d8f_team-a(0c1d)",
            },
          },
          lastState: { terminated: { exitCode: 1, reason: "Error" } },
        },
      ],
      containerStatuses: [
        {
          name: "nginx",
          ready: false,
          restartCount: 0,
          state: { waiting: { reason: "PodInitializing" } },
        },
      ],
    });
    // How the last run ended, not the back-off (which grows with every restart).
    expect(assessHealth(p, NOW)).toEqual({
      status: "Degraded",
      message: "pod web-5d8f/migrate: CrashLoopBackOff: last run: Error (exit code 1)",
    });
  });

  // A crash loop as the kubelet (v1.35.4, containerd) reported it, read at two moments of one
  // back-off: most of the time the ended run, terminated; as the back-off expires, Waiting.
  const ended = {
    containerID: "containerd://bec1b1c5810a",
    exitCode: 3,
    reason: "Error",
    message: "cannot read /etc/app.yaml\n",
    startedAt: "2025-06-01T11:59:10Z",
    finishedAt: "2025-06-01T11:59:10Z",
  };
  const crashLooping = (state: Record<string, unknown>, lastState: Record<string, unknown>) =>
    pod({
      phase: "Running",
      conditions: [
        cond("PodReadyToStartContainers", "True"),
        cond("Initialized", "True"),
        cond("Ready", "False", { reason: "ContainersNotReady" }),
        cond("ContainersReady", "False", { reason: "ContainersNotReady" }),
        cond("PodScheduled", "True"),
      ],
      containerStatuses: [
        {
          name: "nginx",
          image: "nginx:1.27",
          ready: false,
          started: false,
          restartCount: 3,
          state,
          lastState,
        },
      ],
    });
  const CRASH_LOOP = {
    status: "Degraded",
    message:
      "pod web-5d8f/nginx: CrashLoopBackOff: last run: Error (exit code 3): cannot read /etc/app.yaml",
  };

  it("names CrashLoopBackOff between two restarts, when the kubelet reports the run that ended", () => {
    const between = crashLooping(
      { terminated: ended },
      { terminated: { ...ended, containerID: "containerd://2dd3f5474472" } },
    );
    expect(assessHealth(between, NOW)).toEqual(CRASH_LOOP);
  });

  it("says the same of the crash loop as its back-off expires (Waiting), so its status holds still", () => {
    const expiring = crashLooping(
      {
        waiting: {
          reason: "CrashLoopBackOff",
          message: "back-off 20s restarting failed container=nginx pod=web-5d8f_team-a(097b)",
        },
      },
      { terminated: ended },
    );
    expect(assessHealth(expiring, NOW)).toEqual(CRASH_LOOP);
  });

  it("is no crash loop before the first restart, nor when the kubelet will not restart the container", () => {
    const first = crashLooping({ terminated: ended }, {});
    const status = first["status"] as { containerStatuses: Array<Record<string, unknown>> };
    status.containerStatuses[0]!["restartCount"] = 0;
    expect(assessHealth(first, NOW)).toEqual({
      status: "Progressing",
      message: "pod web-5d8f: 0 of 1 containers ready",
    });
    // OnFailure: a run that succeeded is not restarted, whatever came before it.
    const done = crashLooping({ terminated: { ...ended, exitCode: 0, reason: "Completed" } }, {});
    (done["spec"] as Record<string, unknown>)["restartPolicy"] = "OnFailure";
    expect(assessHealth(done, NOW).status).toBe("Progressing");
    const failedOnce = crashLooping({ terminated: ended }, {});
    (failedOnce["spec"] as Record<string, unknown>)["restartPolicy"] = "OnFailure";
    expect(assessHealth(failedOnce, NOW)).toEqual(CRASH_LOOP);
  });

  it("names a sidecar's crash loop (an init container with restartPolicy Always)", () => {
    const p = pod(
      {
        phase: "Running",
        conditions: [cond("Ready", "False")],
        initContainerStatuses: [
          { name: "proxy", ready: false, restartCount: 2, state: { terminated: ended } },
        ],
        containerStatuses: [RUNNING_NGINX],
      },
      {
        restartPolicy: "Never",
        initContainers: [{ name: "proxy", image: "envoy:1.31", restartPolicy: "Always" }],
      },
    );
    expect(assessHealth(p, NOW)).toEqual({
      status: "Degraded",
      message:
        "pod web-5d8f/proxy: CrashLoopBackOff: last run: Error (exit code 3): cannot read /etc/app.yaml",
    });
  });

  it("says the same of a failed pull whether the kubelet reports ErrImagePull or its back-off", () => {
    // As the kubelet (v1.35.4, containerd) alternates them for an image the registry lacks.
    const error =
      'failed to pull and unpack image "127.0.0.1:5000/plumb/absent:1.0": failed to resolve reference "127.0.0.1:5000/plumb/absent:1.0": 127.0.0.1:5000/plumb/absent:1.0: not found';
    const waiting = (reason: string, message: string) =>
      pod({
        phase: "Pending",
        conditions: [cond("Ready", "False"), cond("PodScheduled", "True")],
        containerStatuses: [
          {
            name: "nginx",
            image: "127.0.0.1:5000/plumb/absent:1.0",
            ready: false,
            restartCount: 0,
            state: { waiting: { reason, message } },
          },
        ],
      });
    const expected = {
      status: "Degraded",
      message: `pod web-5d8f/nginx: ImagePullBackOff: Back-off pulling image "127.0.0.1:5000/plumb/absent:1.0": ErrImagePull: ${error}`,
    };
    expect(assessHealth(waiting("ErrImagePull", error), NOW)).toEqual(expected);
    expect(
      assessHealth(
        waiting(
          "ImagePullBackOff",
          `Back-off pulling image "127.0.0.1:5000/plumb/absent:1.0": ErrImagePull: ${error}`,
        ),
        NOW,
      ),
    ).toEqual(expected);
  });

  it("lists every failing container", () => {
    const p = pod({
      phase: "Running",
      containerStatuses: [
        {
          name: "app",
          ready: false,
          state: {
            waiting: { reason: "CreateContainerConfigError", message: 'secret "db" not found' },
          },
        },
        { name: "proxy", ready: false, state: { waiting: { reason: "InvalidImageName" } } },
      ],
    });
    expect(assessHealth(p, NOW)).toEqual({
      status: "Degraded",
      message:
        'pod web-5d8f/app: CreateContainerConfigError: secret "db" not found; pod web-5d8f/proxy: InvalidImageName',
    });
  });

  it("is Progressing while containers are created", () => {
    const p = pod({
      phase: "Pending",
      conditions: [cond("PodScheduled", "True")],
      containerStatuses: [
        { name: "nginx", ready: false, state: { waiting: { reason: "ContainerCreating" } } },
      ],
    });
    expect(assessHealth(p, NOW)).toEqual({
      status: "Progressing",
      message: "pod web-5d8f: pending",
    });
  });

  it("is Progressing while unschedulable, with the scheduler's message", () => {
    const p = pod({
      phase: "Pending",
      conditions: [
        cond("PodScheduled", "False", {
          reason: "Unschedulable",
          message:
            "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.",
        }),
      ],
      qosClass: "Burstable",
    });
    expect(assessHealth(p, NOW)).toEqual({
      status: "Progressing",
      message:
        "pod web-5d8f: Unschedulable: 0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.",
    });
  });

  it("is Healthy when Succeeded", () => {
    const p = pod({ phase: "Succeeded" }, { restartPolicy: "Never" });
    expect(assessHealth(p, NOW)).toEqual({ status: "Healthy", message: "pod web-5d8f: completed" });
  });

  it("is Degraded when Failed, with the eviction message", () => {
    const p = pod({
      phase: "Failed",
      reason: "Evicted",
      message: "The node was low on resource: memory. Threshold quantity: 100Mi, available: 85Mi.",
    });
    expect(assessHealth(p, NOW)).toEqual({
      status: "Degraded",
      message:
        "pod web-5d8f: Evicted: The node was low on resource: memory. Threshold quantity: 100Mi, available: 85Mi.",
    });
  });

  it("is Degraded when Failed, naming the container that exited non-zero", () => {
    const p = pod(
      {
        phase: "Failed",
        containerStatuses: [
          {
            name: "nginx",
            ready: false,
            restartCount: 0,
            state: {
              terminated: {
                exitCode: 137,
                reason: "OOMKilled",
                startedAt: "2025-06-01T11:58:10Z",
                finishedAt: "2025-06-01T11:59:10Z",
              },
            },
          },
        ],
      },
      { restartPolicy: "Never" },
    );
    expect(assessHealth(p, NOW)).toEqual({
      status: "Degraded",
      message: "pod web-5d8f/nginx: OOMKilled (exit code 137)",
    });
  });

  it("is Unknown when its node stopped reporting", () => {
    expect(assessHealth(pod({ phase: "Unknown" }), NOW)).toEqual({
      status: "Unknown",
      message: "pod web-5d8f: node not reporting",
    });
  });
});
