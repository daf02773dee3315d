import { describe, expect, it } from "vitest";
import type { App } from "../app/index.ts";
import {
  dependantsOf,
  dependencyNotReady,
  dependencyRefs,
  describeCycle,
  findCycle,
  isReadyDependency,
} from "./depends.ts";

const app = (
  name: string,
  spec: Record<string, unknown> = {},
  ready?: "True" | "False",
  generations: [number, number] = [1, 1],
): App => ({
  apiVersion: "plumb.dev/v1alpha1",
  kind: "App",
  metadata: { name, namespace: "team", generation: generations[0] },
  spec,
  ...(ready
    ? {
        status: {
          observedGeneration: generations[1],
          conditions: [
            {
              type: "Ready",
              status: ready,
              reason: "r",
              message: "",
              lastTransitionTime: "2026-01-01T00:00:00Z",
            },
          ],
        },
      }
    : {}),
});

describe("dependencyRefs", () => {
  it("fills in the App's namespace and skips what is not a dependency", () => {
    expect(
      dependencyRefs(
        { dependsOn: [{ name: "a" }, { name: "b", namespace: "infra", readyExpr: "true" }, 3, {}] },
        "team",
      ),
    ).toEqual([
      { namespace: "team", name: "a" },
      { namespace: "infra", name: "b", readyExpr: "true" },
    ]);
    expect(dependencyRefs(undefined, "team")).toEqual([]);
  });
});

describe("isReadyDependency (Flux's rule)", () => {
  it("needs Ready=True for the App's current generation", () => {
    expect(isReadyDependency(app("a", {}, "True"))).toBe(true);
    expect(isReadyDependency(app("a", {}, "False"))).toBe(false);
    expect(isReadyDependency(app("a"))).toBe(false);
    expect(isReadyDependency(app("a", {}, "True", [2, 1]))).toBe(false);
  });
});

describe("dependencyNotReady", () => {
  const ref = { namespace: "team", name: "a" };
  it("names the first dependency that is not ready, and why", () => {
    expect(dependencyNotReady([{ ref, app: undefined }])).toBe("dependency 'team/a' not found");
    expect(dependencyNotReady([{ ref, app: app("a", {}, "False") }])).toBe(
      "dependency 'team/a' is not ready",
    );
    expect(dependencyNotReady([{ ref, app: app("a", {}, "True"), expr: false }])).toBe(
      "dependency 'team/a' is not ready according to readyExpr",
    );
    expect(dependencyNotReady([{ ref, app: app("a", {}, "True"), expr: "No such key: x" }])).toBe(
      "dependency 'team/a': readyExpr failed: No such key: x",
    );
    // The readyExpr comes in addition to Ready.
    expect(dependencyNotReady([{ ref, app: app("a", {}, "False"), expr: true }])).toBe(
      "dependency 'team/a' is not ready",
    );
  });

  it("is undefined when every dependency is ready", () => {
    const b = { namespace: "team", name: "b" };
    expect(
      dependencyNotReady([
        { ref, app: app("a", {}, "True") },
        { ref: b, app: app("b", {}, "True"), expr: true },
      ]),
    ).toBeUndefined();
  });
});

describe("findCycle", () => {
  const n = (name: string) => ({ namespace: "team", name });
  it("finds a chain back to the start, through Apps read", () => {
    const graph = new Map([
      ["team/x", [n("y"), n("z")]],
      ["team/y", [n("w")]],
      ["team/z", [n("y"), n("x")]],
    ]);
    const cycle = findCycle(n("x"), graph);
    expect(cycle && describeCycle(cycle)).toBe("team/x → team/z → team/x");
  });

  it("ignores a cycle the start is not on, and dead ends", () => {
    const graph = new Map([
      ["team/x", [n("y")]],
      ["team/y", [n("z")]],
      ["team/z", [n("y"), n("gone")]],
    ]);
    expect(findCycle(n("x"), graph)).toBeUndefined();
  });
});

describe("dependantsOf", () => {
  it("lists the Apps whose dependsOn names the target, namespaces filled in", () => {
    const apps = [
      app("b", { dependsOn: [{ name: "a" }] }),
      app("c", { dependsOn: [{ name: "a", namespace: "other" }] }),
      app("d", { dependsOn: [{ name: "x" }, { name: "a", namespace: "team" }] }),
      app("e"),
    ];
    expect(dependantsOf(apps, { namespace: "team", name: "a" })).toEqual([
      { namespace: "team", name: "b" },
      { namespace: "team", name: "d" },
    ]);
  });
});
