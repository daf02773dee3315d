// The example Apps in infra/examples are valid against the App schema; the example AppSets
// against theirs, and their templates make valid Apps.
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { desiredApps, directoryParams, type Params, pullRequestParams } from "../plan/appset.ts";
import { AppSetSpec } from "./appset.ts";
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

describe("infra/examples AppSets", () => {
  const files = readdirSync(DIR).filter((f) => /^appset-.*\.yaml$/.test(f));
  /** Parameters as each generator kind yields them (plan/appset.ts, Argo CD's names). */
  const sample: Record<string, Params> = {
    git: directoryParams("envs/dev"),
    pullRequest: pullRequestParams({
      number: 7,
      branch: "feature/x",
      headSha: "0123456789abcdef0123456789abcdef01234567",
      labels: ["preview"],
    }),
  };
  it("has the Git directory and pull request examples", () => {
    expect(files).toEqual(["appset-environments.yaml", "appset-previews.yaml"]);
  });
  for (const f of files) {
    it(`${f} is a valid AppSet whose template makes a valid App`, () => {
      const doc = parse(readFileSync(join(DIR, f), "utf8")) as {
        kind: string;
        metadata: { name: string; namespace: string };
        spec: unknown;
      };
      expect(doc.kind).toBe("AppSet");
      const spec = AppSetSpec.parse(doc.spec);
      const kind = Object.keys(spec.generators[0] ?? {}).find((k) => k in sample) ?? "";
      const ref = { ...doc.metadata, uid: "uid-example" };
      const made = desiredApps(ref, spec.template, [sample[kind] ?? {}]);
      expect(made.ok ? made.apps.map((a) => a.metadata.name) : made.errors).toEqual([
        kind === "git" ? "web-dev" : "shop-pr-7",
      ]);
    });
  }
});
