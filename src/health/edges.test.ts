// Reported cases with their right values, the rules added for them, and
// assessHealth's promise never to throw, whatever shape a live object has.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import type { KubeObject } from "../core/index.ts";
import { documentToJson, KUBECTL_YAML_OPTIONS } from "../render/kubectl-yaml.ts";
import { HEALTH_ORDER } from "./aggregate.ts";
import { READY_DEADLINE_MS } from "./generic.ts";
import { assessHealth } from "./index.ts";

const NOW = new Date("2026-06-01T12:00:00Z");
const ago = (ms: number) => new Date(NOW.getTime() - ms).toISOString();
const obj = (apiVersion: string, kind: string, rest: Record<string, unknown>): KubeObject => ({
  apiVersion,
  kind,
  metadata: { name: "x", namespace: "team-a", generation: 1 },
  ...rest,
});

describe("the issue's examples", () => {
  it("an APIService with Available=False is Progressing", () => {
    const api = obj("apiregistration.k8s.io/v1", "APIService", {
      spec: { group: "metrics.k8s.io", version: "v1beta1", service: { name: "metrics-server" } },
      status: {
        conditions: [
          {
            type: "Available",
            status: "False",
            reason: "MissingEndpoints",
            message: "endpoints for service/metrics-server in kube-system have no addresses",
          },
        ],
      },
    });
    expect(assessHealth(api, NOW)).toEqual({
      status: "Progressing",
      message:
        "not available: MissingEndpoints: endpoints for service/metrics-server in kube-system have no addresses",
    });
  });

  it("a Pod with restartPolicy Never that is Running (ready or not) is Progressing", () => {
    for (const ready of ["True", "False"]) {
      const pod = obj("v1", "Pod", {
        spec: { restartPolicy: "Never", containers: [{ name: "main", image: "alpine" }] },
        status: {
          phase: "Running",
          conditions: [{ type: "Ready", status: ready }],
          containerStatuses: [{ name: "main", ready: ready === "True", state: { running: {} } }],
        },
      });
      expect(assessHealth(pod, NOW)).toEqual({
        status: "Progressing",
        message: "pod x: running to completion (restartPolicy Never)",
      });
    }
  });

  it("a LoadBalancer Service whose status.loadBalancer.ingress is [{}] is Healthy", () => {
    const svc = obj("v1", "Service", {
      spec: { type: "LoadBalancer", ports: [{ port: 80 }] },
      status: { loadBalancer: { ingress: [{}] } },
    });
    expect(assessHealth(svc, NOW)).toEqual({ status: "Healthy", message: "load balancer ready" });
  });

  it("an HPA with no AbleToScale condition yet is Progressing", () => {
    const hpa = obj("autoscaling/v2", "HorizontalPodAutoscaler", {
      spec: { minReplicas: 1, maxReplicas: 3, scaleTargetRef: { kind: "Deployment", name: "web" } },
      status: {
        conditions: [
          { type: "ScalingActive", status: "True", reason: "ValidMetricFound" },
          { type: "ScalingLimited", status: "False", reason: "DesiredWithinRange" },
        ],
      },
    });
    expect(assessHealth(hpa, NOW)).toEqual({
      status: "Progressing",
      message: "waiting to autoscale",
    });
  });

  it("a cert-manager Certificate with Ready=False and Issuing=False reason Failed is Degraded", () => {
    const cert = obj("cert-manager.io/v1", "Certificate", {
      spec: { secretName: "web-tls", dnsNames: ["web.example.com"], issuerRef: { name: "le" } },
      status: {
        conditions: [
          {
            type: "Ready",
            status: "False",
            reason: "DoesNotExist",
            message: "Issuing certificate as Secret does not exist",
            observedGeneration: 1,
            lastTransitionTime: ago(60_000),
          },
          {
            type: "Issuing",
            status: "False",
            reason: "Failed",
            message: "The certificate request has failed to complete and will be retried",
            observedGeneration: 1,
            lastTransitionTime: ago(30_000),
          },
        ],
        failedIssuanceAttempts: 1,
      },
    });
    expect(assessHealth(cert, NOW)).toEqual({
      status: "Degraded",
      message: "DoesNotExist: Issuing certificate as Secret does not exist",
    });
  });
});

