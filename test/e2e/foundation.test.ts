// The foundation: the App CRD and what the local control plane must do for plumb.
import { execFileSync } from "node:child_process";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { FIELD_MANAGER, ROW_COLUMNS, validateSpec } from "../../src/app/index.ts";
import {
  api,
  createApp,
  createNamespace,
  getObject,
  kubeconfig,
  kubePort,
  transport,
  waitFor,
} from "./support.ts";

const deployment = (ns: string, name: string, image = "nginx:1.27") => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name, namespace: ns },
  spec: {
    replicas: 2,
    selector: { matchLabels: { app: name } },
    template: {
      metadata: { labels: { app: name } },
      spec: { containers: [{ name: "web", image }] },
    },
  },
});

describe("App CRD", () => {
  it("is Established and `kubectl get apps` columns come from it", async () => {
    const crd = await api(
      "GET",
      "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/apps.plumb.dev",
    );
    const established = crd.status.conditions.find(
      (c: { type: string }) => c.type === "Established",
    );
    expect(established.status).toBe("True");
    await createNamespace("crd-cols");
    const created = await createApp("crd-cols", "demo", {
      source: { git: { url: "https://git.example/org/demo.git" } },
    });
    expect(created.status).toBe(201);
    const table = (
      await transport()("GET", "/apis/plumb.dev/v1alpha1/namespaces/crd-cols/apps", {
        accept: "application/json;as=Table;v=v1;g=meta.k8s.io",
      })
    ).body as { columnDefinitions: Array<{ name: string }>; rows: Array<{ cells: unknown[] }> };
    expect(table.columnDefinitions.map((c) => c.name)).toEqual([
      "Name",
      "Ready",
      "Reason",
      "Sync",
      "Health",
      "Revision",
      "Age",
      // Priority 1 (-o wide): what the scheduled tick reads from this Table.
      ...ROW_COLUMNS.map((c) => c.name),
      "Message",
    ]);
    expect(table.rows[0]?.cells[0]).toBe("demo");
  });

  it("`kubectl explain app.spec.source` shows the field descriptions", async () => {
    const bin =
      process.env["PLUMB_CLUSTER_BIN"] ||
      join(resolve(import.meta.dirname, "../.."), "test/cluster/bin/plumb-cluster");
    const out = execFileSync(
      bin,
      ["kubectl", "explain", "app.spec.source", "--kubeconfig", kubeconfig()],
      { encoding: "utf8" },
    );
    expect(out).toContain(
      "Where the desired state comes from: exactly one of git, image, app or chart.",
    );
    expect(out).toContain("git\t<Object>");
  });

  it("the API server defaults a spec exactly as plumb's schema does", async () => {
    // The defaults' values are pinned in src/app/crd.test.ts; here the CRD must agree with them.
    await createNamespace("crd-defaults");
    const input = { source: { git: { url: "https://git.example/org/demo.git" } } };
    const res = await createApp("crd-defaults", "d", input);
    const spec = (res.body as { spec: Record<string, unknown> }).spec;
    const schema = validateSpec(input);
    expect(schema.ok).toBe(true);
    expect(spec).toEqual(schema.ok ? schema.value : undefined);
  });

  it("refuses an invalid App and names the field path", async () => {
    await createNamespace("crd-invalid");
    const bad = await createApp("crd-invalid", "bad", {
      source: { git: { url: "ftp://x" } },
      interval: "soon",
    });
    expect(bad.status).toBe(422);
    const message = (bad.body as { message: string }).message;
    expect(message).toContain("spec.source.git.url");
    expect(message).toContain("spec.interval");
    // A path out of the repository and the interval's range too, as validateSpec says them
    // (CEL rules on the CRD).
    const outside = await createApp("crd-invalid", "outside", {
      source: { git: { url: "https://h/o/r.git", path: "deploy/../../etc" } },
    });
    expect(outside.status).toBe(422);
    expect((outside.body as { message: string }).message).toBe(
      `App.plumb.dev "outside" is invalid: spec.source.git.path: Invalid value: "deploy/../../etc": must not contain '..'`,
    );
    for (const interval of ["1ms", "99999h"]) {
      const out = await createApp("crd-invalid", "range", {
        source: { git: { url: "https://h/o/r.git" } },
        interval,
      });
      expect(out.status).toBe(422);
      expect((out.body as { message: string }).message).toBe(
        `App.plumb.dev "range" is invalid: spec.interval: Invalid value: "${interval}": must be between 1s and 8760h (a year)`,
      );
    }
    const both = await createApp("crd-invalid", "both", {
      source: { git: { url: "https://h/o/r.git" }, image: { repository: "r/web" } },
    });
    expect(both.status).toBe(422);
    expect((both.body as { message: string }).message).toContain(
      "exactly one of source.git, source.image, source.app and source.chart must be set",
    );
  });
});

