import { describe, expect, it } from "vitest";
import type { KubeObject } from "../core/index.ts";
import { assessHealth, ruleKey } from "./index.ts";

const NOW = new Date("2025-06-01T12:00:00Z");

describe("ruleKey", () => {
  it("keys by group and kind, the core group by kind alone", () => {
    expect(ruleKey("apps/v1", "Deployment")).toBe("apps/Deployment");
    expect(ruleKey("autoscaling/v2", "HorizontalPodAutoscaler")).toBe(
      "autoscaling/HorizontalPodAutoscaler",
    );
    expect(ruleKey("v1", "Pod")).toBe("Pod");
  });
});

describe("assessHealth", () => {
  it("is Missing for an absent object", () => {
    expect(assessHealth(undefined, NOW)).toEqual({ status: "Missing", message: "not found" });
  });

  it("is Progressing for an object being deleted, whatever its kind", () => {
    const cm: KubeObject = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: {
        name: "settings",
        namespace: "team-a",
        deletionTimestamp: "2025-06-01T11:59:30Z",
        finalizers: ["example.com/protect"],
      },
      data: { LOG_LEVEL: "info" },
    };
    expect(assessHealth(cm, NOW)).toEqual({ status: "Progressing", message: "being deleted" });
  });

  it("is group-aware: a Deployment kind outside apps uses the generic rule", () => {
    const custom: KubeObject = {
      apiVersion: "example.com/v1",
      kind: "Deployment",
      metadata: { name: "web", namespace: "team-a", generation: 1 },
      spec: { replicas: 3 },
    };
    expect(assessHealth(custom, NOW)).toEqual({ status: "Healthy" });
    const real = { ...custom, apiVersion: "apps/v1" };
    expect(assessHealth(real, NOW)).toEqual({
      status: "Progressing",
      message: "waiting for the controller to observe generation 1",
    });
  });

  it("is Unknown when a rule fails on malformed input", () => {
    const broken: KubeObject = { apiVersion: "v1", kind: "Pod", metadata: { name: "web" } };
    Object.defineProperty(broken, "status", {
      get() {
        throw new Error("unreadable status");
      },
    });
    expect(assessHealth(broken, NOW)).toEqual({
      status: "Unknown",
      message: "health assessment failed: unreadable status",
    });
  });
});
