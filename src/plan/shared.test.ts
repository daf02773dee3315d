import { describe, expect, it } from "vitest";
import type { KubeObject } from "../core/index.ts";
import { sharedNamespaceForm } from "./shared.ts";

const labelled = (app: string, extra: Record<string, string> = {}): KubeObject => ({
  apiVersion: "v1",
  kind: "Namespace",
  metadata: {
    name: "team-a",
    labels: {
      "app.kubernetes.io/managed-by": "plumb",
      "plumb.dev/app": app,
      "plumb.dev/app-namespace": "team-a",
      ...extra,
    },
  },
});
// demo-b renders the Namespace; demo-a applied it first.
const mine = labelled("demo-b", { team: "a" });

describe("sharedNamespaceForm", () => {
  it("keeps the labels of the App that labels it while that App still renders it", () => {
    expect(sharedNamespaceForm(mine, labelled("demo-a"), ["team-a/demo-a"])).toEqual(
      labelled("demo-a", { team: "a" }),
    );
  });

  it.each<[string, KubeObject | undefined, string[]]>([
    ["no other App renders it", labelled("demo-a"), []],
    ["not live yet", undefined, ["team-a/demo-a"]],
    ["its labeller no longer renders it (deleted)", labelled("demo-a"), ["team-a/demo-c"]],
    [
      "live without tracking labels",
      { ...labelled("x"), metadata: { name: "team-a" } },
      ["team-a/demo-a"],
    ],
  ])("own labels: %s", (_name, live, claimants) => {
    expect(sharedNamespaceForm(mine, live, claimants)).toBe(mine);
  });

  it("leaves other kinds alone", () => {
    const cm: KubeObject = { ...mine, kind: "ConfigMap" };
    expect(sharedNamespaceForm(cm, labelled("demo-a"), ["team-a/demo-a"])).toBe(cm);
  });
});