describe("custom resources: a Ready=False that does not resolve", () => {
  const cr = (reason: string, since?: string, extra: Record<string, unknown>[] = []) =>
    obj("external-secrets.io/v1", "ExternalSecret", {
      status: {
        conditions: [
          { type: "Ready", status: "False", reason, message: "m", lastTransitionTime: since },
          ...extra,
        ],
      },
    });

  it.each([
    [
      "a failure reason, at once",
      cr("SecretSyncedError", ago(5_000)),
      "Degraded",
      "SecretSyncedError: m",
    ],
    ["a neutral reason, just now", cr("Creating", ago(60_000)), "Progressing", "Creating: m"],
    [
      "a neutral reason, past the deadline",
      cr("Creating", ago(READY_DEADLINE_MS + 60_000)),
      "Degraded",
      "not ready for 11m: Creating: m",
    ],
    ["no lastTransitionTime: no sign it is stuck", cr("Creating"), "Progressing", "Creating: m"],
    [
      "Reconciling=True wins (kstatus)",
      cr("ReconciliationFailed", ago(5_000), [
        { type: "Reconciling", status: "True", reason: "Retrying" },
      ]),
      "Progressing",
      "Retrying",
    ],
    [
      "Stalled=True wins over everything",
      cr("Creating", ago(1_000), [{ type: "Stalled", status: "True", reason: "InvalidSpec" }]),
      "Degraded",
      "InvalidSpec",
    ],
  ])("%s", (_, o, status, message) => {
    expect(assessHealth(o, NOW)).toEqual({ status, message });
  });

  it("a custom resource without a Ready condition whose phase is Failed is Degraded", () => {
    const wf = obj("argoproj.io/v1alpha1", "Workflow", {
      status: { phase: "Failed", message: "child 'main' failed" },
    });
    expect(assessHealth(wf, NOW)).toEqual({
      status: "Degraded",
      message: "Failed: child 'main' failed",
    });
  });
});

describe("assessHealth never throws", () => {
  const TESTDATA = path.join(import.meta.dirname, "testdata");
  const samples: KubeObject[] = readdirSync(TESTDATA, { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".yaml") && !f.endsWith("health_test.yaml"))
    .sort()
    .map((f) => {
      const [doc] = parseAllDocuments(readFileSync(path.join(TESTDATA, f), "utf8"), {
        ...KUBECTL_YAML_OPTIONS,
      });
      return documentToJson(doc as Parameters<typeof documentToJson>[0]) as KubeObject;
    });

  /** Values of the wrong type for any field. */
  const WRONG: unknown[] = [
    null,
    "string",
    "",
    -1,
    1.5,
    Number.NaN,
    Number.POSITIVE_INFINITY,
    true,
    [],
    [null, 3, "x", {}],
    {},
    { type: 7, status: ["True"] },
  ];

  /** Every path (as keys) to a value inside `o`, objects and arrays included. */
  function paths(o: unknown, prefix: Array<string | number> = []): Array<Array<string | number>> {
    if (typeof o !== "object" || o === null) return [];
    const entries = Array.isArray(o) ? o.map((v, i) => [i, v] as const) : Object.entries(o);
    return entries.flatMap(([k, v]) => [[...prefix, k], ...paths(v, [...prefix, k])]);
  }

  function mutate(o: KubeObject, at: Array<string | number>, value: unknown): KubeObject {
    const copy = structuredClone(o) as Record<string | number, unknown>;
    let cur: Record<string | number, unknown> = copy;
    for (const k of at.slice(0, -1)) cur = cur[k] as Record<string | number, unknown>;
    const last = at[at.length - 1] as string | number;
    if (value === undefined) delete cur[last];
    else cur[last] = value;
    return copy as KubeObject;
  }

  const valid = new Set(HEALTH_ORDER);
  /** A valid status, and never from the safety net: no rule itself throws on bad shapes. */
  const check = (o: unknown) => {
    const r = assessHealth(o as KubeObject, NOW);
    if (!valid.has(r.status) || r.message?.startsWith("health assessment failed")) {
      throw new Error(`${JSON.stringify(r)} for ${JSON.stringify(o).slice(0, 300)}`);
    }
  };

  it("for inputs that are not objects at all", () => {
    for (const v of [...WRONG, undefined]) check(v);
    expect(assessHealth(42 as unknown as KubeObject, NOW)).toEqual({
      status: "Unknown",
      message: "not a Kubernetes object",
    });
    expect(assessHealth({} as KubeObject, NOW).status).toBe("Healthy");
  });

  it(`for every field of ${samples.length} real objects deleted or given a wrong type`, () => {
    let cases = 0;
    for (const sample of samples) {
      for (const at of paths(sample)) {
        for (const value of [undefined, ...WRONG]) {
          check(mutate(sample, at, value));
          cases++;
        }
      }
      for (const key of ["metadata", "status", "spec", "apiVersion", "kind"]) {
        for (const value of [undefined, ...WRONG]) check(mutate(sample, [key], value));
      }
    }
    expect(cases).toBeGreaterThan(50_000);
  });

  it("an object without metadata is judged by what it has", () => {
    const pod = { apiVersion: "v1", kind: "Pod", status: { phase: "Succeeded" } };
    expect(assessHealth(pod as unknown as KubeObject, NOW)).toEqual({
      status: "Healthy",
      message: "pod ?: completed",
    });
  });
});
