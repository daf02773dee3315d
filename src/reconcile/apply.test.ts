import { describe, expect, it } from "vitest";
import { createFakeKube } from "../../test/support/fake-kube.ts";
import { type KubeObject, refKey, refOf } from "../core/index.ts";
import { applyStaged } from "./apply.ts";

const crd: KubeObject = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: "widgets.example.com" },
  spec: {
    group: "example.com",
    names: { kind: "Widget", plural: "widgets" },
    scope: "Namespaced",
    versions: [{ name: "v1", served: true, storage: true }],
  },
};
const widget: KubeObject = {
  apiVersion: "example.com/v1",
  kind: "Widget",
  metadata: { name: "mine", namespace: "team-a" },
};

describe("applyStaged: custom resources after their CRD", () => {
  it("waits until discovery serves the CRD's kind, not only until it is Established", async () => {
    const kube = createFakeKube();
    // The API server says Established at once; its discovery document lags two polls behind.
    const apply = kube.apply.bind(kube);
    kube.apply = async (obj, opts) => {
      const stored = await apply(obj, opts);
      if (obj.kind !== "CustomResourceDefinition") return stored;
      const established = {
        ...stored,
        status: { conditions: [{ type: "Established", status: "True" }] },
      };
      kube.objects.set(refKey(refOf(crd)), established);
      return established;
    };
    kube.unknownKinds.add("Widget");
    const sleeps: number[] = [];
    const sleep = async (ms: number) => {
      sleeps.push(ms);
      if (sleeps.length === 2) kube.unknownKinds.delete("Widget");
    };
    const out = await applyStaged([crd, widget], kube, sleep);
    expect([...out.failed.entries()]).toEqual([]);
    expect([...out.applied.keys()].map((k) => k.split("/").at(-1))).toEqual([
      "widgets.example.com",
      "mine",
    ]);
    expect(sleeps).toEqual([500, 500]);
  });
});
