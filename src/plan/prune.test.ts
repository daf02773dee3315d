import { describe, expect, it } from "vitest";
import type { KubeObject, ObjectRef } from "../core/index.ts";
import { refKey } from "../core/index.ts";
import { holdInUse, type PrunePlan, planPrune } from "./prune.ts";

const app = { namespace: "team-a", name: "web" };
const ours = { "plumb.dev/app": "web", "plumb.dev/app-namespace": "team-a" };
const PRUNE_OK = { "plumb.dev/prune": "true" };

const ref = (apiVersion: string, kind: string, name: string, namespace?: string): ObjectRef =>
  namespace === undefined ? { apiVersion, kind, name } : { apiVersion, kind, namespace, name };
const cm = ref("v1", "ConfigMap", "cfg", "team-a");
const deploy = ref("apps/v1", "Deployment", "web", "team-a");
const ns = ref("v1", "Namespace", "team-a-extra");
const pvc = ref("v1", "PersistentVolumeClaim", "data", "team-a");
const crd = ref("apiextensions.k8s.io/v1", "CustomResourceDefinition", "widgets.example.com");
const lookalike = ref("example.com/v1", "Namespace", "not-core");

/** A live object for `r` with `labels` (null: none) and `annotations`. */
function live(
  r: ObjectRef,
  labels: Record<string, string> | null = ours,
  annotations?: Record<string, string>,
): [string, KubeObject] {
  const metadata: KubeObject["metadata"] = { name: r.name };
  if (r.namespace) metadata.namespace = r.namespace;
  if (labels) metadata.labels = labels;
  if (annotations) metadata.annotations = annotations;
  return [refKey(r), { apiVersion: r.apiVersion, kind: r.kind, metadata }];
}

