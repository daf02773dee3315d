import { describe, expect, it } from "vitest";
import { type KubeObject, refKey, refOf } from "../core/index.ts";
import {
  autoscaledApplyForms,
  autoscaledCompareForms,
  autoscaledTargets,
  replicasHandover,
  withoutReplicas,
} from "./autoscaled.ts";

const workload = (kind: string, name: string, replicas?: number): KubeObject => ({
  apiVersion: kind === "Deployment" || kind === "StatefulSet" ? "apps/v1" : "v1",
  kind,
  metadata: { name, namespace: "team-a" },
  spec: { ...(replicas === undefined ? {} : { replicas }), template: {} },
});
const hpa = (
  name: string,
  target: Record<string, unknown>,
  apiVersion = "autoscaling/v2",
): KubeObject => ({
  apiVersion,
  kind: "HorizontalPodAutoscaler",
  metadata: { name, namespace: "team-a" },
  spec: { scaleTargetRef: target, minReplicas: 2, maxReplicas: 5 },
});
const web = workload("Deployment", "web", 1);
const db = workload("StatefulSet", "db", 3);
const other = workload("Deployment", "other", 2);
const webHpa = hpa("web", { apiVersion: "apps/v1", kind: "Deployment", name: "web" });
const dbHpa = hpa("db", { kind: "StatefulSet", name: "db" }, "autoscaling/v1");
const key = (o: KubeObject) => refKey(refOf(o));

describe("autoscaledTargets", () => {
  it("maps each workload an HPA of the render targets (any version, apiVersion optional) to it", () => {
    expect(autoscaledTargets([web, db, other, webHpa, dbHpa])).toEqual(
      new Map([
        [key(web), key(webHpa)],
        [key(db), key(dbHpa)],
      ]),
    );
  });

  it("ignores an HPA aimed at another kind or name, or without a scaleTargetRef", () => {
    const wrongKind = hpa("x", { kind: "StatefulSet", name: "web" });
    const broken: KubeObject = { ...webHpa, spec: { minReplicas: 1 } };
    expect(autoscaledTargets([web, wrongKind, broken])).toEqual(new Map());
  });
});

describe("autoscaledApplyForms", () => {
  it("a targeted workload applied before with its HPA goes without replicas", () => {
    const out = autoscaledApplyForms([web, webHpa, other], new Set([key(web), key(webHpa)]));
    expect(out.objects).toEqual([withoutReplicas(web), webHpa, other]);
    expect(out.objects[0]?.["spec"]).toEqual({ template: {} });
    expect(out.handover).toEqual(new Set());
  });

  it("a new workload, or a new HPA over an old one: replicas applied, then handed over", () => {
    expect(autoscaledApplyForms([web, webHpa], new Set())).toEqual({
      objects: [web, webHpa],
      handover: new Set([key(web)]),
    });
    expect(autoscaledApplyForms([web, webHpa], new Set([key(web)]))).toEqual({
      objects: [web, webHpa],
      handover: new Set([key(web)]),
    });
  });

  it("a targeted workload without replicas needs nothing", () => {
    const bare = workload("Deployment", "web");
    expect(autoscaledApplyForms([bare, webHpa], new Set())).toEqual({
      objects: [bare, webHpa],
      handover: new Set(),
    });
  });
});

describe("autoscaledCompareForms", () => {
  it("never compares an HPA target's replicas", () => {
    expect(autoscaledCompareForms([web, other, webHpa])).toEqual([
      withoutReplicas(web),
      other,
      webHpa,
    ]);
  });
});

describe("replicasHandover", () => {
  it("is an apply of spec.replicas alone", () => {
    expect(replicasHandover({ ...web, spec: { replicas: 4, template: {} }, status: {} })).toEqual({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "web", namespace: "team-a" },
      spec: { replicas: 4 },
    });
    expect(replicasHandover(workload("Deployment", "web"))).toBeUndefined();
  });
});
