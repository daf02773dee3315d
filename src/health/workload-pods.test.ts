import { describe, expect, it } from "vitest";
import type { KubeObject } from "../core/index.ts";
import { explainByPods, podSelector } from "./workload-pods.ts";

const deployment = (selector: Record<string, unknown>): KubeObject => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "web", namespace: "team-a" },
  spec: { selector },
});

const pod = (name: string, status: Record<string, unknown>): KubeObject => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, namespace: "team-a" },
  spec: { containers: [{ name: "web", image: "registry.example.com/web:1.5" }] },
  status,
});

/** What the kubelet reports for an image it cannot pull. */
const pulling = (name: string) =>
  pod(name, {
    phase: "Pending",
    containerStatuses: [
      {
        name: "web",
        ready: false,
        state: {
          waiting: {
            reason: "ImagePullBackOff",
            message: 'Back-off pulling image "registry.example.com/web:1.5"',
          },
        },
      },
    ],
  });
const running = pod("web-old-1", {
  phase: "Running",
  conditions: [{ type: "Ready", status: "True" }],
  containerStatuses: [{ name: "web", ready: true, state: { running: {} } }],
});

describe("podSelector", () => {
  it("writes matchLabels and matchExpressions in the API's selector syntax", () => {
    expect(
      podSelector(
        deployment({
          matchLabels: { app: "web", tier: "front" },
          matchExpressions: [
            { key: "track", operator: "In", values: ["stable", "canary"] },
            { key: "env", operator: "NotIn", values: ["dev"] },
            { key: "owner", operator: "Exists" },
            { key: "legacy", operator: "DoesNotExist" },
          ],
        }),
      ),
    ).toBe("app=web,tier=front,track in (stable,canary),env notin (dev),owner,!legacy");
    expect(podSelector(deployment({}))).toBeUndefined();
  });
});

describe("explainByPods", () => {
  it("names the Pod's reason instead of the replica count alone (the issue's example)", () => {
    const health = { status: "Progressing" as const, message: "2 of 4 replicas updated" };
    expect(explainByPods(health, [running, pulling("web-new-1"), pulling("web-new-2")])).toEqual({
      status: "Progressing",
      message:
        'pod web-new-1/web: ImagePullBackOff: Back-off pulling image "registry.example.com/web:1.5" (and 1 more pod); 2 of 4 replicas updated',
    });
  });

  it("names a Pod the scheduler cannot place", () => {
    const pending = pod("web-new-1", {
      phase: "Pending",
      conditions: [
        {
          type: "PodScheduled",
          status: "False",
          reason: "Unschedulable",
          message: "0/3 nodes are available: 3 Insufficient cpu.",
        },
      ],
    });
    expect(
      explainByPods({ status: "Progressing", message: "0 of 1 replicas ready" }, [pending]).message,
    ).toBe(
      "pod web-new-1: Unschedulable: 0/3 nodes are available: 3 Insufficient cpu.; 0 of 1 replicas ready",
    );
  });

  it("still names the Pod's reason once the progress deadline has passed", () => {
    const degraded = {
      status: "Degraded" as const,
      message: 'progress deadline exceeded: ReplicaSet "web-5d8f9c7b6d" has timed out progressing.',
    };
    expect(explainByPods(degraded, [running, pulling("web-new-1")])).toEqual({
      status: "Degraded",
      message:
        'pod web-new-1/web: ImagePullBackOff: Back-off pulling image "registry.example.com/web:1.5"; progress deadline exceeded: ReplicaSet "web-5d8f9c7b6d" has timed out progressing.',
    });
  });

  it("leaves a rollout whose Pods are merely starting, and anything neither Progressing nor Degraded, as it is", () => {
    const starting = pod("web-new-1", { phase: "Pending" });
    const health = { status: "Progressing" as const, message: "1 of 2 replicas updated" };
    expect(explainByPods(health, [running, starting])).toBe(health);
    const degraded = { status: "Degraded" as const, message: "progress deadline exceeded" };
    expect(explainByPods(degraded, [running, starting])).toBe(degraded);
    const suspended = { status: "Suspended" as const, message: "rollout paused" };
    expect(explainByPods(suspended, [pulling("web-new-1")])).toBe(suspended);
  });
});
