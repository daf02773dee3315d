import { describe, expect, it } from "vitest";
import type { KubeObject, ObjectRef } from "../core/index.ts";
import { refKey } from "../core/index.ts";
import { type PrunePlan, planPrune } from "./prune.ts";

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
