// The example Apps in infra/examples are valid against the App schema.
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { validateSpec } from "./index.ts";

const DIR = resolve(import.meta.dirname, "../../infra/examples");

describe("infra/examples", () => {
  const files = readdirSync(DIR).filter((f) => /^app-.*\.yaml$/.test(f));
  it("has the Kustomize, Helm and service-spec examples", () => {
    expect(files).toEqual(
      expect.arrayContaining([
        "app-podinfo-kustomize.yaml",
        "app-helm-chart.yaml",
        "app-guestbook.yaml",
        "app-service.yaml",
      ]),
    );
  });
  for (const f of files) {
    it(`${f} is a valid App`, () => {
      const doc = parse(readFileSync(join(DIR, f), "utf8")) as { kind: string; spec: unknown };
      expect(doc.kind).toBe("App");
      const r = validateSpec(doc.spec);
      expect(r.ok ? [] : r.error).toEqual([]);
    });
  }
});
