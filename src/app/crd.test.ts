import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { appCrd } from "./crd.ts";
import { renderCrdYaml } from "./crd-yaml.ts";
import { validateSpec } from "./validate.ts";

describe("App CRD", () => {
  it("the committed CRD is what the schema generates (run `npm run generate`)", () => {
    const committed = readFileSync(
      new URL("../../infra/crds/apps.plumb.dev.yaml", import.meta.url),
      "utf8",
    );
    expect(committed).toBe(renderCrdYaml());
  });

  it("is structural: no JSON Schema keywords the API server refuses", () => {
    const text = JSON.stringify(appCrd());
    for (const banned of ['"$schema"', '"propertyNames"', '"anyOf"', '"oneOf"', '"const"']) {
      expect(text).not.toContain(banned);
    }
  });
});

describe("validateSpec", () => {
  it("applies the defaults of the API sketch", () => {
    const r = validateSpec({ source: { git: { url: "https://h/o/r.git" } } });
    expect(r).toEqual({
      ok: true,
      value: {
        source: { git: { url: "https://h/o/r.git", ref: "HEAD", path: "." } },
        destination: { cluster: "" },
        interval: "5m",
        syncPolicy: { automated: true, prune: true, selfHeal: false, requiresApproval: false },
        freeze: false,
      },
    });
  });

  it("lists every issue with its field path", () => {
    const r = validateSpec({
      source: { git: { url: "ftp://x", path: "a/../b" } },
      interval: "5 minutes",
    });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.issues.map((i) => i.path)).toEqual([
      "spec.source.git.url",
      "spec.source.git.path",
      "spec.interval",
    ]);
  });

  it("refuses both or neither source", () => {
    const none = validateSpec({ source: {} });
    expect(none.ok ? [] : none.issues).toEqual([
      { path: "spec.source", message: "exactly one of source.git and source.image must be set" },
    ]);
  });
});
