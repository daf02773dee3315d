// The AppSet CRD on the real control plane: the generated schema is accepted, an AppSet with a
// templated App spec is stored as written ({{param}} where the App schema wants another type),
// and a spec the schema forbids is refused by the API server where its author sees it.
import { describe, expect, it } from "vitest";
import { createNamespace, transport } from "./support.ts";

const NS = "e2e-appset";
const PATH = `/apis/plumb.dev/v1alpha1/namespaces/${NS}/appsets`;

function appSet(name: string, spec: Record<string, unknown>) {
  return {
    apiVersion: "plumb.dev/v1alpha1",
    kind: "AppSet",
    metadata: { name, namespace: NS },
    spec,
  };
}

describe("AppSet CRD", () => {
  it("stores a templated AppSet as written and refuses one without generators", async () => {
    await createNamespace(NS);
    const spec = {
      generators: [{ list: { elements: [{ env: "dev" }, { env: "prod" }] } }],
      template: {
        metadata: { name: "web-{{env}}" },
        spec: { source: { git: { url: "https://git.example/r.git", path: "envs/{{env}}" } } },
      },
    };
    const created = await transport()("POST", PATH, { body: appSet("web", spec) });
    expect(created.status).toBe(201);
    const stored = created.body as { spec: Record<string, unknown> };
    expect(stored.spec["template"]).toEqual(spec.template);
    // The schema's default is filled in by the API server.
    expect(stored.spec["deletePolicy"]).toBe("delete");

    const bad = await transport()("POST", PATH, {
      body: appSet("empty", { ...spec, generators: [] }),
    });
    expect(bad.status).toBe(422);
    expect(JSON.stringify(bad.body)).toContain("spec.generators");
  });
});
