import { describe, expect, it } from "vitest";
import type { ResourceStatus } from "../app/index.ts";
import { type KubeObject, refKey, refOf } from "../core/index.ts";
import { comparableYaml, diffReport, formatDiff, hasChanges } from "./diff-report.ts";

const NS = "team-a";
const SHA = "0123456789abcdef0123456789abcdef01234567";

function deployment(image: string, replicas: number): KubeObject {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: {
      name: "web",
      namespace: NS,
      uid: "u-1",
      resourceVersion: "42",
      generation: 3,
      managedFields: [{ manager: "plumb", operation: "Apply" }],
    } as KubeObject["metadata"],
    spec: { replicas, template: { spec: { containers: [{ name: "web", image }] } } },
    status: { replicas: 1 },
  };
}
const secret = (data: Record<string, string>): KubeObject => ({
  apiVersion: "v1",
  kind: "Secret",
  metadata: { name: "db", namespace: NS },
  data,
});
const configMap: KubeObject = {
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name: "settings", namespace: NS },
  data: { mode: "fast" },
};
const line = (o: KubeObject, message: string, extra: Partial<ResourceStatus> = {}) =>
  ({
    apiVersion: o.apiVersion,
    kind: o.kind,
    namespace: NS,
    name: o.metadata.name,
    status: "OutOfSync",
    message,
    ...extra,
  }) as ResourceStatus;
const key = (o: KubeObject) => refKey(refOf(o));

