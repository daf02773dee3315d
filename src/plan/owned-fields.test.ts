import { describe, expect, it } from "vitest";
import type { InventoryEntry } from "../app/index.ts";
import type { KubeObject, ManagedFieldsEntry } from "../core/index.ts";
import { refKey } from "../core/index.ts";
import { confirmOwned, lastApplied, ownedFieldsHash } from "./owned-fields.ts";

const plumb: ManagedFieldsEntry = {
  manager: "plumb",
  operation: "Apply",
  apiVersion: "apps/v1",
  fieldsV1: {
    "f:spec": {
      "f:template": {
        "f:spec": {
          "f:containers": {
            'k:{"name":"web"}': { ".": {}, "f:image": {}, "f:name": {}, "f:args": {} },
          },
        },
      },
    },
  },
};

const deployment = (
  over: { image?: string; args?: string[]; sidecar?: string; status?: number } = {},
  managedFields: ManagedFieldsEntry[] = [plumb],
): KubeObject => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "web", namespace: "a", resourceVersion: "5", managedFields },
  spec: {
    replicas: 3,
    template: {
      spec: {
        containers: [
          { name: "web", image: over.image ?? "web:3", args: over.args ?? ["--serve"] },
          ...(over.sidecar ? [{ name: "proxy", image: over.sidecar }] : []),
        ],
      },
    },
  },
  status: { readyReplicas: over.status ?? 3 },
});

describe("ownedFieldsHash", () => {
  it("is 16 hex characters, equal for equal owned values", async () => {
    const a = await ownedFieldsHash(deployment());
    expect(a).toMatch(/^[0-9a-f]{16}$/);
    expect(await ownedFieldsHash(deployment())).toBe(a);
  });

  it("changes when a value plumb owns changes: a list item's field, an atomic list", async () => {
    const base = await ownedFieldsHash(deployment());
    expect(await ownedFieldsHash(deployment({ image: "web:2" }))).not.toBe(base);
    expect(await ownedFieldsHash(deployment({ args: ["--serve", "--debug"] }))).not.toBe(base);
  });

  it("ignores status, fields of other managers and another manager's list items", async () => {
    const base = await ownedFieldsHash(deployment());
    expect(await ownedFieldsHash(deployment({ status: 1, sidecar: "envoy:1" }))).toBe(base);
    const scaled = deployment();
    (scaled["spec"] as { replicas: number }).replicas = 7;
    expect(await ownedFieldsHash(scaled)).toBe(base);
  });

  it("tells an owned field gone from one that is there", async () => {
    const live = deployment();
    const gone = structuredClone(live);
    const spec = gone["spec"] as { template: { spec: { containers: Array<{ args?: string[] }> } } };
    delete spec.template.spec.containers[0]!.args;
    expect(await ownedFieldsHash(gone)).not.toBe(await ownedFieldsHash(live));
  });

  it("is undefined without an Apply entry of plumb's (an Update or a subresource entry)", async () => {
    expect(await ownedFieldsHash(deployment({}, []))).toBeUndefined();
    expect(
      await ownedFieldsHash(deployment({}, [{ ...plumb, operation: "Update" }])),
    ).toBeUndefined();
    expect(
      await ownedFieldsHash(deployment({}, [{ ...plumb, subresource: "status" }])),
    ).toBeUndefined();
  });
});

describe("lastApplied and confirmOwned", () => {
  const ref = { apiVersion: "apps/v1", kind: "Deployment", namespace: "a" };
  const inventory: InventoryEntry[] = [
    { ...ref, name: "web", hash: "h1", owned: "0000000000000000" },
    { ...ref, name: "old", hash: "h2" },
    { ...ref, name: "other", hash: "h3", owned: "1111111111111111" },
  ];
  const key = (name: string) => refKey({ ...ref, name });

  it("recalls the owned hash of the objects in the form last applied only", () => {
    const got = lastApplied(inventory, new Set([key("web"), key("old")]));
    expect([...got]).toEqual([
      [key("web"), { owned: "0000000000000000" }],
      [key("old"), {}],
    ]);
  });

  it("records the live owned hash of the confirmed objects, leaving the rest", async () => {
    const live = new Map([
      [key("web"), deployment()],
      [key("other"), deployment({ image: "web:9" })],
    ]);
    const out = await confirmOwned(inventory, new Set([key("web")]), live);
    expect(out).toEqual([
      { ...inventory[0], owned: await ownedFieldsHash(deployment()) },
      inventory[1],
      inventory[2],
    ]);
  });
});
