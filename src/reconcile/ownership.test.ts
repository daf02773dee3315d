import { describe, expect, it } from "vitest";
import { FakeKube } from "../../test/support/fake-kube.ts";
import type { App } from "../app/index.ts";
import { runContext } from "./context.ts";
import { claimedByOthers, createInventoryIndex } from "./ownership.ts";
import type { Ports } from "./ports.ts";

const cm = (name: string) => ({ apiVersion: "v1", kind: "ConfigMap", namespace: "ns", name });
function app(name: string, uid: string, inventory: ReturnType<typeof cm>[]): App {
  return {
    apiVersion: "plumb.dev/v1alpha1",
    kind: "App",
    metadata: { namespace: "ns", name, uid, generation: 1 },
    spec: {},
    status: { inventory },
  };
}

describe("claimedByOthers", () => {
  const a = app("a", "u-a", [cm("x"), cm("shared")]);
  const b = app("b", "u-b", [cm("y"), cm("shared")]);
  const c = app("c", "u-c", []);

  it("names the other Apps listing each object, never the App itself", async () => {
    const kube = new FakeKube([a, b, c]);
    const ports: Ports = { kube, git: {} as never, holder: "t" };
    const owners = await claimedByOthers(runContext(a, ports, new Date()));
    expect(owners).toEqual(
      new Map([
        ["/ConfigMap/ns/y", ["ns/b"]],
        ["/ConfigMap/ns/shared", ["ns/b"]],
      ]),
    );
  });

  it("with a tick's index, lists the Apps once for all runs and sees what runs record", async () => {
    const kube = new FakeKube([a, b, c]);
    const inventories = createInventoryIndex();
    const ports: Ports = { kube, git: {} as never, holder: "t", inventories };
    // c's sync records that it now owns z; a run of a in the same tick sees it.
    inventories.record(c, [cm("z")]);
    const forA = await claimedByOthers(runContext(a, ports, new Date()));
    expect(forA.get("/ConfigMap/ns/z")).toEqual(["ns/c"]);
    // b's sync drops "shared" from its inventory: it is nobody else's for a any more.
    inventories.record(b, [cm("y")]);
    const again = await claimedByOthers(runContext(a, ports, new Date()));
    expect(again.get("/ConfigMap/ns/shared")).toBeUndefined();
    expect(again.get("/ConfigMap/ns/y")).toEqual(["ns/b"]);
    const forC = await claimedByOthers(runContext(c, ports, new Date()));
    expect(forC.get("/ConfigMap/ns/z")).toBeUndefined();
    expect(forC.get("/ConfigMap/ns/x")).toEqual(["ns/a"]);
    expect(kube.calls.listApps).toEqual([undefined]);
  });

  it("with a tick's index, claims on another cluster do not contend", async () => {
    const remote = "https://b.example:6443";
    const d = app("d", "u-d", [{ ...cm("x"), cluster: remote } as ReturnType<typeof cm>]);
    const kube = new FakeKube([a, d]);
    const inventories = createInventoryIndex();
    const ports: Ports = { kube, git: {} as never, holder: "t", inventories };
    // a, on the home cluster, owns x there; d owns an x on cluster B only.
    const forD = await claimedByOthers(runContext(d, ports, new Date()), remote);
    expect(forD.get("/ConfigMap/ns/x")).toBeUndefined();
    const forDHome = await claimedByOthers(runContext(d, ports, new Date()), undefined);
    expect(forDHome.get("/ConfigMap/ns/x")).toEqual(["ns/a"]);
    // a's sync moves x to cluster B: now it contends with d there, and no longer at home.
    inventories.record(a, [{ ...cm("x"), cluster: remote }]);
    expect(
      (await claimedByOthers(runContext(d, ports, new Date()), remote)).get("/ConfigMap/ns/x"),
    ).toEqual(["ns/a"]);
    expect(
      (await claimedByOthers(runContext(d, ports, new Date()), undefined)).get("/ConfigMap/ns/x"),
    ).toBeUndefined();
  });

  it("with keys, looks up only those refKeys, with the same owners as the whole map", async () => {
    const kube = new FakeKube([a, b, c]);
    const inventories = createInventoryIndex();
    const ports: Ports = { kube, git: {} as never, holder: "t", inventories };
    const ctx = runContext(a, ports, new Date());
    const owners = await claimedByOthers(ctx, undefined, [
      "/ConfigMap/ns/shared",
      "/ConfigMap/ns/x", // a's own: no other owner
      "/ConfigMap/ns/none", // nobody's
      "/ConfigMap/ns/shared", // twice
    ]);
    expect(owners).toEqual(new Map([["/ConfigMap/ns/shared", ["ns/b"]]]));
    // Without the index (one list per run), the same.
    const alone = await claimedByOthers(
      runContext(a, { kube, git: {} as never, holder: "t" }, new Date()),
      undefined,
      ["/ConfigMap/ns/y", "/ConfigMap/ns/x"],
    );
    expect(alone).toEqual(new Map([["/ConfigMap/ns/y", ["ns/b"]]]));
  });

  it("with a tick's index, each record replaces all of the App's earlier claims", async () => {
    const kube = new FakeKube([a, b, c]);
    const inventories = createInventoryIndex();
    const ports: Ports = { kube, git: {} as never, holder: "t", inventories };
    const forC = () => claimedByOthers(runContext(c, ports, new Date()));
    // Recorded before the list (pending), then again after it: only the last one counts.
    inventories.record(b, [cm("p")]);
    expect(await forC()).toEqual(
      new Map([
        ["/ConfigMap/ns/x", ["ns/a"]],
        ["/ConfigMap/ns/shared", ["ns/a"]],
        ["/ConfigMap/ns/p", ["ns/b"]],
      ]),
    );
    inventories.record(b, [cm("q"), cm("shared")]);
    await Promise.resolve();
    expect(await forC()).toEqual(
      new Map([
        ["/ConfigMap/ns/x", ["ns/a"]],
        ["/ConfigMap/ns/shared", ["ns/a", "ns/b"]],
        ["/ConfigMap/ns/q", ["ns/b"]],
      ]),
    );
    // An empty inventory: b claims nothing any more; a's claim on "shared" stays.
    inventories.record(b, []);
    await Promise.resolve();
    expect(await forC()).toEqual(
      new Map([
        ["/ConfigMap/ns/x", ["ns/a"]],
        ["/ConfigMap/ns/shared", ["ns/a"]],
      ]),
    );
  });
});
