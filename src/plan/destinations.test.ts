import { describe, expect, it } from "vitest";
import type { InventoryEntry } from "../app/index.ts";
import { clusterRecords, placeInventory, splitInventory } from "./destinations.ts";

const B = "https://b.example:6443";
const C = "https://c.example:6443";
const cm = (name: string, cluster?: string): InventoryEntry =>
  cluster === undefined
    ? { apiVersion: "v1", kind: "ConfigMap", namespace: "a", name }
    : { apiVersion: "v1", kind: "ConfigMap", namespace: "a", name, cluster };

describe("splitInventory", () => {
  const inventory = [cm("home"), cm("on-b", B), cm("on-c", C)];

  it.each<[string, string | undefined, string[], string[]]>([
    ["the App's own cluster", undefined, ["home"], ["on-b", "on-c"]],
    ["cluster B", B, ["on-b"], ["home", "on-c"]],
    ["a cluster with nothing yet", "https://d.example", [], ["home", "on-b", "on-c"]],
  ])("at %s", (_name, server, here, elsewhere) => {
    const split = splitInventory(inventory, server);
    expect(split.here.map((r) => r.name)).toEqual(here);
    expect(split.here.every((r) => !("cluster" in r))).toBe(true);
    expect(split.elsewhere.map((r) => r.name)).toEqual(elsewhere);
  });
});

describe("placeInventory", () => {
  it("stamps the destination's entries and keeps the others as stored", () => {
    expect(placeInventory([cm("x"), cm("stale", C)], B, [cm("old", C)])).toEqual([
      cm("x", B),
      cm("stale", B),
      cm("old", C),
    ]);
  });

  it("entries on the App's own cluster carry no cluster", () => {
    expect(placeInventory([cm("x", B)], undefined, [])).toEqual([cm("x")]);
  });
});

describe("clusterRecords", () => {
  const toB = { name: "to-b" };
  const toC = { name: "to-c", key: "kubeconfig" };

  it("the destination's Secret for its server; a former one's kept; sorted; none: undefined", () => {
    expect(
      clusterRecords([cm("x", C), cm("y", B)], { server: B, secretRef: toB }, [
        { server: C, secretRef: toC },
        { server: "https://gone.example", secretRef: { name: "gone" } },
      ]),
    ).toEqual([
      { server: B, secretRef: toB },
      { server: C, secretRef: toC },
    ]);
    expect(clusterRecords([cm("x")], { server: B, secretRef: toB }, undefined)).toBeUndefined();
  });

  it("a Secret named again for the same server replaces the recorded one", () => {
    expect(
      clusterRecords([cm("x", B)], { server: B, secretRef: toC }, [{ server: B, secretRef: toB }]),
    ).toEqual([{ server: B, secretRef: toC }]);
  });
});
