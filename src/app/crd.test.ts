import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { appCrd, toStructural } from "./crd.ts";
import { renderCrdYaml, renderPolicyCrdYaml } from "./crd-yaml.ts";
import { ONE_SOURCE } from "./schema.ts";
import { validateSpec } from "./validate.ts";

describe("App CRD", () => {
  it("the committed CRD is what the schema generates (run `npm run generate`)", () => {
    const committed = readFileSync(
      new URL("../../infra/crds/apps.plumb.dev.yaml", import.meta.url),
      "utf8",
    );
    expect(committed).toBe(renderCrdYaml());
  });

  it("the committed AppPolicy CRD is what its schema generates (run `npm run generate`)", () => {
    const committed = readFileSync(
      new URL("../../infra/crds/apppolicies.plumb.dev.yaml", import.meta.url),
      "utf8",
    );
    expect(committed).toBe(renderPolicyCrdYaml());
  });

  it("prints each header once, never one kubectl adds itself", () => {
    const spec = appCrd()["spec"] as {
      versions: Array<{ additionalPrinterColumns: Array<{ name: string }> }>;
    };
    const headers = spec.versions[0]!.additionalPrinterColumns.map((c) => c.name.toUpperCase());
    // The API server's Table starts with NAME; kubectl adds NAMESPACE (-A) and LABELS
    // (--show-labels) before and after the CRD's columns (cli-runtime printers decorateTable).
    const all = ["NAME", ...headers, "NAMESPACE", "LABELS"];
    expect(all.filter((h, i) => all.indexOf(h) !== i)).toEqual([]);
    expect(headers).toContain("APP NAMESPACE");
  });

  it("is structural: no JSON Schema keywords the API server refuses", () => {
    const text = JSON.stringify(appCrd());
    for (const banned of ['"$schema"', '"propertyNames"', '"anyOf"', '"oneOf"', '"const"']) {
      expect(text).not.toContain(banned);
    }
  });
});

describe("toStructural", () => {
  it("keeps properties whose names are JSON Schema keywords", () => {
    const out = toStructural({
      type: "object",
      $schema: "x",
      properties: { id: { type: "string" }, format: { type: "string", format: "starts_with" } },
      required: ["id"],
    });
    expect(out).toEqual({
      type: "object",
      properties: { id: { type: "string" }, format: { type: "string" } },
      required: ["id"],
    });
  });

  it("every required field of the generated CRD is a declared property", () => {
    const walk = (node: unknown, at: string): string[] => {
      if (!node || typeof node !== "object") return [];
      const n = node as {
        properties?: Record<string, unknown>;
        required?: string[];
        items?: unknown;
      };
      const missing = (n.required ?? [])
        .filter((r) => !(r in (n.properties ?? {})))
        .map((r) => `${at}.${r}`);
      const nested = Object.entries(n.properties ?? {}).flatMap(([k, v]) => walk(v, `${at}.${k}`));
      return [...missing, ...nested, ...walk(n.items, `${at}[]`)];
    };
    const version = (
      appCrd()["spec"] as { versions: Array<{ schema: { openAPIV3Schema: unknown } }> }
    ).versions[0]!;
    expect(walk(version.schema.openAPIV3Schema, "")).toEqual([]);
  });
});

describe("validateSpec", () => {
  it("applies the defaults of the API sketch", () => {
    const r = validateSpec({ source: { git: { url: "https://h/o/r.git" } } });
    expect(r).toEqual({
      ok: true,
      value: {
        source: { git: { url: "https://h/o/r.git", ref: "HEAD", path: "." } },
        destination: {},
        interval: "5m",
        syncPolicy: {
          automated: true,
          prune: true,
          selfHeal: false,
          requiresApproval: false,
          allowEmpty: false,
        },
        freeze: false,
        adopt: false,
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
    expect(r.error.map((i) => i.path)).toEqual([
      "spec.source.git.url",
      "spec.source.git.path",
      "spec.interval",
    ]);
  });

  it("refuses intervals that overflow dates, and a cluster that is not a Secret reference", () => {
    const r = validateSpec({
      source: { git: { url: "https://h/o/r.git" } },
      interval: "999999999999h",
      destination: { cluster: "https://prod.example.com:6443" },
    });
    expect(r.ok ? [] : r.error).toEqual([
      {
        code: "InvalidSpec",
        path: "spec.destination.cluster",
        message: 'must be "" (the cluster plumb talks to) or {secretRef: {name, key}}',
      },
      {
        code: "InvalidSpec",
        path: "spec.interval",
        message: "must be between 1s and 8760h (a year)",
      },
    ]);
  });

  it('reads destination.cluster "" as the App\'s own cluster, and a kubeconfig Secret', () => {
    const base = { source: { git: { url: "https://h/o/r.git" } } };
    const home = validateSpec({ ...base, destination: { cluster: "" } });
    expect(home.ok && home.value.destination).toEqual({});
    const remote = validateSpec({
      ...base,
      destination: { cluster: { secretRef: { name: "b" } } },
    });
    expect(remote.ok && remote.value.destination).toEqual({
      cluster: { secretRef: { name: "b" } },
    });
    const bad = validateSpec({
      ...base,
      destination: { cluster: { secretRef: { name: "B!", key: "a/b" } } },
    });
    expect(bad.ok ? [] : bad.error.map((i) => i.path)).toEqual([
      "spec.destination.cluster.secretRef.name",
      "spec.destination.cluster.secretRef.key",
    ]);
  });

  it.each(
    readdirSync(new URL("../../infra/examples", import.meta.url)).filter((f) =>
      f.startsWith("app-"),
    ),
  )("infra/examples/%s validates", (file) => {
    const app = parse(
      readFileSync(new URL(`../../infra/examples/${file}`, import.meta.url), "utf8"),
    ) as { spec: unknown };
    const r = validateSpec(app.spec);
    expect(r.ok ? [] : r.error).toEqual([]);
  });

  it("refuses both or neither source", () => {
    const none = validateSpec({ source: {} });
    expect(none.ok ? [] : none.error).toEqual([
      { code: "InvalidSpec", path: "spec.source", message: ONE_SOURCE },
    ]);
  });
});
