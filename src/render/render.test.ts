import { describe, expect, it } from "vitest";
import { hashObjects } from "../core/index.ts";
import { parseManifests } from "./manifests.ts";
import { MAX_OBJECTS, renderObjects } from "./render.ts";

const ctx = {
  appNamespace: "team-a",
  appName: "web",
  destinationNamespace: "team-a",
  allowedNamespaces: [],
  scopes: new Map([
    ["v1/Namespace", false],
    ["v1/ConfigMap", true],
    ["rbac.authorization.k8s.io/v1/ClusterRole", false],
  ]),
};

describe("parseManifests", () => {
  it("reads multi-document YAML with `---  `, empty and comment-only documents, anchors and merge keys", () => {
    const content = [
      "# leading comment",
      "---   ",
      "apiVersion: v1",
      "kind: ConfigMap",
      "metadata: {name: a}",
      "data: {x: '1'}",
      "---",
      "# only a comment",
      "---",
      "",
      "---",
      "apiVersion: v1",
      "kind: ConfigMap",
      "metadata: {name: b}",
      "base: &d {x: '1'}",
      "data:",
      "  <<: *d",
      "  z: '2'",
      "  y: '3'",
    ].join("\n");
    const r = parseManifests([{ path: "cm.yaml", content }]);
    expect(r.ok && r.value.map((o) => [o.origin, o.object["data"]])).toEqual([
      ["cm.yaml:3", { x: "1" }],
      // `y` is YAML 1.1's true, as for kubectl
      ["cm.yaml:12", { x: "1", z: "2", true: "3" }],
    ]);
  });

  it("reports a merge of a non-map as an issue, not a crash", () => {
    const r = parseManifests([
      {
        path: "m.yaml",
        content:
          "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\nx: &s text\ndata:\n  <<: *s\n",
      },
    ]);
    expect(r.ok ? [] : r.error).toEqual([
      {
        code: "InvalidManifest",
        path: "m.yaml:6",
        message: "map merge requires map or sequence of maps as the value",
      },
    ]);
  });

  it("fails the whole set with file and line when any document is broken", () => {
    const r = parseManifests([
      { path: "good.yaml", content: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n" },
      {
        path: "bad.yaml",
        content: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n   bad: indent\n",
      },
      { path: "noname.json", content: '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}}' },
    ]);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.map((i) => i.path)).toEqual(["bad.yaml:4", "noname.json:1"]);
    // No dangling colon: the line is in the path, the column in parentheses.
    expect(r.error[0]?.message).toBe(
      "Nested mappings are not allowed in compact mappings (column 9)",
    );
    expect(r.error[1]?.message).toBe(
      "ConfigMap: metadata.name is missing (generateName is not supported)",
    );
  });
});

describe("YAML error messages", () => {
  it.each([
    [
      "kind: [\n",
      "Flow sequence in block collection must be sufficiently indented and end with a ] (column 1)",
    ],
    ["a: b\n c: d\n", "Nested mappings are not allowed in compact mappings (column 4)"],
    ["a: 'open\n", "Missing closing 'quote (column 1)"],
  ])("%j reads as a sentence without a dangling colon", (content, message) => {
    const r = parseManifests([{ path: "x.yaml", content }]);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error[0]?.message).toBe(message);
    expect(r.error.every((i) => !i.message.trimEnd().endsWith(":"))).toBe(true);
  });
});

