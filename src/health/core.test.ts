import { describe, expect, it } from "vitest";
import type { KubeObject } from "../core/index.ts";
import { assessHealth } from "./index.ts";

const NOW = new Date("2025-06-01T12:00:00Z");

function pvc(
  annotations: Record<string, string>,
  spec: Record<string, unknown>,
  phase: string,
): KubeObject {
  return {
    apiVersion: "v1",
    kind: "PersistentVolumeClaim",
    metadata: { name: "data", namespace: "team-a", annotations },
    spec: {
      accessModes: ["ReadWriteOnce"],
      resources: { requests: { storage: "1Gi" } },
      storageClassName: "standard",
      volumeMode: "Filesystem",
      ...spec,
    },
    status: { phase },
  };
}

describe("v1/PersistentVolumeClaim", () => {
  it("is Healthy when Bound", () => {
    const claim = pvc(
      {
        "pv.kubernetes.io/bind-completed": "yes",
        "pv.kubernetes.io/bound-by-controller": "yes",
        "volume.kubernetes.io/selected-node": "kind-control-plane",
        "volume.kubernetes.io/storage-provisioner": "rancher.io/local-path",
      },
      { volumeName: "pvc-8b3f0c1e-2d4a-4c55-9b1e-6f0a7d2c9e11" },
      "Bound",
    );
    claim["status"] = {
      phase: "Bound",
      accessModes: ["ReadWriteOnce"],
      capacity: { storage: "1Gi" },
    };
    expect(assessHealth(claim, NOW)).toEqual({
      status: "Healthy",
      message: "bound to pvc-8b3f0c1e-2d4a-4c55-9b1e-6f0a7d2c9e11",
    });
  });

  it("is Healthy while waiting for its first consumer (WaitForFirstConsumer)", () => {
    expect(assessHealth(pvc({}, {}, "Pending"), NOW)).toEqual({
      status: "Healthy",
      message: "waiting for first consumer (storage class standard)",
    });
  });

  it("is Progressing once a consumer is scheduled and provisioning starts", () => {
    const claim = pvc(
      {
        "volume.kubernetes.io/selected-node": "kind-worker",
        "volume.kubernetes.io/storage-provisioner": "rancher.io/local-path",
        "volume.beta.kubernetes.io/storage-provisioner": "rancher.io/local-path",
      },
      {},
      "Pending",
    );
    expect(assessHealth(claim, NOW)).toEqual({
      status: "Progressing",
      message: "waiting for rancher.io/local-path to provision a volume",
    });
  });

  it("is Progressing with a node selected but provisioning not started", () => {
    const claim = pvc({ "volume.kubernetes.io/selected-node": "kind-worker" }, {}, "Pending");
    expect(assessHealth(claim, NOW)).toEqual({
      status: "Progressing",
      message: "waiting for a volume to bind",
    });
  });

  it("is Progressing when statically bound (no storage class) and pending", () => {
    const claim = pvc({}, { storageClassName: "" }, "Pending");
    expect(assessHealth(claim, NOW)).toEqual({
      status: "Progressing",
      message: "waiting for a volume to bind",
    });
  });

  it("is Degraded when Lost", () => {
    const claim = pvc({}, { volumeName: "pvc-8b3f" }, "Lost");
    expect(assessHealth(claim, NOW)).toEqual({
      status: "Degraded",
      message: "claim lost: its PersistentVolume no longer exists",
    });
  });
});

function service(spec: Record<string, unknown>, status: Record<string, unknown>): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "web", namespace: "team-a" },
    spec: {
      clusterIP: "10.96.44.17",
      clusterIPs: ["10.96.44.17"],
      ports: [{ name: "http", port: 80, protocol: "TCP", targetPort: 8080 }],
      selector: { app: "web" },
      type: "ClusterIP",
      ...spec,
    },
    status,
  };
}

describe("v1/Service", () => {
  it("is Healthy for ClusterIP", () => {
    expect(assessHealth(service({}, { loadBalancer: {} }), NOW)).toEqual({ status: "Healthy" });
  });

  it("is Progressing for a LoadBalancer without an address", () => {
    const s = service({ type: "LoadBalancer" }, { loadBalancer: {} });
    expect(assessHealth(s, NOW)).toEqual({
      status: "Progressing",
      message: "waiting for load balancer",
    });
  });

  it("is Healthy for a LoadBalancer with an address", () => {
    const s = service(
      { type: "LoadBalancer" },
      { loadBalancer: { ingress: [{ ip: "172.18.255.200", ipMode: "VIP" }] } },
    );
    expect(assessHealth(s, NOW)).toEqual({
      status: "Healthy",
      message: "load balancer at 172.18.255.200",
    });
  });
});

