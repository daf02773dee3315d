// The static table of built-in kinds (src/kube/builtin-resources.ts) against the discovery of
// the real kube-apiserver: every entry is served under that resource name and scope.
import { describe, expect, it } from "vitest";
import { builtinResources } from "../../src/kube/builtin-resources.ts";
import { groupVersionPath } from "../../src/kube/discovery.ts";
import { transport } from "./support.ts";

describe("the built-in resource table", () => {
  it("matches the API server's discovery for every kind it lists", async () => {
    const entries = builtinResources();
    const served: Array<[string, string, { resource: string; namespaced: boolean } | undefined]> =
      [];
    const documents = new Map<string, Array<{ name: string; kind: string; namespaced: boolean }>>();
    for (const [apiVersion, kind] of entries) {
      if (!documents.has(apiVersion)) {
        const res = await transport()("GET", groupVersionPath(apiVersion));
        expect(res.status, apiVersion).toBe(200);
        const body = res.body as {
          resources: Array<{ name: string; kind: string; namespaced: boolean }>;
        };
        documents.set(apiVersion, body.resources);
      }
      const hit = documents.get(apiVersion)?.find((r) => r.kind === kind && !r.name.includes("/"));
      served.push([apiVersion, kind, hit && { resource: hit.name, namespaced: hit.namespaced }]);
    }
    expect(served).toEqual(entries);
    expect(entries.length).toBeGreaterThan(40);
  });
});