describe("renderObjects", () => {
  const parsed = (yaml: string) => {
    const r = parseManifests([{ path: "m.yaml", content: yaml }]);
    if (!r.ok) throw new Error(JSON.stringify(r.error));
    return r.value;
  };

  it("defaults the namespace, stamps tracking labels and orders Namespaces first", () => {
    const r = renderObjects(
      parsed(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, labels: {a: b}}\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: team-a}\n",
      ),
      ctx,
    );
    expect(r.ok && r.value.map((o) => [o.kind, o.metadata.namespace, o.metadata.labels])).toEqual([
      [
        "Namespace",
        undefined,
        {
          "app.kubernetes.io/managed-by": "plumb",
          "plumb.dev/app": "web",
          "plumb.dev/app-namespace": "team-a",
        },
      ],
      [
        "ConfigMap",
        "team-a",
        {
          a: "b",
          "app.kubernetes.io/managed-by": "plumb",
          "plumb.dev/app": "web",
          "plumb.dev/app-namespace": "team-a",
        },
      ],
    ]);
  });

  it("refuses objects aimed at other namespaces, foreign Namespaces, duplicates and disallowed destinations", () => {
    const r = renderObjects(
      parsed(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: kube-system}\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: other}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: d}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: d}\n",
      ),
      ctx,
    );
    expect(r.ok ? [] : r.error).toEqual([
      {
        code: "Refused",
        path: "m.yaml:1",
        message:
          'ConfigMap c: namespace "kube-system" differs from the App\'s destination "team-a"',
      },
      {
        code: "Refused",
        path: "m.yaml:5",
        message:
          'Namespace other: namespace is not allowed for Apps in "team-a" (cluster setting PLUMB_ALLOWED_DESTINATIONS)',
      },
      {
        code: "Refused",
        path: "m.yaml:13",
        message: "ConfigMap d: duplicate of the object at m.yaml:9",
      },
    ]);
    const away = renderObjects([], { ...ctx, destinationNamespace: "prod" });
    expect(away.ok ? [] : away.error).toEqual([
      {
        code: "InvalidSpec",
        path: "spec.destination.namespace",
        message:
          'namespace "prod" is not allowed for Apps in "team-a": an App deploys to its own namespace unless the cluster setting PLUMB_ALLOWED_DESTINATIONS lists this one (or "*")',
      },
    ]);
    expect(
      renderObjects([], { ...ctx, destinationNamespace: "prod", allowedNamespaces: ["*"] }).ok,
    ).toBe(true);
  });

  it("refuses cluster-scoped kinds other than Namespaces unless the cluster setting allows them", () => {
    const crb =
      "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: escalate}\nrules: []\n";
    const refused = renderObjects(parsed(crb), ctx);
    expect(refused.ok ? [] : refused.error).toEqual([
      {
        code: "Refused",
        path: "m.yaml:1",
        message:
          "ClusterRole escalate: cluster-scoped ClusterRole objects are not allowed for Apps (cluster setting PLUMB_ALLOWED_CLUSTER_KINDS)",
      },
    ]);
    for (const allowed of [["ClusterRole"], ["rbac.authorization.k8s.io/ClusterRole"], ["*"]]) {
      expect(renderObjects(parsed(crb), { ...ctx, allowedClusterKinds: allowed }).ok).toBe(true);
    }
    expect(
      renderObjects(parsed(crb), { ...ctx, allowedClusterKinds: ["example.com/ClusterRole"] }).ok,
    ).toBe(false);
  });

  it("refuses a set of more than MAX_OBJECTS objects", () => {
    const many = Array.from(
      { length: MAX_OBJECTS + 1 },
      (_, i) => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c${i}}\n`,
    ).join("---\n");
    const r = renderObjects(parsed(many), ctx);
    expect(r.ok ? [] : r.error).toEqual([
      {
        code: "TooLarge",
        path: "spec.source",
        message: "renders 1001 objects; an App may have at most 1000 (split it into several Apps)",
      },
    ]);
  });

  it("hashes equal sets equally whatever the key order, and different sets differently", async () => {
    const a = await hashObjects([{ b: 1, a: { d: 2, c: 3 } }]);
    const b = await hashObjects([{ a: { c: 3, d: 2 }, b: 1 }]);
    const c = await hashObjects([{ a: { c: 3, d: 2 }, b: 2 }]);
    expect(a).toBe(b);
    expect(a).not.toBe(c);
    expect(a).toMatch(/^[0-9a-f]{16}$/);
  });
});
