import { describe, expect, it } from "vitest";
import type { KubeObject } from "../core/index.ts";
import { changedFields, detectDrift } from "./drift.ts";

const desired: KubeObject = {
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "web", namespace: "a", labels: { app: "web" } },
  spec: {
    replicas: 2,
    template: {
      spec: {
        containers: [{ name: "web", image: "nginx:1", resources: { limits: { cpu: 0.5 } } }],
      },
    },
  },
};

const live = (
  replicas: number,
  image: string,
  managedFields: NonNullable<KubeObject["metadata"]["managedFields"]>,
): KubeObject => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "web", namespace: "a", labels: { app: "web" }, managedFields },
  spec: {
    replicas,
    template: {
      spec: {
        containers: [
          {
            name: "web",
            image,
            imagePullPolicy: "IfNotPresent",
            resources: { limits: { cpu: "500m" } },
          },
        ],
      },
    },
  },
  status: { replicas },
});

const plumbOwnsAll = {
  manager: "plumb",
  operation: "Apply",
  fieldsV1: {
    "f:metadata": { "f:labels": { "f:app": {} } },
    "f:spec": {
      "f:replicas": {},
      "f:template": {
        "f:spec": {
          "f:containers": {
            'k:{"name":"web"}': { "f:image": {}, "f:resources": { "f:limits": { "f:cpu": {} } } },
          },
        },
      },
    },
  },
};

describe("detectDrift", () => {
  it("is empty when live matches or differs only by the API server's normalization", () => {
    expect(detectDrift(desired, live(2, "nginx:1", [plumbOwnsAll]))).toEqual([]);
  });

  it("names each drifted field with desired, live and the manager that changed it", () => {
    const scaled = live(5, "nginx:2", [
      { ...plumbOwnsAll, fieldsV1: { "f:metadata": { "f:labels": { "f:app": {} } } } },
      {
        manager: "kubectl-scale",
        operation: "Update",
        subresource: "scale",
        fieldsV1: { "f:spec": { "f:replicas": {} } },
      },
      {
        manager: "kubectl-edit",
        operation: "Update",
        fieldsV1: {
          "f:spec": {
            "f:replicas": {},
            "f:template": {
              "f:spec": { "f:containers": { 'k:{"name":"web"}': { "f:image": {} } } },
            },
          },
        },
      },
    ]);
    expect(detectDrift(desired, scaled)).toEqual([
      { path: "spec.replicas", desired: "2", live: "5", manager: "kubectl-edit" },
      {
        path: "spec.template.spec.containers[name=web].image",
        desired: "nginx:1",
        live: "nginx:2",
        manager: "kubectl-edit",
      },
      {
        path: "spec.template.spec.containers[name=web].resources.limits.cpu",
        desired: "0.5",
        live: "500m",
      },
    ]);
  });

  it("reports a removed container as drift", () => {
    const gone = {
      ...live(2, "nginx:1", [plumbOwnsAll]),
      spec: { replicas: 2, template: { spec: { containers: [] } } },
    };
    expect(detectDrift(desired, gone)).toEqual([
      {
        path: "spec.template.spec.containers[name=web]",
        desired: '{"name":"web","image":"nginx:1","resources":{"limits":{"cpu":0.5}}}',
      },
    ]);
  });

  it("ignores desired nulls and a Secret's write-only stringData", () => {
    const withNull: KubeObject = {
      ...desired,
      spec: {
        replicas: 2,
        template: { metadata: { creationTimestamp: null }, spec: { containers: [] } },
      },
    };
    expect(detectDrift(withNull, live(2, "nginx:1", [plumbOwnsAll]))).toEqual([]);
    const secret: KubeObject = {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "s" },
      stringData: { token: "x" },
    };
    const stored: KubeObject = {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "s", managedFields: [] },
      data: { token: "eA==" },
    };
    expect(detectDrift(secret, stored)).toEqual([]);
  });

  it("never reports a Secret's values", () => {
    const secret: KubeObject = {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "s" },
      data: { password: "aHVudGVyMg==" },
    };
    const changed: KubeObject = {
      ...secret,
      data: { password: "Y2hhbmdlZA==" },
      metadata: {
        name: "s",
        managedFields: [
          {
            manager: "kubectl-edit",
            operation: "Update",
            fieldsV1: { "f:data": { "f:password": {} } },
          },
        ],
      },
    };
    const drift = detectDrift(secret, changed);
    expect(drift).toEqual([{ path: "data.password", manager: "kubectl-edit" }]);
    expect(JSON.stringify(drift)).not.toContain("aHVudGVyMg");
  });
});

describe("changedFields (the approval preview, issue 16)", () => {
  const deploy = (image: string, cpu: string, extra: Record<string, unknown> = {}): KubeObject => ({
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "web", namespace: "team-a", labels: { app: "web" } },
    spec: {
      replicas: 2,
      template: {
        spec: { containers: [{ name: "web", image, resources: { requests: { cpu } } }] },
      },
      ...extra,
    },
  });
  it("reports fields a real apply would change, whoever owns them, and not normalization", () => {
    const desired = deploy("nginx:2", "0.5");
    const dryRun = deploy("nginx:2", "500m");
    const live = deploy("nginx:1", "500m");
    expect(changedFields(desired, dryRun, live)).toEqual([
      "spec.template.spec.containers[name=web].image",
    ]);
  });
  it("a field the new revision adds is a change; an unchanged object has none", () => {
    const desired = deploy("nginx:1", "1", { paused: true });
    expect(
      changedFields(desired, deploy("nginx:1", "1", { paused: true }), deploy("nginx:1", "1")),
    ).toEqual(["spec.paused"]);
    expect(
      changedFields(deploy("nginx:1", "1"), deploy("nginx:1", "1"), deploy("nginx:1", "1")),
    ).toEqual([]);
  });
});
