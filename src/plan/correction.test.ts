import { describe, expect, it } from "vitest";
import type { DriftEntry } from "../app/index.ts";
import { refKey } from "../core/index.ts";
import { describeCorrection } from "./correction.ts";

const entry = (name: string, fields: DriftEntry["fields"]): DriftEntry => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  namespace: "team-a",
  name,
  fields,
});

describe("describeCorrection", () => {
  it("names each re-applied object with its fields and their managers; a deleted one as deleted", () => {
    const web = entry("web", [
      { path: "spec.replicas", desired: "1", live: "3", manager: "kubectl" },
      { path: "metadata.labels.tier", desired: "a" },
    ]);
    const gone = entry("gone", [{ path: "(object)", desired: "exists", live: "deleted" }]);
    const skipped = entry("skipped", [{ path: "spec.paused" }]);
    expect(describeCorrection([web, gone, skipped], new Set([refKey(web), refKey(gone)]))).toEqual({
      count: 2,
      objects: [
        "Deployment team-a/web: spec.replicas by kubectl, metadata.labels.tier",
        "Deployment team-a/gone: deleted",
      ],
    });
  });

  it("names at most 10 and counts them all", () => {
    const many = Array.from({ length: 14 }, (_, i) => entry(`d${i}`, [{ path: "spec.replicas" }]));
    const out = describeCorrection(many, new Set(many.map(refKey)));
    expect(out.count).toBe(14);
    expect(out.objects).toHaveLength(10);
  });
});
