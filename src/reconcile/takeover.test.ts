// prepareTakeover's decisions on a fake API server (the real apply, patch and Pods are in
// test/e2e/service-app.test.ts).
import { describe, expect, it } from "vitest";
import { createFakeKube, testApp } from "../../test/support/fake-kube.ts";
import { KubeApiError, type KubeObject } from "../core/index.ts";
import { runContext } from "./context.ts";
import { prepareTakeover } from "./takeover.ts";

const cm = (name: string, labels: Record<string, string> = {}): KubeObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: "team-a", labels },
  data: { a: "1" },
});
const password: KubeObject = {
  apiVersion: "v1",
  kind: "Secret",
  metadata: {
    name: "shop-postgres",
    namespace: "team-a",
    annotations: { "plumb.dev/generate": "password", "plumb.dev/ssa": "IfNotPresent" },
  },
  type: "Opaque",
};

/** Field manager of the live objects made by another tool than kubectl (by name). */
const TOOL: Record<string, string> = { "by-helm": "helm" };

async function setup(live: KubeObject[], inventory: string[] = []) {
  const kube = createFakeKube();
  for (const o of live) {
    const manager = TOOL[o.metadata.name] ?? "kubectl-client-side-apply";
    await kube.apply(o, { fieldManager: manager });
    const stored = kube.objects.get([...kube.objects.keys()].at(-1)!)!;
    stored.metadata.managedFields = [
      {
        manager,
        operation: "Update",
        apiVersion: "v1",
        fieldsV1: { "f:data": { "f:a": {} } },
      },
    ];
  }
  const app = testApp("team-a", "shop", {
    status: {
      inventory: inventory.map((name) => ({
        apiVersion: "v1",
        kind: "ConfigMap",
        namespace: "team-a",
        name,
      })),
    },
  });
  const ctx = runContext(app, { kube, git: {} as never, holder: "t" }, new Date());
  return { kube, ctx };
}

