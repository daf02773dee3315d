import { describe, expect, it } from "vitest";
import type { HealthStatus, ResourceStatus } from "../app/index.ts";
import type { KubeObject, ObjectRef } from "../core/index.ts";
import { refKey, refOf } from "../core/index.ts";
import { type CompareInput, type Comparison, compareDesired } from "./compare.ts";

const configMap = (name: string, data: Record<string, string>): KubeObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: "team-a" },
  data,
});
/** The live copy of `desired` with `data`, the data.* fields owned by `manager`. */
const liveOf = (desired: KubeObject, data: Record<string, string>, manager = "plumb") => ({
  ...desired,
  metadata: {
    ...desired.metadata,
    managedFields: [
      {
        manager,
        operation: "Apply",
        fieldsV1: { "f:data": Object.fromEntries(Object.keys(data).map((k) => [`f:${k}`, {}])) },
      },
    ],
  },
  data,
});

const a = configMap("a", { k: "1" });
const b = configMap("b", { k: "1" });
const c = configMap("c", { k: "1" });
const [A, B, C] = [a, b, c].map(refOf) as [ObjectRef, ObjectRef, ObjectRef];
const healthy = { status: "Healthy" as HealthStatus };
const line = (
  ref: ObjectRef,
  status: ResourceStatus["status"],
  health?: HealthStatus,
  message?: string,
): ResourceStatus => {
  const out: ResourceStatus = { ...ref, status };
  if (health) out.health = health;
  if (message) out.message = message;
  return out;
};

function input(over: Partial<CompareInput>): CompareInput {
  return {
    inventory: [],
    desired: [],
    live: new Map(),
    health: new Map(),
    held: false,
    previous: [],
    ...over,
  };
}
const edited = { path: "data.k", desired: "1", live: "2", manager: "kubectl-edit" };
const differs = (ref: ObjectRef) => new Map([[refKey(ref), { fields: [edited] }]]);
const live = (...objects: KubeObject[]) => new Map(objects.map((o) => [refKey(refOf(o)), o]));
const health = (...refs: ObjectRef[]) => new Map(refs.map((r) => [refKey(r), healthy]));

