import { describe, expect, it } from "vitest";
import type { KubeObject } from "../core/index.ts";
import { podIsLive, podSpecUses, replicaSetIsLive } from "./in-use.ts";

describe("podSpecUses", () => {
  it("names every ConfigMap, Secret, PVC and ServiceAccount a Pod spec uses", () => {
    const spec = {
      serviceAccountName: "web",
      imagePullSecrets: [{ name: "registry" }],
      volumes: [
        { name: "a", configMap: { name: "cm-volume" } },
        { name: "b", secret: { secretName: "secret-volume" } },
        { name: "c", persistentVolumeClaim: { claimName: "data" } },
        {
          name: "d",
          projected: {
            sources: [
              { configMap: { name: "cm-projected" } },
              { secret: { name: "secret-projected" } },
              { serviceAccountToken: { path: "token" } },
            ],
          },
        },
        { name: "e", emptyDir: {} },
      ],
      initContainers: [{ envFrom: [{ configMapRef: { name: "cm-init" } }] }],
      containers: [
        {
          envFrom: [{ secretRef: { name: "secret-envfrom" } }, { prefix: "X_" }],
          env: [
            { name: "A", value: "plain" },
            { name: "B", valueFrom: { configMapKeyRef: { name: "cm-key", key: "b" } } },
            { name: "C", valueFrom: { secretKeyRef: { name: "secret-key", key: "c" } } },
            { name: "D", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
          ],
        },
      ],
      ephemeralContainers: [{ envFrom: [{ configMapRef: { name: "cm-debug" } }] }],
    };
    expect([...podSpecUses(spec)].sort()).toEqual([
      "ConfigMap/cm-debug",
      "ConfigMap/cm-init",
      "ConfigMap/cm-key",
      "ConfigMap/cm-projected",
      "ConfigMap/cm-volume",
      "PersistentVolumeClaim/data",
      "Secret/registry",
      "Secret/secret-envfrom",
      "Secret/secret-key",
      "Secret/secret-projected",
      "Secret/secret-volume",
      "ServiceAccount/web",
    ]);
  });

  it("leaves out the namespace's default ServiceAccount and tolerates a malformed spec", () => {
    expect([...podSpecUses({ serviceAccountName: "default", containers: [] })]).toEqual([]);
    expect([...podSpecUses(undefined)]).toEqual([]);
    expect([...podSpecUses({ volumes: "x", containers: [null, { env: [{}] }] })]).toEqual([]);
  });
});

describe("podIsLive and replicaSetIsLive", () => {
  const pod = (status: unknown, deletionTimestamp?: string): KubeObject => ({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "p", ...(deletionTimestamp ? { deletionTimestamp } : {}) },
    status,
  });
  it("a Pod that may still start a container is live", () => {
    expect(podIsLive(pod({ phase: "Running" }))).toBe(true);
    expect(podIsLive(pod({ phase: "Pending" }))).toBe(true);
    expect(podIsLive(pod(undefined))).toBe(true);
    expect(podIsLive(pod({ phase: "Succeeded" }))).toBe(false);
    expect(podIsLive(pod({ phase: "Failed" }))).toBe(false);
    expect(podIsLive(pod({ phase: "Running" }, "2026-01-01T00:00:00Z"))).toBe(false);
  });
  it("a ReplicaSet with replicas wanted or still counted is live", () => {
    const rs = (spec: unknown, status?: unknown): KubeObject => ({
      apiVersion: "apps/v1",
      kind: "ReplicaSet",
      metadata: { name: "r" },
      spec,
      status,
    });
    expect(replicaSetIsLive(rs({ replicas: 2 }))).toBe(true);
    expect(replicaSetIsLive(rs({}))).toBe(true);
    expect(replicaSetIsLive(rs({ replicas: 0 }, { replicas: 1 }))).toBe(true);
    expect(replicaSetIsLive(rs({ replicas: 0 }, { replicas: 0 }))).toBe(false);
    expect(replicaSetIsLive(rs({ replicas: 0 }))).toBe(false);
  });
});