describe("diffReport", () => {
  const live = deployment("web:v5", 1);
  const want = deployment("web:v6", 2);
  const oldSecret = secret({ password: btoa("old-password"), user: btoa("app") });
  const newSecret = secret({ password: btoa("new-password"), user: btoa("app") });
  const pruned = { ...configMap, metadata: { name: "old", namespace: NS } };
  const resources: ResourceStatus[] = [
    line(configMap, "will be created"),
    line(want, "will change: spec.replicas, spec.template.spec.containers[name=web].image", {
      changes: [
        { path: "spec.replicas", desired: "2", live: "1" },
        {
          path: "spec.template.spec.containers[name=web].image",
          desired: "web:v6",
          live: "web:v5",
        },
      ],
    }),
    line(pruned, "will be pruned"),
    line(newSecret, "will change: data.password", { changes: [{ path: "data.password" }] }),
    { ...line(configMap, ""), name: "same", status: "Synced" },
  ];
  const report = diffReport({
    app: `${NS}/web`,
    revision: SHA,
    resources,
    desired: new Map([
      [key(configMap), configMap],
      [key(want), want],
      [key(newSecret), newSecret],
    ]),
    live: new Map([
      [key(live), live],
      [key(pruned), pruned],
      [key(oldSecret), oldSecret],
    ]),
    dryRuns: new Map([
      [key(want), want],
      [key(newSecret), newSecret],
    ]),
  });

  it("lists what applying creates, changes (fields with values) and prunes, in status order", () => {
    expect(report.counts).toEqual({ create: 1, change: 2, prune: 1, fail: 0 });
    expect(report.objects.map((o) => [o.action, o.kind, o.name])).toEqual([
      ["create", "ConfigMap", "settings"],
      ["change", "Deployment", "web"],
      ["prune", "ConfigMap", "old"],
      ["change", "Secret", "db"],
    ]);
    expect(report.objects[1]?.fields).toEqual(resources[1]?.changes);
    expect(hasChanges(report)).toBe(true);
  });

  it("diffs each object live to desired, without status or server-set metadata", () => {
    expect(report.objects[1]?.diff).toBe(
      [
        `--- a/apps/v1/Deployment/${NS}/web`,
        `+++ b/apps/v1/Deployment/${NS}/web`,
        "@@ -4,9 +4,9 @@",
        "   name: web",
        `   namespace: ${NS}`,
        " spec:",
        "-  replicas: 1",
        "+  replicas: 2",
        "   template:",
        "     spec:",
        "       containers:",
        "-        - image: web:v5",
        "+        - image: web:v6",
        "           name: web",
        "",
      ].join("\n"),
    );
    expect(report.objects[0]?.diff).toBe(
      [
        "--- /dev/null",
        `+++ b/v1/ConfigMap/${NS}/settings`,
        "@@ -0,0 +1,7 @@",
        "+apiVersion: v1",
        "+kind: ConfigMap",
        "+metadata:",
        "+  name: settings",
        `+  namespace: ${NS}`,
        "+data:",
        "+  mode: fast",
        "",
      ].join("\n"),
    );
    expect(report.objects[2]?.diff).toMatch(
      /^--- a\/v1\/ConfigMap\/team-a\/old\n\+\+\+ \/dev\/null\n@@ -1,7 \+0,0 @@\n/,
    );
  });

  it("masks a Secret's values: a changed key shows two masks, an unchanged one the same", () => {
    const diff = report.objects[3]?.diff ?? "";
    expect(diff).toContain("-  password: ++++++++\n+  password: ++++++++++++\n   user: ++++++++\n");
    for (const value of [
      "old-password",
      "new-password",
      btoa("old-password"),
      btoa("new-password"),
      btoa("app"),
    ]) {
      expect(diff).not.toContain(value);
    }
  });

  it("formats the report as text: a summary line, then each object's diff", () => {
    const { text, omitted } = formatDiff(report);
    expect(omitted).toBe(0);
    expect(text.split("\n")[0]).toBe(`${NS}/web at 0123456: 1 to create, 2 to change, 1 to prune`);
    expect(text).toBe(
      `${NS}/web at 0123456: 1 to create, 2 to change, 1 to prune\n${report.objects.map((o) => o.diff).join("")}`,
    );
  });

  it("caps the text at whole objects and counts what it leaves out", () => {
    const head = `${NS}/web at 0123456: 1 to create, 2 to change, 1 to prune\n`;
    const two = head + report.objects[0]!.diff + report.objects[1]!.diff;
    const { text, omitted } = formatDiff(report, { maxChars: two.length + 80 });
    expect(omitted).toBe(2);
    expect(text).toBe(`${two}… 2 more objects left out (plumb diff shows them all)\n`);
    expect(text.length).toBeLessThanOrEqual(two.length + 80);
    const none = formatDiff(report, { maxChars: 10 });
    expect(none).toEqual({
      text: `${head}… 4 more objects left out (plumb diff shows them all)\n`,
      omitted: 4,
    });
  });

  it("says so when nothing would change, and names a local directory as it is", () => {
    const empty = diffReport({
      app: `${NS}/web`,
      revision: "local:/src/app",
      resources: [{ ...line(configMap, ""), status: "Synced" }],
      desired: new Map(),
      live: new Map(),
      dryRuns: new Map(),
    });
    expect(hasChanges(empty)).toBe(false);
    expect(formatDiff(empty)).toEqual({
      text: `${NS}/web at local:/src/app: no changes\n`,
      omitted: 0,
    });
  });

  it("lists an object the API server refused in the dry run with its message", () => {
    const failing = diffReport({
      app: `${NS}/web`,
      revision: SHA,
      resources: [
        line(
          want,
          'will fail: Deployment.apps "web" is invalid: spec.selector: field is immutable',
        ),
      ],
      desired: new Map(),
      live: new Map(),
      dryRuns: new Map(),
    });
    expect(failing.counts.fail).toBe(1);
    expect(formatDiff(failing).text).toBe(
      `${NS}/web at 0123456: 0 to create, 0 to change, 0 to prune, 1 refused by the API server\n! Deployment ${NS}/web: Deployment.apps "web" is invalid: spec.selector: field is immutable\n`,
    );
  });
});

describe("comparableYaml", () => {
  it("puts apiVersion, kind and metadata first and sorts every map's keys", () => {
    expect(
      comparableYaml({
        spec: { b: 1, a: { d: 2, c: 3 } },
        kind: "X",
        metadata: { uid: "u", name: "n", labels: { z: "1", a: "2" } },
        apiVersion: "v1",
        data: { long: "x".repeat(120) },
      }),
    ).toBe(
      `apiVersion: v1\nkind: X\nmetadata:\n  name: n\n  labels:\n    a: "2"\n    z: "1"\ndata:\n  long: ${"x".repeat(120)}\nspec:\n  a:\n    c: 3\n    d: 2\n  b: 1\n`,
    );
  });
});
