import { describe, expect, it } from "vitest";
import type { KubeObject } from "../core/index.ts";
import { cascadeOf, cascadeReason, foreignContents } from "./cascade.ts";

const APP = { namespace: "team-a", name: "web" };
const labels = (ns: string, name: string) => ({
  "plumb.dev/app": name,
  "plumb.dev/app-namespace": ns,
  "app.kubernetes.io/managed-by": "plumb",
});
const obj = (
  apiVersion: string,
  kind: string,
  name: string,
  meta: Partial<KubeObject["metadata"]> = {},
): KubeObject => ({ apiVersion, kind, metadata: { name, namespace: "shared", ...meta } });
const names = (list: KubeObject[]) => list.map((o) => `${o.kind}/${o.metadata.name}`);

describe("cascadeOf", () => {
  it.each([
    [{ apiVersion: "v1", kind: "Namespace", name: "x" }, "namespace"],
    [{ apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition", name: "w" }, "crd"],
    [{ apiVersion: "example.com/v1", kind: "Namespace", name: "x" }, undefined],
    [{ apiVersion: "v1", kind: "PersistentVolumeClaim", name: "x", namespace: "n" }, undefined],
  ])("%o → %s", (ref, want) => {
    expect(cascadeOf(ref)).toBe(want);
  });
});

describe("foreignContents", () => {
  const deploy = obj("apps/v1", "Deployment", "web", {
    uid: "d1",
    labels: labels("team-a", "web"),
  });
  const rs = obj("apps/v1", "ReplicaSet", "web-1", {
    uid: "r1",
    ownerReferences: [{ kind: "Deployment", name: "web", uid: "d1" }],
  });
  const pod = obj("v1", "Pod", "web-1-x", {
    uid: "p1",
    ownerReferences: [{ kind: "ReplicaSet", name: "web-1", uid: "r1" }],
  });

  it("the App's objects, their dependents and the Namespace's defaults are not foreign", () => {
    const contents = [
      deploy,
      rs,
      pod,
      obj("v1", "Endpoints", "web", { labels: labels("team-a", "web") }),
      obj("v1", "ConfigMap", "kube-root-ca.crt"),
      obj("v1", "ServiceAccount", "default"),
      obj("v1", "ConfigMap", "unlabelled-but-inventoried"),
    ];
    const inventory = new Set(["/ConfigMap/shared/unlabelled-but-inventoried"]);
    expect(foreignContents({ contents, app: APP, inventory })).toEqual([]);
  });

  it("another App's objects, unmanaged ones, Apps and their dependents are foreign", () => {
    const other = obj("v1", "ConfigMap", "theirs", { uid: "o1", labels: labels("team-b", "web") });
    const contents = [
      deploy,
      other,
      obj("v1", "Secret", "theirs-child", {
        ownerReferences: [{ kind: "ConfigMap", name: "theirs", uid: "o1" }],
      }),
      obj("v1", "ConfigMap", "manual"),
      obj("plumb.dev/v1alpha1", "App", "web", { labels: {} }),
      obj("v1", "ServiceAccount", "builder"),
      // A label naming this App's name in another namespace is not this App.
      obj("v1", "ConfigMap", "same-name", { labels: labels("team-x", "web") }),
    ];
    expect(names(foreignContents({ contents, app: APP, inventory: new Set() }))).toEqual([
      "ConfigMap/theirs",
      "Secret/theirs-child",
      "ConfigMap/manual",
      "App/web",
      "ServiceAccount/builder",
      "ConfigMap/same-name",
    ]);
  });

  it("an ownership cycle proves nothing", () => {
    const a = obj("v1", "ConfigMap", "a", {
      uid: "a",
      ownerReferences: [{ kind: "ConfigMap", name: "b", uid: "b" }],
    });
    const b = obj("v1", "ConfigMap", "b", {
      uid: "b",
      ownerReferences: [{ kind: "ConfigMap", name: "a", uid: "a" }],
    });
    expect(names(foreignContents({ contents: [a, b], app: APP, inventory: new Set() }))).toEqual([
      "ConfigMap/a",
      "ConfigMap/b",
    ]);
  });
});

describe("cascadeReason", () => {
  it("names up to five objects and their App, and counts the rest", () => {
    const foreign = [
      obj("v1", "ConfigMap", "theirs", { labels: labels("team-b", "other") }),
      ...Array.from({ length: 6 }, (_, i) => obj("v1", "ConfigMap", `m${i}`)),
    ];
    expect(cascadeReason({ apiVersion: "v1", kind: "Namespace", name: "shared" }, foreign)).toBe(
      "Namespace shared is not pruned: deleting it would delete 7 objects that are not this App's: " +
        "ConfigMap shared/theirs (App team-b/other), ConfigMap shared/m0, ConfigMap shared/m1, " +
        "ConfigMap shared/m2, ConfigMap shared/m3, and 2 more",
    );
  });
});
