import { describe, expect, it } from "vitest";
import { helmRequestFromArchive, helmRequestFromRepo, joinPath, parseHelmOutput } from "./helm.ts";

const enc = (s: string) => new TextEncoder().encode(s);
const ctx = { releaseName: "web", namespace: "team-a", maxOutputBytes: 1000, lookup: false };

describe("helmRequestFromRepo", () => {
  const files = [
    { path: "charts/web/Chart.yaml", data: enc("name: web\n") },
    { path: "charts/web/values-prod.yaml", data: enc("a: 1\n") },
    { path: "charts/webby/Chart.yaml", data: enc("name: webby\n") },
    { path: "env/prod.yaml", data: enc("b: 2\n") },
  ];

  it("takes the chart's files relative to it and resolves values files from the chart", () => {
    const r = helmRequestFromRepo(
      files,
      "charts/web",
      { valuesFiles: ["values-prod.yaml", "../../env/prod.yaml"], values: { c: 3 } },
      { ...ctx, capabilities: { kubeVersion: "v1.35.4", apiVersions: ["v1", "apps/v1"] } },
    );
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value.files?.map((f) => f.path)).toEqual(["Chart.yaml", "values-prod.yaml"]);
    expect(r.value.valuesFiles.map((f) => f.path)).toEqual([
      "charts/web/values-prod.yaml",
      "env/prod.yaml",
    ]);
    expect(r.value).toMatchObject({
      values: { c: 3 },
      releaseName: "web",
      namespace: "team-a",
      kubeVersion: "v1.35.4",
      apiVersions: ["v1", "apps/v1"],
    });
  });

  it("refuses values files outside the repository or missing", () => {
    const r = helmRequestFromRepo(
      files,
      "charts/web",
      { valuesFiles: ["../../../etc/passwd", "/abs.yaml", "nope.yaml"] },
      ctx,
    );
    expect(r.ok ? [] : r.error).toEqual([
      {
        code: "InvalidSpec",
        path: "charts/web",
        message:
          'values file "../../../etc/passwd" (spec.source.helm.valuesFiles) is outside the repository',
      },
      {
        code: "InvalidSpec",
        path: "charts/web",
        message: 'values file "/abs.yaml" (spec.source.helm.valuesFiles) is outside the repository',
      },
      {
        code: "RenderError",
        path: "charts/web/nope.yaml",
        message: 'values file "nope.yaml" (spec.source.helm.valuesFiles) not found',
      },
    ]);
  });

  it("asks for lookup answers and carries valuesFrom only when the App has them", () => {
    const valuesFrom = [{ source: "Secret team-a/db key pw", data: enc("x"), secret: true }];
    const on = helmRequestFromArchive(enc("tgz"), {}, { ...ctx, lookup: true, valuesFrom });
    expect(on).toMatchObject({ lookup: true, valuesFrom });
    const off = helmRequestFromArchive(enc("tgz"), {}, { ...ctx, valuesFrom: [] });
    expect("lookup" in off || "valuesFrom" in off).toBe(false);
  });

  it("for a packaged chart, names values files inside it", () => {
    const r = helmRequestFromArchive(enc("tgz"), { valuesFiles: ["ci/prod.yaml"] }, ctx);
    expect(r.chartValuesFiles).toEqual(["ci/prod.yaml"]);
    expect(r.valuesFiles).toEqual([]);
    expect(r.files).toBeUndefined();
  });
});

describe("parseHelmOutput", () => {
  it("parses each template with its path and drops test hooks", () => {
    const r = parseHelmOutput({
      chart: "web",
      version: "1.0.0",
      manifests: [
        {
          path: "web/templates/cm.yaml",
          content: "---\n# c\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
        },
        {
          path: "web/templates/tests/t.yaml",
          content:
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: t\n  annotations:\n    helm.sh/hook: test\n",
        },
      ],
    });
    expect(r.ok ? r.value.map((o) => o.origin) : r.error).toEqual(["web/templates/cm.yaml:3"]);
  });

  it("reports a template's bad YAML with its file and line", () => {
    const r = parseHelmOutput({
      chart: "web",
      version: "1.0.0",
      manifests: [
        { path: "web/templates/bad.yaml", content: "apiVersion: v1\nkind: ConfigMap\nb: @x\n" },
      ],
    });
    expect(r.ok ? [] : r.error.map((i) => i.path)).toEqual(["web/templates/bad.yaml:3"]);
  });
});

describe("joinPath", () => {
  it("normalizes and refuses leaving the root", () => {
    expect(joinPath("a/b", "../c/./d.yaml")).toBe("a/c/d.yaml");
    expect(joinPath("", "x.yaml")).toBe("x.yaml");
    expect(joinPath("a", "../../x")).toBeUndefined();
  });
});
