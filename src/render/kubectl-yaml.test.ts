import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { appCrd } from "../app/crd.ts";
import { formatFloat32Key, goNumber, MAX_ALIAS_NODES } from "./kubectl-yaml.ts";
import { parseManifests } from "./manifests.ts";
import { HEADER, KUBECTL_CASES } from "./testdata/kubectl-yaml-cases.ts";

const ROOT = path.resolve(import.meta.dirname, "../..");

function parseOne(content: string) {
  return parseManifests([{ path: "t.yaml", content }]);
}

/** The object minus apiVersion, kind and metadata, as the table's JSON column holds it. */
function body(object: Record<string, unknown>): Record<string, unknown> {
  const { apiVersion: _a, kind: _k, metadata: _m, ...rest } = object;
  return rest;
}

describe("manifests read as kubectl reads them (sigs.k8s.io/yaml v1.6.0, go-yaml v2)", () => {
  it.each(KUBECTL_CASES)("%s %j", (group, text, expected) => {
    const r = parseOne(group === "json" || text.startsWith("%") ? text : `${HEADER}${text}\n`);
    if (typeof expected === "string") {
      expect(r.ok ? r.value.map((o) => body(o.object)) : r.error).toEqual([JSON.parse(expected)]);
    } else if ("error" in expected) {
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.error[0]?.path).toMatch(/^t\.yaml:\d+$/);
    } else {
      expect(r.ok ? [] : r.error.map((i) => i.message)).toEqual([
        expect.stringMatching(/^integer -?\d+ is beyond 2\^53: plumb cannot send it exactly/),
      ]);
    }
  });

  it("the issue's example: file modes with a leading zero are octal (0400 → 256, 0440 → 288)", () => {
    const deployment = [
      "apiVersion: apps/v1",
      "kind: Deployment",
      "metadata: {name: web}",
      "spec:",
      "  template:",
      "    spec:",
      "      volumes:",
      "        - name: conf",
      "          configMap: {name: conf, defaultMode: 0400, items: [{key: app.conf, path: app.conf, mode: 0440}]}",
    ].join("\n");
    const r = parseOne(deployment);
    expect(r.ok && r.value[0]?.object["spec"]).toEqual({
      template: {
        spec: {
          volumes: [
            {
              name: "conf",
              configMap: {
                name: "conf",
                defaultMode: 256,
                items: [{ key: "app.conf", path: "app.conf", mode: 288 }],
              },
            },
          ],
        },
      },
    });
  });

  it("names file and line for values kubectl refuses or plumb cannot carry", () => {
    const r = parseManifests([
      { path: "a.yaml", content: `${HEADER}ok: 1\nbad: .inf\n` },
      { path: "b.yaml", content: `${HEADER}x:\n  y:\n    ~: z\n` },
      { path: "c.yaml", content: `${HEADER}uid: 9007199254740993\n` },
      { path: "d.yaml", content: `${HEADER}m:\n  <<: not-a-map\n` },
      { path: "e.yaml", content: `%YAML 1.1\n---\n${HEADER}` },
    ]);
    expect(r.ok ? [] : r.error.map(({ path, message }) => ({ path, message }))).toEqual([
      { path: "a.yaml:5", message: ".inf has no JSON form (kubectl refuses it too)" },
      { path: "b.yaml:6", message: "unsupported map key: null" },
      {
        path: "c.yaml:4",
        message:
          "integer 9007199254740993 is beyond 2^53: plumb cannot send it exactly (quote it if it is a string)",
      },
      { path: "d.yaml:5", message: "map merge requires map or sequence of maps as the value" },
      {
        path: "e.yaml:2",
        message: "YAML directives (%YAML, %TAG) are not supported (kubectl cannot read them)",
      },
    ]);
  });

  it("bounds alias expansion (billion laughs) and refuses self-reference", () => {
    const laughs = [
      HEADER.trimEnd(),
      "a: &a [x, x, x, x, x, x, x, x, x, x]",
      "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]",
      "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]",
      "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]",
      "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]",
    ].join("\n");
    expect(MAX_ALIAS_NODES).toBeLessThan(11 ** 5);
    const r = parseOne(laughs);
    expect(r.ok ? [] : r.error.map((i) => i.message)).toEqual([
      "document contains excessive aliasing",
    ]);
    expect(parseOne(`${HEADER}v: &r [*r]\n`)).toEqual({
      ok: false,
      error: [
        { code: "InvalidManifest", path: "t.yaml:4", message: "anchor 'r' value contains itself" },
      ],
    });
  });

  it("keeps __proto__ an ordinary key, also when merged", () => {
    const r = parseOne(`${HEADER}base: &b {__proto__: {polluted: true}}\nv:\n  <<: *b\n`);
    expect(r.ok).toBe(true);
    const v = r.ok ? (r.value[0]?.object["v"] as Record<string, unknown>) : {};
    expect(Object.getPrototypeOf(v)).toBe(Object.prototype);
    expect(Object.keys(v)).toEqual(["__proto__"]);
    expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined();
  });
});

describe("goNumber and formatFloat32Key", () => {
  it("follow go-yaml v2 and Go's strconv", () => {
    expect(goNumber("0400")).toBe(256n);
    expect(goNumber("18446744073709551615")).toBe(18446744073709551615n);
    expect(goNumber("18446744073709551616")).toBe(2 ** 64); // beyond uint64: a float
    expect(goNumber("0x10000000000000000")).toBe("0x10000000000000000");
    expect(goNumber("1e400")).toBe("1e400");
    expect(goNumber(".5_0")).toBe(0.5);
    expect(goNumber(".5__0")).toBe(".5__0");
    expect(
      [1e6, 123456789, 16777217, 0.1, 1e-5, 3.4028235e38, 1e39, -0, 100000].map(formatFloat32Key),
    ).toEqual([
      "1e+06",
      "1.2345679e+08",
      "1.6777216e+07",
      "0.1",
      "1e-05",
      "3.4028235e+38",
      ".inf",
      "-0",
      "100000",
    ]);
  });
});

describe("plumb's own YAML reads the same under kubectl's rules", () => {
  const yamlFiles = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true, recursive: true })
      .filter((e) => e.isFile() && /\.ya?ml$/.test(e.name))
      .map((e) => path.join(e.parentPath, e.name));

  it('the generated CRD is the schema\'s CRD (`on` stays the key "on")', () => {
    const file = path.join(ROOT, "infra/crds/apps.plumb.dev.yaml");
    const r = parseManifests([{ path: file, content: readFileSync(file, "utf8") }]);
    expect(r.ok && r.value.map((o) => o.object)).toEqual([appCrd()]);
  });

  it.each(yamlFiles(path.join(ROOT, "infra")))("%s: YAML 1.1 and 1.2 agree", (file) => {
    const content = readFileSync(file, "utf8");
    const r = parseManifests([{ path: file, content }]);
    const yaml12 = parseAllDocuments(content).map((d) => d.toJS());
    expect(r.ok && r.value.map((o) => o.object)).toEqual(yaml12.filter((v) => v !== null));
  });
});
