import { describe, expect, it } from "vitest";
import type { InventoryEntry, ResourceStatus } from "../app/index.ts";
import { type KubeObject, refKey, refOf } from "../core/index.ts";
import { needsOwners, renderHash, unchangedObjects } from "./changed.ts";

const cm = (name: string): KubeObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: "ns" },
});
const deploy: KubeObject = {
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "web", namespace: "ns" },
  spec: { replicas: 1 },
};
const hpa: KubeObject = {
  apiVersion: "autoscaling/v2",
  kind: "HorizontalPodAutoscaler",
  metadata: { name: "web", namespace: "ns" },
  spec: { scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: "web" } },
};
const objects = [cm("a"), cm("b"), deploy, hpa];
const key = (o: KubeObject) => refKey(refOf(o));
const hashes = new Map(objects.map((o) => [key(o), `h-${o.kind}-${o.metadata.name}`]));
const inventory: InventoryEntry[] = objects.map((o) => ({
  ...refOf(o),
  hash: hashes.get(key(o))!,
}));
const synced = (o: KubeObject, over: Partial<ResourceStatus> = {}): ResourceStatus => ({
  ...refOf(o),
  status: "Synced",
  health: "Healthy",
  ...over,
});
const resources = objects.map((o) => synced(o));

describe("unchangedObjects", () => {
  it("leaves alone what was applied in this form and last seen live and as desired", () => {
    const got = unchangedObjects(objects, hashes, { inventory, resources });
    expect([...got.keys()]).toEqual(objects.map(key));
    expect(got.get(key(cm("a")))).toEqual({ status: "Healthy" });
  });

  it("applies an object whose rendered form changed, and only that one", () => {
    const changed = new Map(hashes).set(key(cm("b")), "h-new");
    const got = unchangedObjects(objects, changed, { inventory, resources });
    expect(got.has(key(cm("b")))).toBe(false);
    expect(got.size).toBe(3);
  });

  const a = cm("a");
  const isA = (r: ResourceStatus) => r.kind === "ConfigMap" && r.name === "a";
  const noHealth = ({ health: _h, ...line }: ResourceStatus): ResourceStatus => line;
  it.each<[string, ResourceStatus[], { fields: Array<{ path: string }> }[]]>([
    [
      "last seen Missing (deleted since)",
      resources.map((r) => (isA(r) ? synced(a, { health: "Missing" }) : r)),
      [],
    ],
    [
      "last seen OutOfSync (a change not yet applied)",
      resources.map((r) => (isA(r) ? synced(a, { status: "OutOfSync" }) : r)),
      [],
    ],
    [
      "whose apply failed",
      resources.map((r) => (isA(r) ? synced(a, { status: "Failed" }) : r)),
      [],
    ],
    ["with no health recorded", resources.map((r) => (isA(r) ? noHealth(r) : r)), []],
    ["with no resource line", resources.filter((r) => !isA(r)), []],
    ["listed in status.drift", resources, [{ fields: [{ path: "data.x" }] }]],
  ])("applies an unchanged object %s", (_name, lines, drifted) => {
    const drift = drifted.map((d) => ({ ...refOf(a), ...d }));
    const got = unchangedObjects(objects, hashes, { inventory, resources: lines, drift });
    expect(got.has(key(a))).toBe(false);
    expect(got.size).toBe(3);
  });

  it("applies an object not in the inventory, or whose entry has no hash (an older status)", () => {
    const noHash = inventory.map((e) => (e.name === "a" ? refOf(cm("a")) : e));
    expect(
      unchangedObjects(objects, hashes, { inventory: noHash, resources }).has(key(cm("a"))),
    ).toBe(false);
    const without = inventory.filter((e) => e.name !== "b");
    expect(
      unchangedObjects(objects, hashes, { inventory: without, resources }).has(key(cm("b"))),
    ).toBe(false);
  });

  it("applies an autoscaled workload when its HPA is new or changed (the replicas hand-over)", () => {
    const newHpa = new Map(hashes).set(key(hpa), "h-hpa-2");
    const got = unchangedObjects(objects, newHpa, { inventory, resources });
    expect(got.has(key(deploy))).toBe(false);
    expect(got.has(key(hpa))).toBe(false);
    // Only the workload changed: its HPA stays alone.
    const newDeploy = new Map(hashes).set(key(deploy), "h-deploy-2");
    const other = unchangedObjects(objects, newDeploy, { inventory, resources });
    expect(other.has(key(hpa))).toBe(true);
    expect(other.has(key(deploy))).toBe(false);
  });

  it("without per-object hashes nothing is left alone", () => {
    expect(unchangedObjects(objects, undefined, { inventory, resources }).size).toBe(0);
  });
});

describe("renderHash", () => {
  it("is the same for the same objects in another order, and differs when one changes", async () => {
    const reversed = new Map([...hashes].reverse());
    expect(await renderHash(reversed)).toBe(await renderHash(hashes));
    expect(await renderHash(new Map(hashes).set(key(cm("a")), "x"))).not.toBe(
      await renderHash(hashes),
    );
    expect(await renderHash(hashes)).toMatch(/^[0-9a-f]{16}$/);
  });
});

describe("needsOwners", () => {
  it("only when an object is new to the inventory, a Namespace is applied, or something is pruned", () => {
    const ns: KubeObject = { apiVersion: "v1", kind: "Namespace", metadata: { name: "ns" } };
    expect(needsOwners([cm("a")], inventory, [])).toBe(false);
    expect(needsOwners([], inventory, [])).toBe(false);
    expect(needsOwners([cm("new")], inventory, [])).toBe(true);
    expect(needsOwners([ns], [...inventory, refOf(ns)], [])).toBe(true);
    expect(needsOwners([cm("a")], inventory, [refOf(cm("old"))])).toBe(true);
  });
});
