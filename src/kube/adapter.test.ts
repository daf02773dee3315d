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

  it("lists Apps in pages of 500, following the continue token", async () => {
    const seen: Array<Record<string, string> | undefined> = [];
    const t: KubeTransport = async (_m, _p, req) => {
      seen.push(req?.query);
      const from = Number(req?.query?.["continue"] ?? 0);
      const items = Array.from({ length: Math.min(500, 1200 - from) }, (_, i) => ({
        metadata: { name: `a-${from + i}`, namespace: "ns" },
      }));
      const next = from + 500 < 1200 ? String(from + 500) : undefined;
      return { status: 200, body: { items, metadata: next ? { continue: next } : {} } };
    };
    const kube = createKubePort(t, { discovery: new DiscoveryCache() });
    const apps = await kube.listApps();
    expect(apps).toHaveLength(1200);
    expect(apps[1199]).toMatchObject({ kind: "App", metadata: { name: "a-1199" } });
    expect(seen).toEqual([
      { limit: "500" },
      { limit: "500", continue: "500" },
      { limit: "500", continue: "1000" },
    ]);
    expect(kube.requestCounts().list).toBe(3);
  });

  it("reads the compact App list as the Table form, without objects, one page per call", async () => {
    const calls: Array<{ path: string; query: unknown; accept: unknown }> = [];
    const t: KubeTransport = async (_m, path, req) => {
      calls.push({ path, query: req?.query, accept: req?.accept });
      return {
        status: 200,
        body: {
          kind: "Table",
          columnDefinitions: ["Name", "Health", "Namespace", "UID", "Interval", "Generation"].map(
            (name) => ({ name }),
          ),
          rows: [{ cells: ["web", "Healthy", "team-a", "u-1", "5m", 2] }, { cells: [null] }],
          metadata: { continue: "next-page" },
        },
      };
    };
    const kube = createKubePort(t, { discovery: new DiscoveryCache() });
    const page = await kube.listAppRows("team-a", 100, "this-page");
    expect(page).toEqual({
      rows: [
        {
          namespace: "team-a",
          name: "web",
          uid: "u-1",
          interval: "5m",
          generation: 2,
          healthStatus: "Healthy",
          deleting: false,
        },
      ],
      continue: "next-page",
    });
    expect(calls).toEqual([
      {
        path: "/apis/plumb.dev/v1alpha1/namespaces/team-a/apps",
        query: { limit: "100", includeObject: "None", continue: "this-page" },
        accept: "application/json;as=Table;v=v1;g=meta.k8s.io",
      },
    ]);
  });

  it("says to install this version's CRD when the Table lacks the row columns", async () => {
    const t: KubeTransport = async () => ({
      status: 200,
      body: { kind: "Table", columnDefinitions: [{ name: "Name" }], rows: [] },
    });
    const kube = createKubePort(t, { discovery: new DiscoveryCache() });
    await expect(kube.listAppRows(undefined, 10)).rejects.toThrow(
      "the App list has no Namespace column: install this version's CRD (infra/crds/apps.plumb.dev.yaml)",
    );
  });
});
