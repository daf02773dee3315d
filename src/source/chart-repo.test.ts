// Helm HTTP repositories: where index.yaml and the charts are read from, however the repository
// URL is spelled, and what the messages name — against a real repository server on 127.0.0.1.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type HelmRepo, startHelmRepo } from "../../test/support/helm-repo.ts";
import type { SourceError } from "../core/index.ts";
import { createChartPort } from "./chart.ts";
import { resolveInRepository } from "./chart-repo.ts";

const CHART = { name: "web", version: "1.2.0", files: { "Chart.yaml": "name: web\n" } };
const port = createChartPort();
let root: HelmRepo;
let nested: HelmRepo;
let tokened: HelmRepo;

beforeAll(async () => {
  root = await startHelmRepo();
  nested = await startHelmRepo({ prefix: "/charts/stable" });
  tokened = await startHelmRepo({ prefix: "/charts", token: "t0ken" });
  for (const r of [root, nested, tokened]) r.add(CHART);
});
afterAll(async () => {
  await Promise.all([root, nested, tokened].map((r) => r.stop()));
});

const failure = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: SourceError) => e,
  );

describe("a Helm repository's URL", () => {
  it("gives <repository>/index.yaml with or without a trailing slash, at the root or below it", async () => {
    const spellings = [root.url, `${root.url}/`, nested.url, `${nested.url}/`];
    for (const repository of spellings) {
      const revision = await port.resolve({ repository, name: "web", version: "*" }, undefined);
      expect(revision).toMatch(/^1\.2\.0@sha256:[0-9a-f]{64}$/);
      const tgz = await port.fetch({ repository, name: "web", version: "*" }, revision, undefined);
      expect(tgz.byteLength).toBeGreaterThan(0);
    }
    expect(nested.requests).toEqual([
      "GET /charts/stable/index.yaml",
      "GET /charts/stable/index.yaml",
      "GET /charts/stable/charts/web-1.2.0.tgz",
      "GET /charts/stable/index.yaml",
      "GET /charts/stable/index.yaml",
      "GET /charts/stable/charts/web-1.2.0.tgz",
    ]);
  });

  it("names the index it read when the chart is not in it, with the slash between", async () => {
    for (const [repository, index] of [
      [root.url, `${root.url}/index.yaml`],
      [`${root.url}/`, `${root.url}/index.yaml`],
      [nested.url, `${nested.url}/index.yaml`],
      [`${nested.url}/`, `${nested.url}/index.yaml`],
    ] as const) {
      const err = await failure(
        port.resolve({ repository, name: "nosuchchart", version: "*" }, undefined),
      );
      expect(err?.message).toBe(`chart "nosuchchart" not found in ${index}`);
    }
  });

  it("keeps a token in the repository's query for index.yaml and the charts, and never shows it", async () => {
    const repository = `${tokened.url}?token=t0ken`;
    const revision = await port.resolve({ repository, name: "web", version: "*" }, undefined);
    await port.fetch({ repository, name: "web", version: "*" }, revision, undefined);
    expect(tokened.requests).toEqual([
      "GET /charts/index.yaml?token=t0ken",
      "GET /charts/index.yaml?token=t0ken",
      "GET /charts/charts/web-1.2.0.tgz?token=t0ken",
    ]);
    const err = await failure(
      port.resolve({ repository, name: "nosuchchart", version: "*" }, undefined),
    );
    expect(err?.message).toBe(`chart "nosuchchart" not found in ${tokened.url}/index.yaml?…`);
  });
});

describe("resolveInRepository", () => {
  const repo = new URL("https://charts.example.com/org/stable?token=x");
  it.each([
    ["index.yaml", "https://charts.example.com/org/stable/index.yaml?token=x"],
    ["charts/web-1.0.0.tgz", "https://charts.example.com/org/stable/charts/web-1.0.0.tgz?token=x"],
    ["/web-1.0.0.tgz", "https://charts.example.com/web-1.0.0.tgz?token=x"],
    ["https://cdn.example.com/web-1.0.0.tgz", "https://cdn.example.com/web-1.0.0.tgz"],
    ["//cdn.example.com/web-1.0.0.tgz", "https://cdn.example.com/web-1.0.0.tgz"],
  ])("%s → %s", (ref, want) => {
    expect(resolveInRepository(repo, ref).href).toBe(want);
  });
});
