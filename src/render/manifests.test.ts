import { describe, expect, it } from "vitest";
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
