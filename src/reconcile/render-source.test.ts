// The host's side of Helm's lookup over a fake engine and API server: how many renders a chart
// takes, what each is answered, and what stays absent. The real engine and API server:
// test/e2e/helm-lookup.test.ts.
import { describe, expect, it } from "vitest";
import { createFakeKube, testApp } from "../../test/support/fake-kube.ts";
import { validateSpec } from "../app/index.ts";
import type { HelmOutput, HelmRequest, LookupKey } from "../render/index.ts";
import { runContext } from "./context.ts";
import { renderWithEngine } from "./render-source.ts";

const CM = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n";
const enc = (s: string) => new TextEncoder().encode(s);
const key = (kind: string, namespace: string, name: string): LookupKey => ({
  apiVersion: "v1",
  kind,
  namespace,
  name,
});

/** An engine that asks `rounds[i]` on its i-th render while they are unanswered. */
function engine(rounds: LookupKey[][]) {
  const requests: HelmRequest[] = [];
  return {
    requests,
    helm: async (req: HelmRequest): Promise<HelmOutput> => {
      requests.push(structuredClone(req));
      const answered = new Set(
        (req.lookups ?? []).map((a) => JSON.stringify({ ...a, object: undefined })),
      );
      const asked = (rounds[requests.length - 1] ?? []).filter(
        (k) => !answered.has(JSON.stringify({ ...k, object: undefined })),
      );
      const out: HelmOutput = {
        chart: "c",
        version: "1",
        manifests: [{ path: "c/templates/a.yaml", content: CM }],
      };
      return asked.length ? { ...out, lookups: asked } : out;
    },
  };
}

async function setup(rounds: LookupKey[][], helm: Record<string, unknown> = {}) {
  const kube = createFakeKube();
  await kube.apply({
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "pw", namespace: "team" },
    data: { pw: btoa("generated-once-1234") },
  } as never);
  await kube.apply({
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "theirs", namespace: "other" },
    data: { pw: btoa("not-this-apps-1234") },
  } as never);
  const fake = engine(rounds);
  const logs: Array<Record<string, unknown>> = [];
  const app = testApp("team", "web", {
    spec: { source: { git: { url: "https://git.example.com/c.git" }, helm } },
  });
  const spec = validateSpec(app.spec);
  if (!spec.ok) throw new Error("spec");
  const ctx = runContext(
    app,
    { kube, git: {} as never, holder: "t", engines: { helm: fake.helm }, log: (e) => logs.push(e) },
    new Date(0),
  );
  const files = [{ path: "Chart.yaml", data: enc("apiVersion: v2\nname: c\nversion: 1\n") }];
  const result = await renderWithEngine(ctx, spec.value, { kind: "helm", path: "", files });
  return { result, requests: fake.requests, logs, kube };
}

describe("Helm lookup, the host's side", () => {
  it("a chart without lookup renders once, lookup on", async () => {
    const { result, requests } = await setup([]);
    expect(result.ok).toBe(true);
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({ lookup: true });
    expect(requests[0]?.lookups).toBeUndefined();
  });

  it("answers what a render asked and renders again, until nothing new is asked", async () => {
    const { result, requests, logs } = await setup([
      [key("Secret", "team", "pw"), key("Secret", "other", "theirs")],
      [key("ConfigMap", "team", "")],
    ]);
    expect(result.ok).toBe(true);
    expect(requests).toHaveLength(3);
    expect(requests[1]?.lookups).toEqual([
      {
        ...key("Secret", "team", "pw"),
        object: expect.objectContaining({ data: { pw: btoa("generated-once-1234") } }),
      },
      key("Secret", "other", "theirs"),
    ]);
    expect(requests[2]?.lookups?.[2]).toEqual({
      ...key("ConfigMap", "team", ""),
      object: { apiVersion: "v1", kind: "ConfigMapList", metadata: {}, items: [] },
    });
    expect(logs).toEqual([
      {
        app: "team/web",
        msg: "helm lookup answered as absent",
        lookup: "v1 Secret other/theirs",
        why: "namespace other is not the App's destination namespace team",
      },
    ]);
  });

  it("fails the render when lookups do not settle", async () => {
    const rounds = [1, 2, 3, 4, 5, 6].map((i) => [key("Secret", "team", `s${i}`)]);
    const { result, requests } = await setup(rounds);
    expect(requests).toHaveLength(5);
    expect(result.ok ? "" : result.error[0]?.message).toBe(
      "the chart's lookups did not settle in 5 renders (still asking for v1 Secret team/s5)",
    );
  });

  it("lookup: false asks the engine for helm template's rendering", async () => {
    const { requests } = await setup([], { lookup: false });
    expect(requests).toHaveLength(1);
    expect(requests[0]?.lookup).toBeUndefined();
  });
});
