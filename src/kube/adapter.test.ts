import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { NAMESPACE_COLUMN } from "../app/index.ts";
import { KubeApiError } from "../core/index.ts";
import { createKubePort } from "./adapter.ts";
import { DiscoveryCache } from "./discovery.ts";
import { createNodeTransport } from "./node-transport.ts";
import { type KubeTransport, KubeTransportError } from "./transport.ts";

/** A node:http transport to a port nobody listens on. */
async function unreachable(): Promise<{ transport: KubeTransport; port: number }> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(r));
  const access = {
    context: "t",
    namespace: undefined,
    server: `http://127.0.0.1:${port}`,
    tls: { insecureSkipVerify: false },
    auth: { kind: "none" as const },
  };
  return { transport: createNodeTransport({ access, source: "t", files: [] }), port };
}

describe("createKubePort", () => {
  it("turns an unreachable API server into a 503 KubeApiError naming the request and the cause", async () => {
    const { transport, port } = await unreachable();
    const kube = createKubePort(transport, { discovery: new DiscoveryCache() });
    const err = await kube.getApp("a", "b").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubeApiError);
    expect(err).toMatchObject({
      status: 503,
      reason: "ServiceUnavailable",
      message: `GET /apis/plumb.dev/v1alpha1/namespaces/a/apps/b: connection refused (ECONNREFUSED 127.0.0.1:${port})`,
    });
    // A CRD's kind is discovered (a built-in one comes from the static table, no request).
    await expect(kube.resourceFor("example.com/v1", "Widget")).rejects.toMatchObject({
      status: 503,
      message: `GET /apis/example.com/v1: connection refused (ECONNREFUSED 127.0.0.1:${port})`,
    });
    // Helm's .Capabilities (discovery) too: the cause, not a bare "unreachable".
    await expect(kube.capabilities?.()).rejects.toMatchObject({
      status: 503,
      reason: "ServiceUnavailable",
      message: `GET /version: connection refused (ECONNREFUSED 127.0.0.1:${port})`,
    });
    expect(kube.requestCounts()).toEqual({
      get: 3,
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
          columnDefinitions: [
            "Name",
            "Health",
            NAMESPACE_COLUMN,
            "UID",
            "Interval",
            "Generation",
          ].map((name) => ({ name })),
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
      "the App list has no App Namespace column: install this version's CRD (infra/crds/apps.plumb.dev.yaml)",
    );
  });

  it("maps a timeout to 504 Timeout and says how many attempts an error answer took", async () => {
    const slow: KubeTransport = async (method, path) => {
      throw new KubeTransportError(method, path, "timeout", "no answer within 15000 ms (timeout)", {
        sent: true,
      });
    };
    await expect(
      createKubePort(slow, { discovery: new DiscoveryCache() }).getSecret("a", "s"),
    ).rejects.toMatchObject({
      status: 504,
      reason: "Timeout",
      message: "GET /api/v1/namespaces/a/secrets/s: no answer within 15000 ms (timeout)",
    });
    const busy: KubeTransport = async () => ({
      status: 429,
      body: { kind: "Status", reason: "TooManyRequests", message: "storage is (re)initializing" },
      attempts: 11,
    });
    await expect(
      createKubePort(busy, { discovery: new DiscoveryCache() }).listApps(),
    ).rejects.toMatchObject({
      status: 429,
      message:
        "GET /apis/plumb.dev/v1alpha1/apps: storage is (re)initializing (HTTP 429 after 11 attempts)",
    });
  });
});
