import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { AppSetSpec } from "./appset.ts";
import { renderAppSetCrdYaml } from "./crd-yaml.ts";

const template = { metadata: { name: "web-{{env}}" }, spec: {} };

describe("AppSet CRD", () => {
  it("the committed CRD is what the schema generates (run `npm run generate`)", () => {
    const committed = readFileSync(
      new URL("../../infra/crds/appsets.plumb.dev.yaml", import.meta.url),
      "utf8",
    );
    expect(committed).toBe(renderAppSetCrdYaml());
  });

  it("defaults deletePolicy to delete and a Git generator's revision to HEAD", () => {
    const spec = AppSetSpec.parse({
      generators: [{ git: { repoURL: "https://g/r.git", directories: [{ path: "apps/*" }] } }],
      template,
    });
    expect(spec.deletePolicy).toBe("delete");
    expect(spec.generators[0]!.git).toEqual({
      repoURL: "https://g/r.git",
      revision: "HEAD",
      directories: [{ path: "apps/*", exclude: false }],
    });
  });

  it("refuses a generator with two kinds or none", () => {
    const two = AppSetSpec.safeParse({
      generators: [{ list: { elements: [] }, clusters: {} }],
      template,
    });
    expect(two.success).toBe(false);
    expect(two.error?.issues[0]?.message).toBe(
      "each generator has exactly one of list, clusters, git, pullRequest",
    );
    expect(AppSetSpec.safeParse({ generators: [{}], template }).success).toBe(false);
  });
});