describe("networking.k8s.io/Ingress", () => {
  const ingress = (status: Record<string, unknown>): KubeObject => ({
    apiVersion: "networking.k8s.io/v1",
    kind: "Ingress",
    metadata: { name: "web", namespace: "team-a", generation: 1 },
    spec: { ingressClassName: "nginx", rules: [{ host: "web.example.com" }] },
    status,
  });

  it("is Healthy without a published address (unlike Argo CD)", () => {
    expect(assessHealth(ingress({ loadBalancer: {} }), NOW)).toEqual({ status: "Healthy" });
  });

  it("reports the published address", () => {
    const i = ingress({ loadBalancer: { ingress: [{ hostname: "lb.example.com" }] } });
    expect(assessHealth(i, NOW)).toEqual({ status: "Healthy", message: "address lb.example.com" });
  });
});

function hpa(apiVersion: string, conditions: unknown[] | undefined): KubeObject {
  return {
    apiVersion,
    kind: "HorizontalPodAutoscaler",
    metadata: { name: "podinfo", namespace: "team-a" },
    spec: {
      scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: "podinfo" },
      minReplicas: 2,
      maxReplicas: 4,
    },
    status: conditions
      ? { currentReplicas: 2, desiredReplicas: 2, currentMetrics: null, conditions }
      : { currentReplicas: 0, desiredReplicas: 0 },
  };
}

const ABLE = {
  type: "AbleToScale",
  status: "True",
  lastTransitionTime: "2025-06-01T11:40:00Z",
  reason: "SucceededGetScale",
  message: "the HPA controller was able to get the target's current scale",
};
const NO_METRICS = {
  type: "ScalingActive",
  status: "False",
  lastTransitionTime: "2025-06-01T11:40:00Z",
  reason: "FailedGetResourceMetric",
  message:
    "the HPA was unable to compute the replica count: failed to get cpu utilization: unable to get metrics for resource cpu: unable to fetch metrics from resource metrics API: the server could not find the requested resource (get pods.metrics.k8s.io)",
};

describe("autoscaling/HorizontalPodAutoscaler", () => {
  it("is Progressing before the controller reports", () => {
    expect(assessHealth(hpa("autoscaling/v2", undefined), NOW)).toEqual({
      status: "Progressing",
      message: "waiting to autoscale",
    });
  });

  it("is Healthy when scaling is active", () => {
    const h = hpa("autoscaling/v2", [
      ABLE,
      {
        type: "ScalingActive",
        status: "True",
        reason: "ValidMetricFound",
        message:
          "the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)",
      },
      {
        type: "ScalingLimited",
        status: "False",
        reason: "DesiredWithinRange",
        message: "the desired count is within the acceptable range",
      },
    ]);
    expect(assessHealth(h, NOW)).toEqual({ status: "Healthy" });
  });

  it("is Healthy at a replica bound, saying so", () => {
    const h = hpa("autoscaling/v2", [
      ABLE,
      { type: "ScalingActive", status: "True", reason: "ValidMetricFound" },
      {
        type: "ScalingLimited",
        status: "True",
        reason: "TooFewReplicas",
        message: "the desired replica count is less than the minimum replica count",
      },
    ]);
    expect(assessHealth(h, NOW)).toEqual({
      status: "Healthy",
      message: "TooFewReplicas: the desired replica count is less than the minimum replica count",
    });
  });

  it("is Healthy, scaling inactive, when no metrics server answers (unlike Argo CD)", () => {
    const h = hpa("autoscaling/v2", [ABLE, NO_METRICS]);
    expect(assessHealth(h, NOW)).toEqual({
      status: "Healthy",
      message: `scaling inactive: FailedGetResourceMetric: ${NO_METRICS.message}`,
    });
  });

  it("reads autoscaling/v1 conditions from their annotation", () => {
    const h = hpa("autoscaling/v1", undefined);
    h.metadata.annotations = {
      "autoscaling.alpha.kubernetes.io/conditions": JSON.stringify([ABLE, NO_METRICS]),
    };
    expect(assessHealth(h, NOW)).toEqual({
      status: "Healthy",
      message: `scaling inactive: FailedGetResourceMetric: ${NO_METRICS.message}`,
    });
  });

  it("is Degraded when the target cannot be scaled", () => {
    const h = hpa("autoscaling/v2", [
      {
        type: "AbleToScale",
        status: "False",
        reason: "FailedGetScale",
        message:
          'the HPA controller was unable to get the target\'s current scale: deployments/scale.apps "podinfo" not found',
      },
    ]);
    expect(assessHealth(h, NOW)).toEqual({
      status: "Degraded",
      message:
        'FailedGetScale: the HPA controller was unable to get the target\'s current scale: deployments/scale.apps "podinfo" not found',
    });
  });

  it("is Progressing while AbleToScale is False for a reason that is no failure (legacy back-off)", () => {
    const h = hpa("autoscaling/v2", [
      {
        type: "AbleToScale",
        status: "False",
        reason: "BackoffBoth",
        message:
          "the time since the previous scale is still within both the downscale and upscale forbidden windows",
      },
      { type: "ScalingActive", status: "True", reason: "ValidMetricFound" },
    ]);
    expect(assessHealth(h, NOW)).toEqual({
      status: "Progressing",
      message:
        "waiting to autoscale: BackoffBoth: the time since the previous scale is still within both the downscale and upscale forbidden windows",
    });
  });

  it("is Degraded on an invalid selector", () => {
    const h = hpa("autoscaling/v2", [
      ABLE,
      {
        type: "ScalingActive",
        status: "False",
        reason: "InvalidSelector",
        message: "the HPA target's scale is missing a selector",
      },
    ]);
    expect(assessHealth(h, NOW)).toEqual({
      status: "Degraded",
      message: "InvalidSelector: the HPA target's scale is missing a selector",
    });
  });

  it("is Healthy, saying scaling is disabled, when its target is scaled to zero (Argo, kstatus)", () => {
    const h = hpa("autoscaling/v2", [
      ABLE,
      {
        type: "ScalingActive",
        status: "False",
        reason: "ScalingDisabled",
        message: "scaling is disabled since the replica count of the target is zero",
      },
    ]);
    expect(assessHealth(h, NOW)).toEqual({
      status: "Healthy",
      message:
        "scaling disabled: ScalingDisabled: scaling is disabled since the replica count of the target is zero",
    });
  });
});

