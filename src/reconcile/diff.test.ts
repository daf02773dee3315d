import { describe, expect, it } from "vitest";
import type { KubeObject } from "../core/index.ts";
import { ReadOnlyError, readOnlyCluster } from "./diff.ts";
import type { ClusterPort } from "./ports.ts";

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
