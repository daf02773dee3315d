// valuesFrom as the run reads it, over a fake API server: what the engine gets, what decides a
// re-render, and the failure that names a missing entry. On the real API server:
// test/e2e/helm-lookup.test.ts.
import { describe, expect, it } from "vitest";
import { createFakeKube, testApp } from "../../test/support/fake-kube.ts";
import { validateSpec } from "../app/index.ts";
import { Redactor } from "../core/index.ts";
import { runContext } from "./context.ts";
import { readValuesFrom } from "./values-from.ts";

const text = (b: Uint8Array | undefined) => new TextDecoder().decode(b);

async function setup(valuesFrom: unknown[]) {
  const kube = createFakeKube();
  const redactor = new Redactor();
  await kube.apply({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "vals", namespace: "team" },
    data: { "values.yaml": "a: 1\n", other: "b: 2\n" },
  } as never);
  await kube.apply({
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "db", namespace: "team" },
    data: { pw: btoa("s3cret-value-123") },
  } as never);
  const app = testApp("team", "web", {
    spec: { source: { git: { url: "https://git.example.com/c.git" }, helm: { valuesFrom } } },
  });
  const spec = validateSpec(app.spec);
  if (!spec.ok) throw new Error(JSON.stringify(spec.error));
  const ctx = runContext(app, { kube, git: {} as never, holder: "t", redactor }, new Date(0));
  return { kube, ctx, spec: spec.value, redactor };
}

describe("readValuesFrom", () => {
  it("reads each entry's key in order, Secrets marked and registered for redaction", async () => {
    const { ctx, spec, redactor } = await setup([
      { kind: "ConfigMap", name: "vals" },
      { kind: "ConfigMap", name: "vals", valuesKey: "other" },
      { kind: "Secret", name: "db", valuesKey: "pw", targetPath: "db.password" },
      { kind: "ConfigMap", name: "absent", optional: true },
    ]);
    const r = await readValuesFrom(ctx, spec);
    if (!r.ok) throw new Error(r.error.message);
    expect(r.value.refs.map((v) => ({ ...v, data: text(v.data) }))).toEqual([
      { source: "ConfigMap team/vals key values.yaml", data: "a: 1\n" },
      { source: "ConfigMap team/vals key other", data: "b: 2\n" },
      {
        source: "Secret team/db key pw",
        data: "s3cret-value-123",
        targetPath: "db.password",
        secret: true,
      },
    ]);
    expect(redactor.redact("pw is s3cret-value-123")).not.toContain("s3cret-value-123");
    expect(r.value.digest).toMatch(/^[0-9a-f]+$/);
  });

  it("gives another digest when an object changes, the same when none does", async () => {
    const { kube, ctx, spec } = await setup([{ kind: "ConfigMap", name: "vals" }]);
    const one = await readValuesFrom(ctx, spec);
    const same = await readValuesFrom(ctx, spec);
    await kube.apply({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "vals", namespace: "team" },
      data: { "values.yaml": "a: 2\n" },
    } as never);
    const changed = await readValuesFrom(ctx, spec);
    expect(one.ok && same.ok && one.value.digest === same.value.digest).toBe(true);
    expect(one.ok && changed.ok && one.value.digest !== changed.value.digest).toBe(true);
  });

  it("fails naming a missing object or key that is not optional, transient", async () => {
    const gone = await setup([{ kind: "Secret", name: "gone" }]);
    expect(await readValuesFrom(gone.ctx, gone.spec)).toEqual({
      ok: false,
      error: {
        reason: "SourceFailed",
        message: "Secret team/gone not found (spec.source.helm.valuesFrom[0])",
        stalled: false,
        transient: true,
      },
    });
    const noKey = await setup([
      { kind: "ConfigMap", name: "vals" },
      { kind: "ConfigMap", name: "vals", valuesKey: "nope" },
    ]);
    const r = await readValuesFrom(noKey.ctx, noKey.spec);
    expect(r.ok ? "" : r.error.message).toBe(
      "ConfigMap team/vals has no key nope (spec.source.helm.valuesFrom[1])",
    );
  });

  it("reads nothing without valuesFrom", async () => {
    const { kube, ctx, spec } = await setup([]);
    const before = kube.requestCounts().get;
    expect(await readValuesFrom(ctx, spec)).toEqual({
      ok: true,
      value: { refs: [], digest: undefined },
    });
    expect(kube.requestCounts().get).toBe(before);
  });
});
