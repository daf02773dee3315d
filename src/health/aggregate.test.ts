import { describe, expect, it } from "vitest";
import { aggregateHealth, HEALTH_ORDER, type HealthItem } from "./index.ts";

const healthy = (kind: string, name: string): HealthItem => ({
  kind,
  namespace: "team-a",
  name,
  health: { status: "Healthy" },
});

describe("aggregateHealth", () => {
  it("is Healthy for no objects", () => {
    expect(aggregateHealth([])).toEqual({ status: "Healthy", reason: "no objects" });
  });

  it("is Healthy when every object is", () => {
    expect(aggregateHealth([healthy("Service", "web"), healthy("ConfigMap", "settings")])).toEqual({
      status: "Healthy",
      reason: "all 2 objects healthy",
    });
    expect(aggregateHealth([healthy("Service", "web")])).toEqual({
      status: "Healthy",
      reason: "1 object healthy",
    });
  });

  it("names the worst object and its message", () => {
    const items: HealthItem[] = [
      healthy("Service", "web"),
      {
        kind: "Deployment",
        namespace: "team-a",
        name: "web",
        health: { status: "Progressing", message: "1 of 2 updated replicas available" },
      },
      {
        kind: "CronJob",
        namespace: "team-a",
        name: "report",
        health: { status: "Suspended", message: "suspended" },
      },
    ];
    expect(aggregateHealth(items)).toEqual({
      status: "Progressing",
      reason: "Deployment team-a/web: 1 of 2 updated replicas available",
    });
  });

  it("ranks Degraded > Missing > Progressing > Suspended > Unknown > Healthy", () => {
    expect(HEALTH_ORDER).toEqual([
      "Degraded",
      "Missing",
      "Progressing",
      "Suspended",
      "Unknown",
      "Healthy",
    ]);
    for (let i = 0; i < HEALTH_ORDER.length; i++) {
      const items = HEALTH_ORDER.slice(i).map(
        (status): HealthItem => ({ kind: "ConfigMap", name: status, health: { status } }),
      );
      expect(aggregateHealth(items).status).toBe(HEALTH_ORDER[i]);
    }
  });

  it("names cluster-scoped objects without a namespace, and falls back to the status", () => {
    const items: HealthItem[] = [
      { kind: "Namespace", name: "team-a", health: { status: "Healthy" } },
      { kind: "ClusterRole", name: "reader", namespace: undefined, health: { status: "Missing" } },
    ];
    expect(aggregateHealth(items)).toEqual({
      status: "Missing",
      reason: "ClusterRole reader: Missing",
    });
  });

  it("names at most three objects and counts the rest", () => {
    const items = ["a", "b", "c", "d", "e"].map(
      (name): HealthItem => ({
        kind: "Pod",
        namespace: "team-a",
        name,
        health: { status: "Degraded", message: `pod ${name}/app: CrashLoopBackOff` },
      }),
    );
    expect(aggregateHealth(items)).toEqual({
      status: "Degraded",
      reason:
        "Pod team-a/a: pod a/app: CrashLoopBackOff; Pod team-a/b: pod b/app: CrashLoopBackOff; Pod team-a/c: pod c/app: CrashLoopBackOff; and 2 more objects",
    });
  });
});