function crd(conditions: unknown[]): KubeObject {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: "widgets.example.com", generation: 1 },
    spec: {
      group: "example.com",
      names: { kind: "Widget", plural: "widgets" },
      scope: "Namespaced",
    },
    status: {
      acceptedNames: { kind: "Widget", plural: "widgets" },
      storedVersions: ["v1"],
      conditions,
    },
  };
}

describe("apiextensions.k8s.io/CustomResourceDefinition", () => {
  it("is Healthy when established", () => {
    const c = crd([
      {
        type: "NamesAccepted",
        status: "True",
        reason: "NoConflicts",
        message: "no conflicts found",
      },
      {
        type: "Established",
        status: "True",
        reason: "InitialNamesAccepted",
        message: "the initial names have been accepted",
      },
    ]);
    expect(assessHealth(c, NOW)).toEqual({ status: "Healthy", message: "established" });
  });

  it("is Degraded when its names conflict", () => {
    const c = crd([
      {
        type: "NamesAccepted",
        status: "False",
        reason: "PluralConflict",
        message: '"widgets" is already in use',
      },
      {
        type: "Established",
        status: "False",
        reason: "NotAccepted",
        message: "not all names are accepted",
      },
    ]);
    expect(assessHealth(c, NOW)).toEqual({
      status: "Degraded",
      message: 'names not accepted: PluralConflict: "widgets" is already in use',
    });
  });

  it("is Progressing until established", () => {
    const c = crd([
      {
        type: "NamesAccepted",
        status: "True",
        reason: "NoConflicts",
        message: "no conflicts found",
      },
      {
        type: "Established",
        status: "False",
        reason: "Installing",
        message: "the initial names have been accepted",
      },
    ]);
    expect(assessHealth(c, NOW)).toEqual({
      status: "Progressing",
      message: "not established: Installing: the initial names have been accepted",
    });
    expect(assessHealth(crd([]), NOW)).toEqual({
      status: "Progressing",
      message: "waiting to be established",
    });
  });
});

describe("v1/Namespace and status-less kinds", () => {
  it("Namespace is Progressing while terminating", () => {
    const ns: KubeObject = {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: "team-a" },
      spec: { finalizers: ["kubernetes"] },
      status: { phase: "Terminating" },
    };
    expect(assessHealth(ns, NOW)).toEqual({ status: "Progressing", message: "terminating" });
    ns["status"] = { phase: "Active" };
    expect(assessHealth(ns, NOW)).toEqual({ status: "Healthy" });
  });

  it.each([
    ["v1", "ConfigMap"],
    ["v1", "Secret"],
    ["v1", "ServiceAccount"],
    ["v1", "LimitRange"],
    ["v1", "ResourceQuota"],
    ["rbac.authorization.k8s.io/v1", "Role"],
    ["rbac.authorization.k8s.io/v1", "RoleBinding"],
    ["rbac.authorization.k8s.io/v1", "ClusterRole"],
    ["rbac.authorization.k8s.io/v1", "ClusterRoleBinding"],
    ["networking.k8s.io/v1", "NetworkPolicy"],
  ])("%s %s is Healthy", (apiVersion, kind) => {
    const o: KubeObject = { apiVersion, kind, metadata: { name: "x", namespace: "team-a" } };
    expect(assessHealth(o, NOW)).toEqual({ status: "Healthy" });
  });

  it("a PodDisruptionBudget is Healthy even when no disruption is allowed", () => {
    const pdb: KubeObject = {
      apiVersion: "policy/v1",
      kind: "PodDisruptionBudget",
      metadata: { name: "web", namespace: "team-a", generation: 1 },
      spec: { minAvailable: 2, selector: { matchLabels: { app: "web" } } },
      status: {
        observedGeneration: 1,
        currentHealthy: 2,
        desiredHealthy: 2,
        disruptionsAllowed: 0,
        expectedPods: 2,
        conditions: [
          { type: "DisruptionAllowed", status: "False", reason: "InsufficientPods", message: "" },
        ],
      },
    };
    expect(assessHealth(pdb, NOW)).toEqual({ status: "Healthy", message: "0 disruptions allowed" });
  });
});
