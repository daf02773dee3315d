import { describe, expect, it } from "vitest";
import { addApp, createFakeKube } from "../../test/support/fake-kube.ts";
import type { GitSource } from "../app/index.ts";
import type { KubeObject } from "../core/index.ts";
import { diffApp, ReadOnlyError, readOnlyCluster } from "./diff.ts";
import type { ClusterPort, Ports } from "./ports.ts";

const CM: KubeObject = {
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name: "a", namespace: "n" },
};

/** A cluster port that records every call it gets. */
function recording() {
  const calls: Array<[string, unknown]> = [];
  const port = {
    resourceFor: async () => ({ resource: "configmaps", namespaced: true }),
    apply: async (obj: KubeObject, options?: unknown) => {
      calls.push(["apply", options]);
      return obj;
    },
    get: async () => {
      calls.push(["get", undefined]);
      return CM;
    },
    list: async () => [],
    delete: async () => {
      calls.push(["delete", undefined]);
      return "deleted" as const;
    },
    patchManagedFields: async () => {
      calls.push(["patchManagedFields", undefined]);
      return CM;
    },
    listNamespaceContents: async () => [],
    setFinalizers: async () => calls.push(["setFinalizers", undefined]),
    writeStatus: async () => calls.push(["writeStatus", undefined]),
    emitEvent: async () => calls.push(["emitEvent", undefined]),
    acquireLease: async () => calls.push(["acquireLease", undefined]),
  };
  return { port: port as unknown as ClusterPort, calls };
}

describe("readOnlyCluster", () => {
  it("makes every apply a dry run and passes reads through", async () => {
    const { port, calls } = recording();
    const ro = readOnlyCluster(port);
    await ro.apply(CM);
    await ro.apply(CM, { fieldManager: "plumb", dryRun: false });
    expect(await ro.get({ apiVersion: "v1", kind: "ConfigMap", name: "a" })).toBe(CM);
    expect(calls).toEqual([
      ["apply", { dryRun: true }],
      ["apply", { fieldManager: "plumb", dryRun: true }],
      ["get", undefined],
    ]);
  });

  it("refuses every write without sending it", async () => {
    const { port, calls } = recording();
    const ro = readOnlyCluster(port) as unknown as Record<string, () => Promise<unknown>>;
    for (const name of [
      "delete",
      "patchManagedFields",
      "setFinalizers",
      "writeStatus",
      "emitEvent",
      "acquireLease",
    ]) {
      await expect(ro[name]!()).rejects.toThrow(ReadOnlyError);
      await expect(ro[name]!()).rejects.toThrow(
        `plumb diff writes nothing to the cluster: ${name} refused`,
      );
    }
    expect(calls).toEqual([]);
  });
});

describe("diffApp", () => {
  const A = "a".repeat(40);
  const B = "b".repeat(40);
  const NOW = new Date("2026-12-01T10:00:00Z");
  const REF = { namespace: "team-a", name: "web" };
  const cm = (value: string) => [
    {
      path: "cm.yaml",
      content: `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\ndata: {key: "${value}"}\n`,
    },
  ];

  function setup(source: Record<string, unknown>) {
    const kube = createFakeKube();
    const resolved: string[] = [];
    const ports: Ports = {
      kube,
      git: {
        resolve: async (s: GitSource) => {
          resolved.push(s.ref);
          return s.ref === "feature" ? B : A;
        },
        fetch: async (_s, sha) => cm(sha === B ? "two" : "one"),
      },
      holder: "test",
      sleep: async () => {},
    };
    addApp(kube, "team-a", "web", { source });
    return { kube, ports, resolved };
  }

  it("reports what applying would create, and writes nothing (not even the finalizer)", async () => {
    const { kube, ports } = setup({ git: { url: "https://git.example/org/repo.git" } });
    const before = structuredClone(kube.app("team-a", "web"));
    const outcome = await diffApp(REF, ports, NOW);
    if (!outcome.ok) throw new Error(outcome.error);
    expect(outcome.report).toMatchObject({
      app: "team-a/web",
      revision: A,
      counts: { create: 1, change: 0, prune: 0, fail: 0 },
      objects: [{ action: "create", kind: "ConfigMap", namespace: "team-a", name: "cfg" }],
    });
    const { create, update, patch, delete: deletes } = kube.requestCounts();
    expect({ create, update, patch, delete: deletes }).toEqual({
      create: 0,
      update: 0,
      patch: 0,
      delete: 0,
    });
    expect(kube.app("team-a", "web")).toEqual(before);
  });

  it("--revision renders another Git ref in place of the spec's", async () => {
    const { ports, resolved } = setup({ git: { url: "https://git.example/org/repo.git" } });
    const outcome = await diffApp(REF, ports, NOW, { ref: "feature" });
    expect(resolved).toEqual(["feature"]);
    expect(outcome).toMatchObject({ ok: true, report: { revision: B } });
  });

  it("refuses --revision and --path for a source that is not Git, and names a missing App", async () => {
    const { ports } = setup({ image: { repository: "registry.example.com/org/web" } });
    expect(await diffApp(REF, ports, NOW, { ref: "main" })).toEqual({
      ok: false,
      notFound: false,
      reason: "InvalidArgument",
      error: "--revision names a Git ref; this App's source is not Git",
    });
    expect(await diffApp(REF, ports, NOW, { local: true })).toEqual({
      ok: false,
      notFound: false,
      reason: "InvalidArgument",
      error:
        "--path renders a local directory in place of a Git source's path; this App's source is not Git",
    });
    expect(await diffApp({ namespace: "team-a", name: "nosuch" }, ports, NOW)).toEqual({
      ok: false,
      notFound: true,
      reason: "NotFound",
      error: "App team-a/nosuch not found",
    });
  });
});
