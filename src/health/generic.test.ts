import { describe, expect, it } from "vitest";
import type { KubeObject } from "../core/index.ts";
import { assessHealth } from "./index.ts";

const NOW = new Date("2025-06-01T12:00:00Z");

function kustomization(
  generation: number,
  status: Record<string, unknown> | undefined,
): KubeObject {
  const o: KubeObject = {
    apiVersion: "kustomize.toolkit.fluxcd.io/v1",
    kind: "Kustomization",
    metadata: { name: "apps", namespace: "flux-system", generation },
    spec: {
      interval: "10m",
      path: "./apps",
      prune: true,
      sourceRef: { kind: "GitRepository", name: "flux-system" },
    },
  };
  if (status) o["status"] = status;
  return o;
}

function condition(
  type: string,
  status: string,
  reason: string,
  message: string,
  observedGeneration = 3,
) {
  return {
    type,
    status,
    reason,
    message,
    observedGeneration,
    lastTransitionTime: "2025-06-01T11:59:00Z",
  };
}

describe("custom resources (kstatus conventions)", () => {
  it("is Healthy with no status", () => {
    expect(assessHealth(kustomization(1, undefined), NOW)).toEqual({ status: "Healthy" });
  });

  it("is Healthy with conditions it does not know", () => {
    const o = kustomization(3, {
      observedGeneration: 3,
      conditions: [condition("Synced", "True", "ReconcileSuccess", "")],
    });
    expect(assessHealth(o, NOW)).toEqual({ status: "Healthy" });
  });

  it("is Healthy when Ready=True, with its message", () => {
    const o = kustomization(3, {
      observedGeneration: 3,
      lastAppliedRevision: "main@sha1:6f1e0a2c",
      conditions: [
        condition(
          "Ready",
          "True",
          "ReconciliationSucceeded",
          "Applied revision: main@sha1:6f1e0a2c",
        ),
      ],
    });
    expect(assessHealth(o, NOW)).toEqual({
      status: "Healthy",
      message: "Applied revision: main@sha1:6f1e0a2c",
    });
  });

  it("is Progressing when Ready=False", () => {
    const o = kustomization(3, {
      observedGeneration: 3,
      conditions: [
        condition(
          "Ready",
          "False",
          "DependencyNotReady",
          "dependency 'flux-system/infra' is not ready",
        ),
      ],
    });
    expect(assessHealth(o, NOW)).toEqual({
      status: "Progressing",
      message: "DependencyNotReady: dependency 'flux-system/infra' is not ready",
    });
  });

  it("is Progressing when Reconciling=True", () => {
    const o = kustomization(3, {
      observedGeneration: 3,
      conditions: [
        condition(
          "Reconciling",
          "True",
          "Progressing",
          "Fetching manifests for revision main@sha1:6f1e0a2c",
        ),
        condition("Ready", "Unknown", "Progressing", "Reconciliation in progress"),
      ],
    });
    expect(assessHealth(o, NOW)).toEqual({
      status: "Progressing",
      message: "Progressing: Fetching manifests for revision main@sha1:6f1e0a2c",
    });
  });

  it("is Degraded when Stalled=True", () => {
    const o = kustomization(3, {
      observedGeneration: 3,
      conditions: [
        condition(
          "Stalled",
          "True",
          "BuildFailed",
          "kustomize build failed: accumulating resources",
        ),
        condition(
          "Ready",
          "False",
          "BuildFailed",
          "kustomize build failed: accumulating resources",
        ),
      ],
    });
    expect(assessHealth(o, NOW)).toEqual({
      status: "Degraded",
      message: "BuildFailed: kustomize build failed: accumulating resources",
    });
  });

  it("is Progressing when status.observedGeneration is behind", () => {
    const o = kustomization(4, {
      observedGeneration: 3,
      conditions: [condition("Ready", "True", "ReconciliationSucceeded", "Applied revision")],
    });
    expect(assessHealth(o, NOW)).toEqual({
      status: "Progressing",
      message: "waiting for the controller to observe generation 4",
    });
  });

  it("is Progressing when the Ready condition is about an older generation", () => {
    const o: KubeObject = {
      apiVersion: "cert-manager.io/v1",
      kind: "Certificate",
      metadata: { name: "web-tls", namespace: "team-a", generation: 2 },
      spec: { secretName: "web-tls", dnsNames: ["web.example.com"] },
      status: {
        conditions: [
          condition("Ready", "True", "Ready", "Certificate is up to date and has not expired", 1),
        ],
        notAfter: "2025-08-30T11:00:00Z",
      },
    };
    expect(assessHealth(o, NOW)).toEqual({
      status: "Progressing",
      message: "waiting for the controller to observe generation 2",
    });
  });
});
