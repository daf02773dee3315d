import { describe, expect, it } from "vitest";
import type { InventoryEntry } from "../app/index.ts";
import type { ObjectRef } from "../core/index.ts";
import { refKey } from "../core/index.ts";
import { appliedForms, type InventoryInput, inventoryAfterApply, staleRefs } from "./inventory.ts";

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
const hashes = (...pairs: Array<[string, ObjectRef]>) =>
  new Map(pairs.map(([h, r]) => [refKey(r), h]));

describe("inventoryAfterApply", () => {
  it.each<[string, InventoryInput, InventoryEntry[]]>([
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
      "applied objects record the hash of the form they applied",
      {
        previous: [{ ...a, hash: "a0" }],
        desired: [a, b],
        failed: keys(),
        kept: [],
        hashes: hashes(["a1", a], ["b1", b]),
      },
      [
        { ...a, hash: "a1" },
        { ...b, hash: "b1" },
      ],
    ],
    [
      "an owned object whose apply failed keeps the hash of the form it last applied",
      {
        previous: [
          { ...a, hash: "a0" },
          { ...c, hash: "c0" },
        ],
        desired: [a],
        failed: keys(a),
        kept: [{ ...c, hash: "c0" }],
        hashes: hashes(["a1", a]),
      },
      [
        { ...a, hash: "a0" },
        { ...c, hash: "c0" },
      ],
    ],
    [
      "owned: the hash this run's apply returned, else the previous one while the form stands",
      {
        previous: [
          { ...a, hash: "a0", owned: "oa0" },
          { ...b, hash: "b0", owned: "ob0" },
          { ...c, hash: "c0", owned: "oc0" },
        ],
        desired: [a, b, c],
        failed: keys(c),
        kept: [],
        hashes: hashes(["a1", a], ["b1", b], ["c1", c]),
        owned: new Map([[refKey(a), "oa1"]]),
      },
      [
        { ...a, hash: "a1", owned: "oa1" },
        { ...b, hash: "b1" },
        { ...c, hash: "c0", owned: "oc0" },
      ],
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

describe("appliedForms", () => {
  it.each<[string, InventoryEntry[], Map<string, string>, string | undefined, string, ObjectRef[]]>(
    [
      [
        "objects whose rendered form hashes as the one applied",
        [
          { ...a, hash: "a1" },
          { ...b, hash: "b0" },
        ],
        hashes(["a1", a], ["b1", b]),
        "set-old",
        "set-new",
        [a],
      ],
      [
        "entries without a hash (an older status): all, when the whole render is the applied one",
        [a, b],
        hashes(["a1", a], ["b1", b]),
        "set",
        "set",
        [a, b],
      ],
      ["entries without a hash, another render: none", [a, b], hashes(["a1", a]), "s0", "s1", []],
      [
        "an object not rendered any more is not applied",
        [{ ...c, hash: "c0" }],
        hashes(),
        "s",
        "s",
        [],
      ],
    ],
  )("%s", (_name, inventory, rendered, appliedHash, objectHash, expected) => {
    expect(appliedForms(inventory, rendered, appliedHash, objectHash)).toEqual(keys(...expected));
  });
});
