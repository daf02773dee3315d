import { describe, expect, it } from "vitest";
import { createFakeKube, type FakeKube, testApp } from "../../test/support/fake-kube.ts";
import type { AppStatus } from "../app/index.ts";
import { runContext } from "./context.ts";
import { checkDependencies, readyDependants } from "./depends.ts";
import type { Ports } from "./index.ts";
import { claimedByOthers, createInventoryIndex } from "./ownership.ts";

const now = new Date("2026-12-01T00:00:00Z");
const ready: AppStatus = {
  observedGeneration: 1,
  conditions: [
    { type: "Ready", status: "True", reason: "r", message: "", lastTransitionTime: "t" },
  ],
};

function setup(apps: Parameters<typeof testApp>[]): { kube: FakeKube; ports: Ports } {
  const kube = createFakeKube();
  for (const args of apps) {
    const app = testApp(...args);
    kube.apps.set(`${app.metadata.namespace}/${app.metadata.name}`, app);
  }
  const git = { lsRefs: async () => [], fetchTree: async () => [] } as unknown as Ports["git"];
  return { kube, ports: { kube, git, holder: "test" } };
}

const check = async (ports: Ports, kube: FakeKube, name: string) =>
  checkDependencies(runContext(kube.apps.get(`team/${name}`)!, ports, now));

describe("checkDependencies", () => {
  it("finds a cycle by reading the dependencies' specs, across namespaces", async () => {
    const { kube, ports } = setup([
      ["team", "web", { spec: { dependsOn: [{ name: "db" }] } }],
      ["team", "db", { spec: { dependsOn: [{ name: "net", namespace: "infra" }] } }],
      ["infra", "net", { spec: { dependsOn: [{ name: "web", namespace: "team" }] } }],
    ]);
    expect(await check(ports, kube, "web")).toEqual({
      reason: "InvalidSpec",
      message: "spec.dependsOn: a dependency cycle: team/web → team/db → infra/net → team/web",
      stalled: true,
    });
  });

  it("evaluates readyExpr with dep (the dependency) and self (this App), as Flux", async () => {
    const { kube, ports } = setup([
      [
        "team",
        "web",
        {
          spec: {
            interval: "1m",
            dependsOn: [{ name: "db", readyExpr: "dep.spec.interval == self.spec.interval" }],
          },
        },
      ],
      ["team", "db", { spec: { interval: "1m" }, status: ready }],
    ]);
    expect(await check(ports, kube, "web")).toBeUndefined();
    kube.apps.get("team/db")!.spec = { interval: "5m" };
    expect(await check(ports, kube, "web")).toEqual({
      reason: "DependencyNotReady",
      message: "dependency 'team/db' is not ready according to readyExpr",
      stalled: false,
    });
  });

  it("refuses a readyExpr that does not parse, naming where", async () => {
    const { kube, ports } = setup([
      ["team", "web", { spec: { dependsOn: [{ name: "db", readyExpr: "dep.(" }] } }],
      ["team", "db", { status: ready }],
    ]);
    expect(await check(ports, kube, "web")).toEqual({
      reason: "InvalidSpec",
      message: `spec.dependsOn[0].readyExpr: "dep.(": Expected IDENTIFIER, got LPAREN at position 4`,
      stalled: true,
    });
  });
});

describe("readyDependants", () => {
  it("lists the dependants only on the run that makes the App Ready", async () => {
    const { kube, ports } = setup([
      ["team", "db", {}],
      ["team", "web", { spec: { dependsOn: [{ name: "db" }] } }],
      ["other", "api", { spec: { dependsOn: [{ name: "db", namespace: "team" }] } }],
      ["team", "cache", {}],
    ]);
    const ctx = runContext(kube.apps.get("team/db")!, ports, now);
    expect(await readyDependants(ctx, {}, ready)).toEqual([
      { namespace: "team", name: "web" },
      { namespace: "other", name: "api" },
    ]);
    expect(await readyDependants(ctx, ready, ready)).toEqual([]);
    expect(await readyDependants(ctx, {}, {})).toEqual([]);
  });

  it("reads the list of Apps the run's ownership check made, not a second one", async () => {
    const { kube, ports } = setup([
      ["team", "db", {}],
      ["team", "web", { spec: { dependsOn: [{ name: "db" }] } }],
    ]);
    const ctx = runContext(kube.apps.get("team/db")!, ports, now);
    await claimedByOthers(ctx);
    expect(await readyDependants(ctx, {}, ready)).toEqual([{ namespace: "team", name: "web" }]);
    expect(kube.calls.listApps).toEqual([undefined]);
    // Another run (a fresh context) lists them anew.
    const next = runContext(kube.apps.get("team/db")!, ports, now);
    await readyDependants(next, {}, ready);
    expect(kube.calls.listApps).toEqual([undefined, undefined]);
  });

  it("in a tick, reads the one list its runs share, for every run", async () => {
    const { kube, ports } = setup([
      ["team", "db", {}],
      ["team", "web", { spec: { dependsOn: [{ name: "db" }] } }],
      ["team", "cache", {}],
      ["team", "api", { spec: { dependsOn: [{ name: "cache" }] } }],
    ]);
    const tick = { ...ports, inventories: createInventoryIndex() };
    const db = runContext(kube.apps.get("team/db")!, tick, now);
    await claimedByOthers(db);
    expect(await readyDependants(db, {}, ready)).toEqual([{ namespace: "team", name: "web" }]);
    const cache = runContext(kube.apps.get("team/cache")!, tick, now);
    expect(await readyDependants(cache, {}, ready)).toEqual([{ namespace: "team", name: "api" }]);
    // One list for the ownership checks and the wakes of both runs.
    expect(kube.calls.listApps).toEqual([undefined]);
  });
});