describe("planPrune", () => {
  it.each<{
    name: string;
    stale: ObjectRef;
    live?: [string, KubeObject];
    claimed?: boolean;
    plan: PrunePlan;
  }>([
    {
      name: "an owned, labelled object no longer rendered is deleted",
      stale: cm,
      live: live(cm),
      plan: { delete: [cm], skip: [] },
    },
    {
      name: "already gone: dropped silently",
      stale: cm,
      plan: { delete: [], skip: [] },
    },
    {
      name: "another App's inventory lists it: skipped and dropped",
      stale: cm,
      live: live(cm),
      claimed: true,
      plan: {
        delete: [],
        skip: [
          {
            ref: cm,
            reason: "ConfigMap team-a/cfg is also rendered by another App",
            keep: false,
            claimed: true,
          },
        ],
      },
    },
    {
      name: "claimed by another App is reported even when already gone",
      stale: cm,
      claimed: true,
      plan: {
        delete: [],
        skip: [
          {
            ref: cm,
            reason: "ConfigMap team-a/cfg is also rendered by another App",
            keep: false,
            claimed: true,
          },
        ],
      },
    },
    {
      name: "labelled for another App: skipped",
      stale: deploy,
      live: live(deploy, { ...ours, "plumb.dev/app": "api" }),
      plan: {
        delete: [],
        skip: [
          {
            ref: deploy,
            reason: "Deployment team-a/web is no longer labelled as this App's",
            keep: false,
          },
        ],
      },
    },
    {
      name: "labelled for a same-named App in another namespace: skipped",
      stale: deploy,
      live: live(deploy, { ...ours, "plumb.dev/app-namespace": "team-b" }),
      plan: {
        delete: [],
        skip: [
          {
            ref: deploy,
            reason: "Deployment team-a/web is no longer labelled as this App's",
            keep: false,
          },
        ],
      },
    },
    {
      name: "labels removed: skipped",
      stale: deploy,
      live: live(deploy, null),
      plan: {
        delete: [],
        skip: [
          {
            ref: deploy,
            reason: "Deployment team-a/web is no longer labelled as this App's",
            keep: false,
          },
        ],
      },
    },
    {
      name: "a Namespace is kept without the annotation",
      stale: ns,
      live: live(ns),
      plan: {
        delete: [],
        skip: [
          {
            ref: ns,
            reason:
              'Namespace team-a-extra is not pruned: a Namespace is kept unless annotated plumb.dev/prune: "true"',
            keep: false,
          },
        ],
      },
    },
    {
      name: "a Namespace annotated plumb.dev/prune=true is deleted",
      stale: ns,
      live: live(ns, ours, PRUNE_OK),
      plan: { delete: [ns], skip: [] },
    },
    {
      name: "a PVC is kept without the annotation",
      stale: pvc,
      live: live(pvc),
      plan: {
        delete: [],
        skip: [
          {
            ref: pvc,
            reason:
              'PersistentVolumeClaim team-a/data is not pruned: a PersistentVolumeClaim is kept unless annotated plumb.dev/prune: "true"',
            keep: false,
          },
        ],
      },
    },
    {
      name: "a PVC annotated with anything but true is kept",
      stale: pvc,
      live: live(pvc, ours, { "plumb.dev/prune": "yes" }),
      plan: {
        delete: [],
        skip: [
          {
            ref: pvc,
            reason:
              'PersistentVolumeClaim team-a/data is not pruned: a PersistentVolumeClaim is kept unless annotated plumb.dev/prune: "true"',
            keep: false,
          },
        ],
      },
    },
    {
      name: "a PVC annotated plumb.dev/prune=true is deleted",
      stale: pvc,
      live: live(pvc, ours, PRUNE_OK),
      plan: { delete: [pvc], skip: [] },
    },
    {
      name: "a CRD is kept without the annotation",
      stale: crd,
      live: live(crd),
      plan: {
        delete: [],
        skip: [
          {
            ref: crd,
            reason:
              'CustomResourceDefinition widgets.example.com is not pruned: a CustomResourceDefinition is kept unless annotated plumb.dev/prune: "true"',
            keep: false,
          },
        ],
      },
    },
    {
      name: "a CRD annotated plumb.dev/prune=true is deleted",
      stale: crd,
      live: live(crd, ours, PRUNE_OK),
      plan: { delete: [crd], skip: [] },
    },
    {
      name: "a kind named Namespace in another group is not protected",
      stale: lookalike,
      live: live(lookalike),
      plan: { delete: [lookalike], skip: [] },
    },
    {
      name: "the annotation does not override ownership",
      stale: ns,
      live: live(ns, { ...ours, "plumb.dev/app": "api" }, PRUNE_OK),
      plan: {
        delete: [],
        skip: [
          {
            ref: ns,
            reason: "Namespace team-a-extra is no longer labelled as this App's",
            keep: false,
          },
        ],
      },
    },
  ])("$name", ({ stale, live: object, claimed, plan }) => {
    expect(
      planPrune({
        inventory: [stale],
        desired: [],
        live: new Map(object ? [object] : []),
        claimedByOthers: new Set(claimed ? [refKey(stale)] : []),
        app,
      }),
    ).toEqual(plan);
  });

  it("names the other Apps that render a shared Namespace", () => {
    const shared = ref("v1", "Namespace", "team-a");
    expect(
      planPrune({
        inventory: [shared],
        desired: [],
        live: new Map([live(shared)]),
        claimedByOthers: new Set([refKey(shared)]),
        claimants: new Map([[refKey(shared), ["team-a/demo-b", "team-b/demo"]]]),
        app,
      }),
    ).toEqual({
      delete: [],
      skip: [
        {
          ref: shared,
          reason: "kept Namespace team-a: also rendered by team-a/demo-b, team-b/demo",
          keep: false,
          claimed: true,
        },
      ],
    });
  });

  it("plans only what the desired set lacks, in inventory order", () => {
    const other = ref("v1", "Service", "web", "team-a");
    expect(
      planPrune({
        inventory: [deploy, cm, other],
        desired: [cm],
        live: new Map([live(deploy), live(cm), live(other)]),
        claimedByOthers: new Set(),
        app,
      }),
    ).toEqual({ delete: [deploy, other], skip: [] });
  });

  it("an object still rendered under another version of its group is not pruned", () => {
    const old = ref("apps/v1beta1", "Deployment", "web", "team-a");
    expect(
      planPrune({
        inventory: [old],
        desired: [deploy],
        live: new Map([live(deploy)]),
        claimedByOthers: new Set(),
        app,
      }),
    ).toEqual({ delete: [], skip: [] });
  });
});

