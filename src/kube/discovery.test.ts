import { describe, expect, it } from "vitest";
import { builtinResource, builtinResources } from "./builtin-resources.ts";
import { DiscoveryCache, discover } from "./discovery.ts";
import type { KubeTransport } from "./transport.ts";

/** A transport serving one CRD group-version's discovery document, recording each path. */
function crdServer(paths: string[], kinds: Array<{ name: string; kind: string }>): KubeTransport {
  return async (_method, path) => {
    paths.push(path);
    if (path !== "/apis/example.com/v1") return { status: 404, body: {} };
    return {
      status: 200,
      body: { resources: kinds.map((k) => ({ ...k, namespaced: true })) },
    };
  };
}

describe("discover", () => {
  it("answers built-in kinds from the static table, with no request", async () => {
    const paths: string[] = [];
    let counted = 0;
    const cache = new DiscoveryCache();
    const t = crdServer(paths, []);
    const count = () => counted++;
    expect(await discover(cache, t, "apps/v1", "Deployment", 0, count)).toEqual({
      resource: "deployments",
      namespaced: true,
    });
    expect(await discover(cache, t, "v1", "Namespace", 0, count)).toEqual({
      resource: "namespaces",
      namespaced: false,
    });
    expect(
      await discover(cache, t, "rbac.authorization.k8s.io/v1", "ClusterRole", 0, count),
    ).toEqual({ resource: "clusterroles", namespaced: false });
    expect(paths).toEqual([]);
    expect(counted).toBe(0);
  });

  it("discovers a CRD's kind, caches it, and reads its group-version once more for a new kind", async () => {
    const paths: string[] = [];
    const kinds = [{ name: "widgets", kind: "Widget" }];
    const cache = new DiscoveryCache(60_000);
    const t = crdServer(paths, kinds);
    const count = () => {};
    expect(await discover(cache, t, "example.com/v1", "Widget", 0, count)).toEqual({
      resource: "widgets",
      namespaced: true,
    });
    expect(await discover(cache, t, "example.com/v1", "Widget", 1_000, count)).toBeDefined();
    expect(paths).toEqual(["/apis/example.com/v1"]);
    // A CRD established since: the missing kind costs one more read, which finds it.
    kinds.push({ name: "gadgets", kind: "Gadget" });
    expect(await discover(cache, t, "example.com/v1", "Gadget", 2_000, count)).toEqual({
      resource: "gadgets",
      namespaced: true,
    });
    expect(paths).toEqual(["/apis/example.com/v1", "/apis/example.com/v1"]);
  });

  it("asks the API server for a built-in group-version outside the table (beta, or newer than it)", async () => {
    const paths: string[] = [];
    const t = crdServer(paths, []);
    expect(
      await discover(new DiscoveryCache(), t, "resource.k8s.io/v1", "ResourceClaim", 0, () => {}),
    ).toBeUndefined();
    expect(paths).toEqual(["/apis/resource.k8s.io/v1"]);
  });
});

describe("builtinResource", () => {
  it("knows a kind only under its own group-version", () => {
    expect(builtinResource("autoscaling/v2", "HorizontalPodAutoscaler")).toEqual({
      resource: "horizontalpodautoscalers",
      namespaced: true,
    });
    expect(builtinResource("apps/v1beta1", "Deployment")).toBeUndefined();
    expect(builtinResource("v1", "Deployment")).toBeUndefined();
    expect(builtinResource("example.com/v1", "ConfigMap")).toBeUndefined();
  });

  it("hands out copies: a caller cannot change the table", () => {
    const a = builtinResource("v1", "ConfigMap");
    if (a) a.resource = "changed";
    expect(builtinResource("v1", "ConfigMap")?.resource).toBe("configmaps");
    expect(builtinResources().find(([v, k]) => v === "v1" && k === "ConfigMap")?.[2]).toEqual({
      resource: "configmaps",
      namespaced: true,
    });
  });
});
