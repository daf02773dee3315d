import { describe, expect, it } from "vitest";
import { KubeApiError } from "../core/index.ts";
import { createKubePort } from "./adapter.ts";
import { DiscoveryCache } from "./discovery.ts";
import type { KubeTransport } from "./transport.ts";

const unreachable: KubeTransport = async () => {
  throw Object.assign(new TypeError("fetch failed"), { cause: { code: "ECONNREFUSED" } });
};

describe("createKubePort", () => {
  it("turns an unreachable API server into a 503 KubeApiError", async () => {
    const kube = createKubePort(unreachable, { discovery: new DiscoveryCache() });
    const err = await kube.getApp("a", "b").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubeApiError);
    expect(err).toMatchObject({
      status: 503,
      message: "kubernetes API unreachable (ECONNREFUSED)",
    });
    await expect(kube.resourceFor("apps/v1", "Deployment")).rejects.toMatchObject({ status: 503 });
    expect(kube.requestCounts()).toEqual({
      get: 2,
      list: 0,
      create: 0,
      update: 0,
      patch: 0,
      delete: 0,
    });
  });

  it("maps an API error to status, reason and message", async () => {
    const t: KubeTransport = async () => ({
      status: 409,
      body: { kind: "Status", reason: "Conflict", message: "the object has been modified" },
    });
    const kube = createKubePort(t, { discovery: new DiscoveryCache() });
    const app = {
      apiVersion: "plumb.dev/v1alpha1",
      kind: "App",
      metadata: { name: "b", namespace: "a", resourceVersion: "1" },
    };
    await expect(kube.writeStatus(app, {})).rejects.toMatchObject({
      status: 409,
      reason: "Conflict",
      message:
        "PUT /apis/plumb.dev/v1alpha1/namespaces/a/apps/b/status: the object has been modified",
    });
  });
});
