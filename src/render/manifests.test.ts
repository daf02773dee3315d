import { describe, expect, it } from "vitest";
import { runBudget } from "../core/index.ts";
import {
  decodedObjects,
  MAX_DOCUMENT_BYTES,
  oversizedDocument,
  parseManifests,
} from "./manifests.ts";

const cm = (name: string, data = "") =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  a: "${data}"\n`;

describe("one object's size cap", () => {
  it("finds the first document over the cap by its markers, without parsing", () => {
    const text = `${cm("a")}---\n${cm("b", "x".repeat(100))}...\n---\n${cm("c")}`;
    expect(oversizedDocument(text, 1000)).toBeUndefined();
    expect(oversizedDocument(text, 90)).toEqual({
      line: 7,
      bytes: cm("b", "x".repeat(100)).length + 4,
    });
    // A "---" not at column 0, or followed by text, is no marker.
    expect(oversizedDocument(`a: |\n  ---\n  ${"y".repeat(50)}\n`, 40)).toEqual({
      line: 1,
      bytes: 64,
    });
  });

  it("refuses a document over MAX_DOCUMENT_BYTES naming the cap, and keeps the rest of the file unparsed", () => {
    // A million-key ConfigMap, as a chart's template would render it.
    const keys = Array.from({ length: 300_000 }, (_, i) => `  k${i}: "${i}"\n`).join("");
    const big = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n${keys}`;
    expect(big.length).toBeGreaterThan(MAX_DOCUMENT_BYTES);
    const result = parseManifests([
      { path: "chart/templates/cm.yaml", content: `${cm("small")}---\n${big}` },
    ]);
    expect(result).toEqual({
      ok: false,
      error: [
        {
          code: "TooLarge",
          path: "chart/templates/cm.yaml:7",
          message: `a document of ${big.length + 4} bytes is over the ${MAX_DOCUMENT_BYTES}-byte (3 MiB) cap on one object (kube-apiserver's default --max-request-bytes; etcd stores at most 1.5 MiB): it could never be applied`,
        },
      ],
    });
  });

  it("refuses an engine-decoded object over the cap as JSON", () => {
    const data = Object.fromEntries(Array.from({ length: 200_000 }, (_, i) => [`k${i}`, `${i}`]));
    const value = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "big" }, data };
    const result = decodedObjects([{ origin: "kustomize build .:1", value }]);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.error[0]?.code).toBe("TooLarge");
      expect(result.error[0]?.message).toContain(
        `(as JSON) is over the ${MAX_DOCUMENT_BYTES}-byte`,
      );
    }
    const small = decodedObjects([{ origin: "x:1", value: { ...value, data: { a: "1" } } }]);
    expect(small.ok).toBe(true);
  });
});

describe("parseManifests under a memory ceiling", () => {
  const configMap = (name: string, keys: number) =>
    `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n${Array.from({ length: keys }, (_, i) => `  k${i}: "v"\n`).join("")}`;
  const small = runBudget(64 * 1024 * 1024);

  it("stops a document past the token cap before its tree is built, naming the cap and PLUMB_MAX_RUN_MEMORY", () => {
    // 10,000 keys are 70,000 lexemes, over 65,536 (64 MiB / 1 KiB); the default ceiling allows them.
    const files = [
      { path: "cm.yaml", content: `${configMap("a", 1)}---\n${configMap("b", 10_000)}` },
    ];
    expect(parseManifests(files).ok).toBe(true);
    const r = parseManifests(files, small);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error).toHaveLength(1);
    expect(r.error[0]).toMatchObject({ code: "TooLarge" });
    expect(r.error[0]?.path).toMatch(/^cm\.yaml:\d+$/);
    expect(Number(r.error[0]?.path.split(":")[1])).toBeGreaterThan(8);
    expect(r.error[0]?.message).toBe(
      "a document of more than 65536 YAML tokens (keys, values, indicators, indentation) is over the 65536-token cap (PLUMB_MAX_RUN_MEMORY / 1 KiB, of 67108864 bytes) on one document: its tree would take the run past PLUMB_MAX_RUN_MEMORY",
    );
  });

  it("counts the tokens of every file of one render against the render's cap", () => {
    // 15 files of 3,000 keys: each under the document cap, 315,000 lexemes in all (cap 262,144).
    const files = Array.from({ length: 15 }, (_, i) => ({
      path: `cm${i}.yaml`,
      content: configMap(`c${i}`, 3_000),
    }));
    expect(parseManifests(files.slice(0, 10), small).ok).toBe(true);
    const r = parseManifests(files, small);
    expect(r.ok ? [] : r.error.map((i) => [i.code, i.path.split(":")[0]])).toEqual([
      ["TooLarge", "cm12.yaml"],
    ]);
    expect(r.ok ? "" : r.error[0]?.message).toContain(
      "over the 262144-token cap (PLUMB_MAX_RUN_MEMORY / 256 bytes, of 67108864 bytes) on one render",
    );
  });
});