describe("compareDesired", () => {
  it.each<[string, CompareInput, Comparison]>([
    [
      "fast path: each line keeps its last status and message, with fresh health",
      input({
        inventory: [B, A],
        desired: undefined,
        health: new Map([
          [refKey(A), { status: "Degraded", message: "lost" }],
          [refKey(B), { status: "Healthy", message: "fresh" }],
        ]),
        previous: [
          line(A, "OutOfSync", "Healthy", "drifted: data.k"),
          line(B, "Synced", "Healthy", "stale"),
        ],
      }),
      {
        resources: [
          line(A, "OutOfSync", "Degraded", "drifted: data.k"),
          line(B, "Synced", "Healthy", "fresh"),
        ],
        drift: [],
        errors: [],
      },
    ],
    [
      "fast path: an object without a last line is Synced",
      input({ inventory: [A], desired: undefined, health: health(A) }),
      { resources: [line(A, "Synced", "Healthy")], drift: [], errors: [] },
    ],
    [
      "fast path: a preview of an object not yet created stays; lines of pruned objects go",
      input({
        inventory: [A],
        desired: undefined,
        health: health(A),
        previous: [
          line(A, "OutOfSync", "Healthy", "will change: data.k"),
          line(B, "OutOfSync", "Missing", "will be created"),
          line(C, "Pruned"),
        ],
      }),
      {
        resources: [
          line(A, "OutOfSync", "Healthy", "will change: data.k"),
          line(B, "OutOfSync", "Missing", "will be created"),
        ],
        drift: [],
        errors: [],
      },
    ],
    [
      "owned and no longer rendered: not in the source",
      input({ inventory: [A], desired: [], live: live(a), health: health(A) }),
      { resources: [line(A, "OutOfSync", "Healthy", "not in the source")], drift: [], errors: [] },
    ],
    [
      "held: what is no longer rendered will be pruned",
      input({ inventory: [A], desired: [], live: live(a), health: health(A), held: true }),
      { resources: [line(A, "OutOfSync", "Healthy", "will be pruned")], drift: [], errors: [] },
    ],
    [
      "rendered, not owned and not live: will be created",
      input({ desired: [a] }),
      { resources: [line(A, "OutOfSync", "Missing", "will be created")], drift: [], errors: [] },
    ],
    [
      "rendered, owned, its applied form and not live: deleted, and that is drift",
      input({ inventory: [A], desired: [a], applied: new Set([refKey(A)]) }),
      {
        resources: [line(A, "OutOfSync", "Missing", "deleted")],
        drift: [{ ...A, fields: [{ path: "(object)", desired: "exists", live: "deleted" }] }],
        errors: [],
      },
    ],
    [
      "deleted, but its form is not the applied one (a change not applied): not drift",
      input({ inventory: [A], desired: [a] }),
      { resources: [line(A, "OutOfSync", "Missing", "deleted")], drift: [], errors: [] },
    ],
    [
      "owned, gone and done (a Job its TTL removed): Synced and Healthy, not drift",
      input({
        inventory: [A],
        desired: [a],
        applied: new Set([refKey(A)]),
        done: new Map([[refKey(A), "completed; removed by its ttlSecondsAfterFinished"]]),
      }),
      {
        resources: [
          line(A, "Synced", "Healthy", "completed; removed by its ttlSecondsAfterFinished"),
        ],
        drift: [],
        errors: [],
      },
    ],
    [
      "held: an owned object deleted will be created, and is not drift",
      input({ inventory: [A], desired: [a], held: true }),
      { resources: [line(A, "OutOfSync", "Missing", "will be created")], drift: [], errors: [] },
    ],
    [
      "rendered and live alike: Synced with its health",
      input({
        inventory: [A],
        desired: [a],
        live: live(liveOf(a, { k: "1" })),
        health: new Map([[refKey(A), { status: "Healthy", message: "ok" }]]),
      }),
      { resources: [line(A, "Synced", "Healthy", "ok")], drift: [], errors: [] },
    ],
    [
      "a field changed by another manager, the form applied: drifted, with the fields",
      input({
        inventory: [A],
        desired: [a],
        live: live(liveOf(a, { k: "2" }, "kubectl-edit")),
        health: health(A),
        diffs: differs(A),
        applied: new Set([refKey(A)]),
      }),
      {
        resources: [line(A, "OutOfSync", "Healthy", "drifted: data.k")],
        drift: [{ ...A, fields: [edited] }],
        errors: [],
      },
    ],
    [
      "held: a changed field will change, with its values, and is not drift",
      input({
        inventory: [A],
        desired: [a],
        live: live(liveOf(a, { k: "2" }, "kubectl-edit")),
        health: health(A),
        held: true,
        diffs: differs(A),
        applied: new Set([refKey(A)]),
      }),
      {
        resources: [
          { ...line(A, "OutOfSync", "Healthy", "will change: data.k"), changes: [edited] },
        ],
        drift: [],
        errors: [],
      },
    ],
    [
      "a change the source makes that is not applied (rolled back, manual): not drift",
      input({
        inventory: [A],
        desired: [a],
        live: live(liveOf(a, { k: "2" })),
        health: health(A),
        diffs: new Map([[refKey(A), { fields: [{ path: "data.k", desired: "1", live: "2" }] }]]),
      }),
      {
        resources: [
          {
            ...line(A, "OutOfSync", "Healthy", "differs from the source: data.k"),
            changes: [{ path: "data.k", desired: "1", live: "2" }],
          },
        ],
        drift: [],
        errors: [],
      },
    ],
    [
      "a dry run the API server refused: Failed with its message, and listed",
      input({
        inventory: [A],
        desired: [a],
        live: live(liveOf(a, { k: "1" })),
        health: health(A),
        diffs: new Map([[refKey(A), { error: "spec.template is immutable", terminal: true }]]),
      }),
      {
        resources: [line(A, "Failed", "Healthy", "spec.template is immutable")],
        drift: [],
        errors: [{ ref: A, message: "spec.template is immutable", terminal: true }],
      },
    ],
    [
      "held: a refused dry run will fail",
      input({
        inventory: [A],
        desired: [a],
        live: live(liveOf(a, { k: "1" })),
        health: health(A),
        held: true,
        diffs: new Map([[refKey(A), { error: "spec.template is immutable", terminal: true }]]),
      }),
      {
        resources: [line(A, "OutOfSync", "Healthy", "will fail: spec.template is immutable")],
        drift: [],
        errors: [{ ref: A, message: "spec.template is immutable", terminal: true }],
      },
    ],
    [
      "one line per object of inventory and render, in refKey order",
      input({
        inventory: [C, A],
        desired: [b, a],
        live: live(liveOf(a, { k: "1" }), liveOf(b, { k: "1" }), c),
        health: health(A, B, C),
      }),
      {
        resources: [
          line(A, "Synced", "Healthy"),
          line(B, "Synced", "Healthy"),
          line(C, "OutOfSync", "Healthy", "not in the source"),
        ],
        drift: [],
        errors: [],
      },
    ],
  ])("%s", (_name, given, expected) => {
    expect(compareDesired(given)).toEqual(expected);
  });
});

describe("compareDesired: a held preview with dry-run changes ", () => {
  it("a field plumb owns that the new revision changes is 'will change' with its values", () => {
    const want = configMap("a", { k: "2" });
    const have = liveOf(a, { k: "1" }); // data.k owned by plumb: only the dry run sees the change
    const change = { path: "data.k", desired: "2", live: "1" };
    const base = input({
      inventory: [A],
      desired: [want],
      live: live(have),
      health: health(A),
      held: true,
      diffs: new Map([[refKey(A), { fields: [change] }]]),
    });
    expect(compareDesired(base)).toEqual({
      resources: [{ ...line(A, "OutOfSync", "Healthy", "will change: data.k"), changes: [change] }],
      drift: [],
      errors: [],
    });
    // Not held, and not the form applied: a change the source makes, still not drift.
    expect(compareDesired({ ...base, held: false })).toEqual({
      resources: [
        {
          ...line(A, "OutOfSync", "Healthy", "differs from the source: data.k"),
          changes: [change],
        },
      ],
      drift: [],
      errors: [],
    });
  });
});

describe("compareDesired: hooks", () => {
  it("a live hook that differs from its render is not drift (it runs when its event comes)", () => {
    const hook: KubeObject = {
      ...a,
      metadata: { ...a.metadata, annotations: { "helm.sh/hook": "pre-install" } },
    };
    const out = compareDesired(
      input({
        inventory: [A],
        desired: [hook],
        live: new Map([[refKey(A), liveOf(hook, { k: "2" })]]),
        health: new Map([[refKey(A), healthy]]),
        applied: new Set([refKey(A)]),
        diffs: new Map([[refKey(A), { fields: [edited] }]]),
      }),
    );
    expect(out.drift).toEqual([]);
    expect(out.resources).toEqual([line(A, "Synced", "Healthy")]);
  });
});
