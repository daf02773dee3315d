import { describe, expect, it } from "vitest";
import {
  describeLookup,
  lookupEnabled,
  planLookup,
  postRenderedObjects,
  postRenderRequest,
  postRenderStreams,
} from "./helm-extras.ts";

const ctx = {
  destinationNamespace: "team",
  allowedClusterKinds: ["rbac.authorization.k8s.io/ClusterRole"],
};
const key = (apiVersion: string, kind: string, namespace: string, name: string) => ({
  apiVersion,
  kind,
  namespace,
  name,
});
const namespaced = { namespaced: true };
const cluster = { namespaced: false };

describe("planLookup", () => {
  it("reads objects and lists in the destination namespace", () => {
    expect(planLookup(key("v1", "Secret", "team", "pw"), namespaced, ctx)).toEqual({
      read: "get",
      namespace: "team",
      name: "pw",
    });
    expect(planLookup(key("v1", "ConfigMap", "team", ""), namespaced, ctx)).toEqual({
      read: "list",
      namespace: "team",
    });
  });

  it("answers another namespace, every namespace and unknown kinds as absent, saying why", () => {
    expect(planLookup(key("v1", "Secret", "kube-system", "pw"), namespaced, ctx)).toEqual({
      read: "none",
      why: "namespace kube-system is not the App's destination namespace team",
    });
    expect(planLookup(key("v1", "Secret", "", ""), namespaced, ctx)).toEqual({
      read: "none",
      why: "every namespace is not the App's destination namespace team",
    });
    expect(planLookup(key("x.io/v1", "Thing", "team", "a"), undefined, ctx)).toEqual({
      read: "none",
      why: "the API server serves no such kind",
    });
  });

  it("reads cluster-scoped kinds Apps may apply and the destination Namespace, nothing else", () => {
    const role = key("rbac.authorization.k8s.io/v1", "ClusterRole", "team", "view");
    expect(planLookup(role, cluster, ctx)).toEqual({
      read: "get",
      namespace: undefined,
      name: "view",
    });
    expect(planLookup(key("v1", "Namespace", "", "team"), cluster, ctx)).toMatchObject({
      read: "get",
    });
    expect(planLookup(key("v1", "Namespace", "", "default"), cluster, ctx)).toEqual({
      read: "none",
      why: "cluster-scoped Namespace is not a kind Apps may apply (PLUMB_ALLOWED_CLUSTER_KINDS)",
    });
    expect(planLookup(key("v1", "Node", "", ""), cluster, ctx)).toMatchObject({ read: "none" });
  });

  it("names lookups for logs; lookup is on unless the App turns it off", () => {
    expect(describeLookup(key("v1", "Secret", "team", "pw"))).toBe("v1 Secret team/pw");
    expect(describeLookup(key("v1", "ConfigMap", "team", ""))).toBe("v1 ConfigMap list in team");
    expect(lookupEnabled(undefined)).toBe(true);
    expect(lookupEnabled({})).toBe(true);
    expect(lookupEnabled({ lookup: false })).toBe(false);
  });
});

describe("post-renderers", () => {
  const objects = [
    {
      object: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a" } },
      origin: "web/templates/cm.yaml:1",
    },
  ];
  it("build a kustomization over the chart's objects with the post-renderer's images and patches", () => {
    const patches = [
      { patch: "- op: add\n  path: /data\n  value: {}", target: { kind: "ConfigMap" } },
    ];
    const images = [{ name: "nginx", newTag: "1.27" }];
    const r = postRenderRequest(objects, { kustomize: { patches, images } }, 100);
    const text = (i: number) => new TextDecoder().decode(r.files[i]?.data);
    expect(r.files.map((f) => f.path)).toEqual(["kustomization.yaml", "helm-output.yaml"]);
    expect(JSON.parse(text(0))).toEqual({
      apiVersion: "kustomize.config.k8s.io/v1beta1",
      kind: "Kustomization",
      resources: ["helm-output.yaml"],
    });
    expect(text(1)).toBe(`${JSON.stringify(objects[0]?.object)}\n`);
    expect(r).toMatchObject({ path: "", patches, images, maxOutputBytes: 100 });
  });

  it("keep each object's template origin; a new object is named as the post-renderer's", () => {
    const r = postRenderedObjects(objects, {
      objects: [
        {
          line: 1,
          object: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a" }, data: {} },
        },
        { line: 7, object: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "b" } } },
      ],
    });
    expect(r.ok && r.value.map((p) => p.origin)).toEqual([
      "web/templates/cm.yaml:1",
      "postRenderers: kustomize build .:7",
    ]);
  });
});

describe("postRenderStreams", () => {
  const obj = (name: string, hook?: string) => ({
    object: {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: hook ? { name, annotations: { "helm.sh/hook": hook } } : { name },
    },
    origin: `c/templates/${name}.yaml:1`,
  });
  const all = [obj("a"), obj("pre", "pre-install"), obj("b")];
  const names = (s: { object: { metadata: { name: string } } }[]) =>
    s.map((p) => p.object.metadata.name);

  it("combined (the default, Helm 4): one stream, hooks in it", () => {
    for (const strategy of [undefined, "combined"] as const) {
      const r = postRenderStreams(all, strategy);
      expect(r.streams.map(names)).toEqual([["a", "pre", "b"]]);
      expect(r.untouched).toEqual([]);
    }
  });

  it("separate: the chart's objects and its hooks apart; nohooks (Helm 3): hooks untouched", () => {
    expect(postRenderStreams(all, "separate").streams.map(names)).toEqual([["a", "b"], ["pre"]]);
    expect(postRenderStreams([obj("a")], "separate").streams.map(names)).toEqual([["a"]]);
    const nohooks = postRenderStreams(all, "nohooks");
    expect(nohooks.streams.map(names)).toEqual([["a", "b"]]);
    expect(names(nohooks.untouched)).toEqual(["pre"]);
    // An empty stream is not built (a patch without a target would find nothing to patch).
    expect(postRenderStreams([obj("pre", "pre-install")], "nohooks").streams).toEqual([]);
    expect(postRenderStreams([], "combined").streams).toEqual([]);
  });
});