describe("prepareTakeover", () => {
  it("creates an absent Secret with fresh generated values, then leaves it alone once it exists", async () => {
    const { ctx } = await setup([]);
    const first = await prepareTakeover(ctx, [password], false);
    const data = first.apply[0]?.["data"] as Record<string, string>;
    expect(atob(data["password"] ?? "")).toMatch(/^[0-9a-f]{64}$/);
    const again = await prepareTakeover(ctx, [password], false);
    expect(again.apply[0]?.["data"]).not.toEqual(data); // random each time it is created

    const { ctx: present } = await setup([{ ...password, data: { password: btoa("mine") } }]);
    const kept = await prepareTakeover(present, [password], false);
    expect(kept.apply).toEqual([]);
    expect(kept.present.get("/Secret/team-a/shop-postgres")?.["data"]).toEqual({
      password: btoa("mine"),
    });
  });

  it("takes over kubectl's objects, refuses another tool's unless adopting, never another App's", async () => {
    const fresh = () =>
      setup(
        [
          cm("by-kubectl"),
          cm("by-helm"),
          cm("other-app", { "plumb.dev/app": "blog", "plumb.dev/app-namespace": "team-b" }),
          cm("mine", { "plumb.dev/app": "shop", "plumb.dev/app-namespace": "team-a" }),
          cm("listed"),
        ],
        ["listed"],
      );
    const objects = [
      cm("by-kubectl"),
      cm("by-helm"),
      cm("other-app"),
      cm("mine"),
      cm("listed"),
      cm("new"),
    ];
    const { ctx, kube } = await fresh();
    const refused = await prepareTakeover(ctx, objects, false);
    expect(Object.fromEntries(refused.refused)).toEqual({
      "/ConfigMap/team-a/by-helm":
        'ConfigMap team-a/by-helm exists and is managed by field manager "helm", not by this App; set spec.adopt: true to take it over',
      "/ConfigMap/team-a/other-app":
        "ConfigMap team-a/other-app belongs to App team-b/blog (its tracking labels)",
    });
    expect(refused.adopted.map((r) => r.name)).toEqual(["by-kubectl"]);
    expect(refused.apply.map((o) => o.metadata.name)).toEqual([
      "by-kubectl",
      "mine",
      "listed",
      "new",
    ]);
    // The client-side manager's fields are plumb's Apply entry now.
    expect(kube.objects.get("/ConfigMap/team-a/by-kubectl")?.metadata.managedFields).toEqual([
      {
        manager: "plumb",
        operation: "Apply",
        apiVersion: "v1",
        fieldsV1: { "f:data": { "f:a": {} } },
      },
    ]);

    const again = await fresh();
    const adopted = await prepareTakeover(again.ctx, objects, true);
    expect([...adopted.refused.keys()]).toEqual(["/ConfigMap/team-a/other-app"]);
    expect(adopted.adopted.map((r) => r.name)).toEqual(["by-kubectl", "by-helm"]);
    expect(again.kube.objects.get("/ConfigMap/team-a/by-helm")?.metadata.managedFields).toEqual([
      {
        manager: "plumb",
        operation: "Apply",
        apiVersion: "v1",
        fieldsV1: { "f:data": { "f:a": {} } },
      },
    ]);
  });

  it("a controller's write between the read and the ownership patch (409) is read again and the takeover tried again", async () => {
    const { ctx, kube } = await setup([cm("by-kubectl")]);
    const rvBefore = kube.objects.get("/ConfigMap/team-a/by-kubectl")?.metadata.resourceVersion;
    kube.fail.patchManagedFields = new KubeApiError(
      409,
      "Conflict",
      'Operation cannot be fulfilled on configmaps "by-kubectl": the object has been modified',
    );
    const out = await prepareTakeover(ctx, [cm("by-kubectl")], false);
    expect(Object.fromEntries(out.refused)).toEqual({});
    expect(out.adopted.map((r) => r.name)).toEqual(["by-kubectl"]);
    const stored = kube.objects.get("/ConfigMap/team-a/by-kubectl");
    expect(stored?.metadata.managedFields?.map((m) => m.manager)).toEqual(["plumb"]);
    expect(stored?.metadata.resourceVersion).not.toBe(rvBefore);
  });

  it("a conflict that does not end refuses the object after 5 attempts, with the API server's message", async () => {
    const { ctx, kube } = await setup([cm("by-kubectl")]);
    let attempts = 0;
    kube.patchManagedFields = async () => {
      attempts++;
      throw new KubeApiError(409, "Conflict", "the object has been modified");
    };
    const out = await prepareTakeover(ctx, [cm("by-kubectl")], false);
    expect(attempts).toBe(5);
    expect(Object.fromEntries(out.refused)).toEqual({
      "/ConfigMap/team-a/by-kubectl":
        "adopting ConfigMap team-a/by-kubectl: the object has been modified",
    });
  });

  it("reads the objects new to the App with one list per kind and namespace holding several, a GET for any other", async () => {
    const { ctx, kube } = await setup([cm("by-helm"), cm("elsewhere")]);
    const svc: KubeObject = {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "web", namespace: "team-a" },
    };
    const before = kube.requestCounts();
    const out = await prepareTakeover(ctx, [cm("by-helm"), cm("a"), cm("b"), svc], false);
    const after = kube.requestCounts();
    expect([after.list - before.list, after.get - before.get]).toEqual([1, 1]);
    // What the list found decides as a GET's answer would.
    expect([...out.refused.keys()]).toEqual(["/ConfigMap/team-a/by-helm"]);
    expect(out.apply.map((o) => o.metadata.name)).toEqual(["a", "b", "web"]);
  });

  it("a list that fails refuses each object it was read for, with the API server's message; Secrets are read one by one", async () => {
    const { ctx, kube } = await setup([]);
    kube.fail.list = new KubeApiError(
      403,
      "Forbidden",
      'configmaps is forbidden: cannot list "configmaps"',
    );
    const second = { ...password, metadata: { ...password.metadata, name: "other-postgres" } };
    const before = kube.requestCounts();
    const out = await prepareTakeover(ctx, [cm("a"), cm("b"), password, second], false);
    const after = kube.requestCounts();
    expect(Object.fromEntries(out.refused)).toEqual({
      "/ConfigMap/team-a/a": 'configmaps is forbidden: cannot list "configmaps"',
      "/ConfigMap/team-a/b": 'configmaps is forbidden: cannot list "configmaps"',
    });
    // The failed list is not counted by the fake; the two Secrets are a GET each.
    expect(after.get - before.get).toBe(2);
    expect(out.apply.map((o) => o.metadata.name)).toEqual(["shop-postgres", "other-postgres"]);
  });

  it("an object whose kind is not served yet (its CRD is in the same render) is absent, not refused", async () => {
    const { ctx, kube } = await setup([]);
    kube.unknownKinds.add("Widget");
    const widget: KubeObject = {
      apiVersion: "example.com/v1",
      kind: "Widget",
      metadata: { name: "w", namespace: "team-a" },
    };
    const out = await prepareTakeover(ctx, [widget], false);
    expect(out.refused.size).toBe(0);
    expect(out.apply).toEqual([widget]);
  });
});