describe("server-side apply", () => {
  it("records field manager plumb and conflicts for another manager unless forced", async () => {
    await createNamespace("ssa");
    const kube = kubePort();
    const applied = await kube.apply(deployment("ssa", "web"));
    expect(applied.metadata.managedFields?.map((m) => [m.manager, m.operation])).toContainEqual([
      FIELD_MANAGER,
      "Apply",
    ]);
    const path = "/apis/apps/v1/namespaces/ssa/deployments/web";
    const other = { ...deployment("ssa", "web", "nginx:1.28") };
    const conflict = await transport()("PATCH", path, {
      body: other,
      query: { fieldManager: "someone-else" },
      contentType: "application/apply-patch+yaml",
    });
    expect(conflict.status).toBe(409);
    expect((conflict.body as { message: string }).message).toContain('conflict with "plumb"');
    const forced = await transport()("PATCH", path, {
      body: other,
      query: { fieldManager: "someone-else", force: "true" },
      contentType: "application/apply-patch+yaml",
    });
    expect(forced.status).toBe(200);
  });
});

describe("controllers", () => {
  it("a Deployment becomes Available within 60 s (Pods Running and Ready)", async () => {
    await createNamespace("avail");
    await kubePort().apply(deployment("avail", "web"));
    const ready = await waitFor("2 available replicas", async () => {
      const d = await getObject("/apis/apps/v1/namespaces/avail/deployments/web");
      return (d?.["status"] as { availableReplicas?: number } | undefined)?.availableReplicas === 2
        ? d
        : undefined;
    });
    expect((ready["status"] as { readyReplicas: number }).readyReplicas).toBe(2);
    const pods = await api("GET", "/api/v1/namespaces/avail/pods?labelSelector=app%3Dweb");
    expect(pods.items.map((p: { status: { phase: string } }) => p.status.phase)).toEqual([
      "Running",
      "Running",
    ]);
  });

  it("deleting a Namespace completes", async () => {
    await createNamespace("doomed");
    await api("POST", "/api/v1/namespaces/doomed/configmaps", {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "c" },
    });
    await api("DELETE", "/api/v1/namespaces/doomed");
    await waitFor(
      "namespace gone",
      async () => (await getObject("/api/v1/namespaces/doomed")) === undefined,
    );
  });

  it("garbage-collects an object whose owner is deleted", async () => {
    await createNamespace("gc");
    const owner = await api("POST", "/api/v1/namespaces/gc/configmaps", {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "owner" },
    });
    await api("POST", "/api/v1/namespaces/gc/configmaps", {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: {
        name: "dependent",
        ownerReferences: [
          { apiVersion: "v1", kind: "ConfigMap", name: "owner", uid: owner.metadata.uid },
        ],
      },
    });
    await api("DELETE", "/api/v1/namespaces/gc/configmaps/owner");
    await waitFor(
      "dependent collected",
      async () => (await getObject("/api/v1/namespaces/gc/configmaps/dependent")) === undefined,
    );
  });
});