describe("holdInUse", () => {
  const now = new Date("2026-03-01T10:00:00Z");
  const old = ref("v1", "ConfigMap", "web-config-5k2h7g8t9m", "team-a");
  const secret = ref("v1", "Secret", "web-creds-8b7c6d", "team-a");
  const other = ref("v1", "ConfigMap", "unused", "team-a");
  const elsewhere = ref("v1", "ConfigMap", "web-config-5k2h7g8t9m", "team-b");
  const plan = (...del: ObjectRef[]): PrunePlan => ({ delete: del, skip: [] });
  const pod = (name: string, spec: unknown, over: Record<string, unknown> = {}): KubeObject => ({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: "team-a", ...(over["metadata"] as object) },
    spec,
    status: { phase: "Running" },
    ...over,
  });
  const rs = (
    name: string,
    replicas: number | undefined,
    spec: unknown,
    counted = 0,
  ): KubeObject => ({
    apiVersion: "apps/v1",
    kind: "ReplicaSet",
    metadata: { name, namespace: "team-a" },
    spec: { ...(replicas === undefined ? {} : { replicas }), template: { spec } },
    status: { replicas: counted },
  });
  const mounts = { volumes: [{ name: "c", configMap: { name: old.name } }], containers: [] };
  const pending = (r: ObjectRef, since: string, by: string) => ({
    ref: r,
    reason: `pending prune since ${since}: ConfigMap team-a/${r.name} is still used by ${by}; pruned once the rollout that moved away from it has finished`,
    keep: true,
    pendingSince: since,
  });

  it("keeps what a live Pod mounts, pending since now; deletes what nothing uses", () => {
    const got = holdInUse(
      plan(old, other),
      { pods: [pod("web-a1", mounts)], replicaSets: [] },
      new Map(),
      now,
    );
    expect(got).toEqual({
      delete: [other],
      skip: [pending(old, "2026-03-01T10:00:00.000Z", "Pod web-a1")],
    });
  });

  it("keeps the time the prune was first held", () => {
    const since = new Map([[refKey(old), "2026-03-01T09:00:00.000Z"]]);
    const got = holdInUse(
      plan(old),
      { pods: [], replicaSets: [rs("web-6f9", 2, mounts)] },
      since,
      now,
    );
    expect(got.skip).toEqual([pending(old, "2026-03-01T09:00:00.000Z", "ReplicaSet web-6f9")]);
  });

  it("a rollout finished (old ReplicaSet at 0, its Pods gone or terminating) lets the prune go", () => {
    const terminating = pod("web-a1", mounts, {
      metadata: { deletionTimestamp: "2026-03-01T09:59:00Z" },
    });
    const done = pod("job-x", mounts, { status: { phase: "Succeeded" } });
    const got = holdInUse(
      plan(old),
      { pods: [terminating, done], replicaSets: [rs("web-6f9", 0, mounts)] },
      new Map(),
      now,
    );
    expect(got).toEqual({ delete: [old], skip: [] });
  });

  it("an old ReplicaSet scaled to 0 that still counts Pods, or without spec.replicas (1), holds", () => {
    expect(
      holdInUse(plan(old), { pods: [], replicaSets: [rs("a", 0, mounts, 1)] }, new Map(), now)
        .delete,
    ).toEqual([]);
    expect(
      holdInUse(plan(old), { pods: [], replicaSets: [rs("b", undefined, mounts)] }, new Map(), now)
        .delete,
    ).toEqual([]);
  });

  it("finds every way a Pod names a ConfigMap or Secret, and only in its own namespace", () => {
    const cases: unknown[] = [
      { containers: [{ envFrom: [{ configMapRef: { name: old.name } }] }] },
      {
        initContainers: [
          { env: [{ name: "A", valueFrom: { configMapKeyRef: { name: old.name, key: "a" } } }] },
        ],
      },
      { volumes: [{ name: "p", projected: { sources: [{ configMap: { name: old.name } }] } }] },
      { ephemeralContainers: [{ envFrom: [{ configMapRef: { name: old.name } }] }] },
    ];
    for (const spec of cases) {
      const got = holdInUse(
        plan(old, elsewhere),
        { pods: [pod("p", spec)], replicaSets: [] },
        new Map(),
        now,
      );
      expect(got.delete).toEqual([elsewhere]);
    }
    const secrets: unknown[] = [
      { volumes: [{ name: "s", secret: { secretName: secret.name } }] },
      { containers: [{ envFrom: [{ secretRef: { name: secret.name } }] }] },
      {
        containers: [
          { env: [{ name: "P", valueFrom: { secretKeyRef: { name: secret.name, key: "p" } } }] },
        ],
      },
      { volumes: [{ name: "p", projected: { sources: [{ secret: { name: secret.name } }] } }] },
      { imagePullSecrets: [{ name: secret.name }] },
    ];
    for (const spec of secrets) {
      const got = holdInUse(
        plan(secret),
        { pods: [pod("p", spec)], replicaSets: [] },
        new Map(),
        now,
      );
      expect(got.delete).toEqual([]);
      expect(got.skip[0]?.reason).toMatch(
        /^pending prune since .*: Secret team-a\/web-creds-8b7c6d is still used by Pod p;/,
      );
    }
  });

  it("a ConfigMap in another group, or a kind Pods do not name, is not held", () => {
    const look = ref("example.com/v1", "ConfigMap", old.name, "team-a");
    const got = holdInUse(
      plan(look, deploy),
      { pods: [pod("p", mounts)], replicaSets: [] },
      new Map(),
      now,
    );
    expect(got).toEqual({ delete: [look, deploy], skip: [] });
  });

  it("names three users and counts the rest", () => {
    const pods = ["d", "a", "c", "b", "e"].map((n) => pod(`web-${n}`, mounts));
    const got = holdInUse(plan(old), { pods, replicaSets: [] }, new Map(), now);
    expect(got.skip[0]?.reason).toContain(
      "is still used by Pod web-a, Pod web-b, Pod web-c and 2 more;",
    );
  });

  it("keeps everything Pods may use in a namespace whose Pods could not be listed", () => {
    const got = holdInUse(
      plan(old, deploy),
      { pods: [], replicaSets: [], unknown: new Map([["team-a", "forbidden"]]) },
      new Map(),
      now,
    );
    expect(got.delete).toEqual([deploy]);
    expect(got.skip[0]?.reason).toBe(
      "pending prune since 2026-03-01T10:00:00.000Z: ConfigMap team-a/web-config-5k2h7g8t9m may still be used: its namespace's Pods could not be listed (forbidden); pruned once the rollout that moved away from it has finished",
    );
  });
});
