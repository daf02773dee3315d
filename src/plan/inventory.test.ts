import { describe, expect, it } from "vitest";
import type { ObjectRef } from "../core/index.ts";
import { refKey } from "../core/index.ts";
import { type InventoryInput, inventoryAfterApply, staleRefs } from "./inventory.ts";

const ref = (kind: string, name: string, apiVersion = "v1"): ObjectRef => ({
  apiVersion,
  kind,
  namespace: "team-a",
  name,
});
const a = ref("ConfigMap", "a");
const b = ref("ConfigMap", "b");
const c = ref("Secret", "c");
const d = ref("Service", "d");
const web = ref("Deployment", "web", "apps/v1");
const webOld = ref("Deployment", "web", "apps/v1beta1");
const keys = (...refs: ObjectRef[]) => new Set(refs.map(refKey));

describe("inventoryAfterApply", () => {
  it.each<[string, InventoryInput, ObjectRef[]]>([
    [
      "everything applied: the desired set, in render order",
      { previous: [], desired: [b, a], failed: keys(), kept: [] },
      [b, a],
    ],
    [
      "a new object whose apply failed is not owned",
      { previous: [a], desired: [a, b], failed: keys(b), kept: [] },
      [a],
    ],
    [
      "an owned object whose apply failed stays (it may be live from an earlier apply)",
      { previous: [a, b], desired: [a, b], failed: keys(b), kept: [] },
      [a, b],
    ],
    [
      "an owned object rendered under a new version stays, as rendered, though it failed",
      { previous: [webOld], desired: [web], failed: keys(web), kept: [] },
      [web],
    ],
    [
      "nothing applied: only what was already owned",
      { previous: [a], desired: [a, b], failed: keys(a, b), kept: [] },
      [a],
    ],
    [
      "kept objects follow the desired ones (failed deletes, unpruned, kept skips)",
      { previous: [a, c, d], desired: [a], failed: keys(), kept: [c, d] },
      [a, c, d],
    ],
    [
      "a stale object neither deleted nor kept leaves the inventory",
      { previous: [a, c], desired: [a], failed: keys(), kept: [] },
      [a],
    ],
    [
      "no repeats: a kept object also desired appears once, first place kept",
      { previous: [a], desired: [a, b], failed: keys(), kept: [b, c, c] },
      [a, b, c],
    ],
    [
      "no repeats within the desired set",
      { previous: [], desired: [a, a, b], failed: keys(), kept: [] },
      [a, b],
    ],
    [
      "an empty render with nothing kept owns nothing",
      {
        previous: [a, b],
        desired: [],
        failed: keys(),
        kept: [],
      },
      [],
    ],
  ])("%s", (_name, input, expected) => {
    expect(inventoryAfterApply(input)).toEqual(expected);
  });
});

describe("staleRefs", () => {
  it.each<[string, ObjectRef[], ObjectRef[], ObjectRef[]]>([
    ["what the desired set lacks, in inventory order", [c, a, b], [a], [c, b]],
    ["nothing when the desired set covers the inventory", [a, b], [b, a, c], []],
    ["everything when nothing is desired", [a, b], [], [a, b]],
    ["a new version of the same group is the same object", [webOld], [web], []],
    ["a same-named object of another kind is not", [ref("Secret", "a")], [a], [ref("Secret", "a")]],
  ])("%s", (_name, previous, desired, expected) => {
    expect(staleRefs(previous, desired)).toEqual(expected);
  });
});
