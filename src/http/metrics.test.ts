import { execFileSync } from "node:child_process";
import { describe, expect, inject, it } from "vitest";
import { FakeKube, testApp } from "../../test/support/fake-kube.ts";
import { createHttpApp } from "./app.ts";
import { METRICS_CONTENT_TYPE, renderMetrics } from "./metrics.ts";

const SHA = "0123456789abcdef0123456789abcdef01234567";
const apps = [
  testApp("team-a", "web", {
    url: "https://deploy:s3cr3t-token@git.example.com/org/web.git?x=1",
    ref: "main",
    status: {
      syncStatus: "Held",
      healthStatus: "Healthy",
      revision: SHA,
      heldRevision: "f".repeat(40),
      lastSyncedAt: "2026-03-03T00:00:01Z",
    },
  }),
  testApp("team-a", "api", {
    status: {
      syncStatus: "OutOfSync",
      healthStatus: "Degraded",
      failures: 3,
      drift: [
        {
          apiVersion: "apps/v1",
          kind: "Deployment",
          name: "api",
          fields: [{ path: "spec.replicas" }, { path: "spec.template.spec.containers[0].image" }],
        },
      ],
    },
  }),
  testApp("team-b", 'odd"name', {}),
];

describe("renderMetrics: the source of every kind", () => {
  it("names each kind's type, location and ref; an App without a source is unknown", () => {
    const of = (name: string, source: Record<string, unknown>) =>
      testApp("team-c", name, { spec: { source } });
    const text = renderMetrics([
      testApp("team-c", "git", { url: "https://git.example.com/org/web.git" }),
      of("image", { image: { repository: "registry.example.com/org/web" } }),
      of("chart", {
        chart: { repository: "oci://u:p@registry.example.com/charts", name: "podinfo" },
      }),
      of("app", { app: { services: [{ name: "web", image: "registry.example.com/org/web" }] } }),
      of("none", {}),
    ]);
    const info = text.split("\n").filter((l) => l.startsWith("plumb_app_info{"));
    expect(info).toEqual([
      'plumb_app_info{namespace="team-c",name="app",source_type="app",source="registry.example.com/org/web",ref="latest",revision=""} 1',
      'plumb_app_info{namespace="team-c",name="chart",source_type="chart",source="oci://registry.example.com/charts/podinfo",ref="*",revision=""} 1',
      'plumb_app_info{namespace="team-c",name="git",source_type="git",source="https://git.example.com/org/web.git",ref="HEAD",revision=""} 1',
      'plumb_app_info{namespace="team-c",name="image",source_type="image",source="registry.example.com/org/web",ref="latest",revision=""} 1',
      'plumb_app_info{namespace="team-c",name="none",source_type="unknown",source="",ref="",revision=""} 1',
    ]);
  });
});

describe("renderMetrics", () => {
  const text = renderMetrics(apps);
  const sample = (line: string) => text.split("\n").includes(line);

  it("per App: info, enumerations, timestamps, failures, drift, held", () => {
    expect(
      sample(
        `plumb_app_info{namespace="team-a",name="web",source_type="git",source="https://git.example.com/org/web.git",ref="main",revision="${SHA}"} 1`,
      ),
    ).toBe(true);
    expect(sample('plumb_app_sync_status{namespace="team-a",name="web",status="Held"} 1')).toBe(
      true,
    );
    expect(sample('plumb_app_sync_status{namespace="team-a",name="web",status="Synced"} 0')).toBe(
      true,
    );
    expect(
      sample('plumb_app_health_status{namespace="team-a",name="api",status="Degraded"} 1'),
    ).toBe(true);
    expect(
      sample('plumb_app_last_synced_timestamp_seconds{namespace="team-a",name="web"} 1772496001'),
    ).toBe(true);
    expect(text).not.toContain(
      'plumb_app_last_synced_timestamp_seconds{namespace="team-a",name="api"}',
    );
    expect(sample('plumb_app_consecutive_failures{namespace="team-a",name="api"} 3')).toBe(true);
    expect(sample('plumb_app_consecutive_failures{namespace="team-a",name="web"} 0')).toBe(true);
    expect(sample('plumb_app_drifted_fields{namespace="team-a",name="api"} 2')).toBe(true);
    expect(sample('plumb_app_held{namespace="team-a",name="web"} 1')).toBe(true);
    expect(sample('plumb_app_held{namespace="team-a",name="api"} 0')).toBe(true);
  });

  it("a never-reconciled App is Unknown; label values are escaped", () => {
    expect(
      sample('plumb_app_sync_status{namespace="team-b",name="odd\\"name",status="Unknown"} 1'),
    ).toBe(true);
    expect(
      sample('plumb_app_health_status{namespace="team-b",name="odd\\"name",status="Unknown"} 1'),
    ).toBe(true);
  });

  it("per namespace counts", () => {
    expect(sample('plumb_namespace_apps{namespace="team-a"} 2')).toBe(true);
    expect(sample('plumb_namespace_apps{namespace="team-b"} 1')).toBe(true);
    expect(
      sample('plumb_namespace_apps_sync_status{namespace="team-a",status="OutOfSync"} 1'),
    ).toBe(true);
    expect(
      sample('plumb_namespace_apps_health_status{namespace="team-a",status="Healthy"} 1'),
    ).toBe(true);
    expect(sample('plumb_namespace_apps_held{namespace="team-a"} 1')).toBe(true);
    expect(sample('plumb_namespace_apps_failing{namespace="team-a"} 1')).toBe(true);
    expect(sample('plumb_namespace_apps_drifted{namespace="team-b"} 0')).toBe(true);
  });

  it("never shows a credential from a source URL", () => {
    expect(text).not.toContain("s3cr3t");
    expect(text).not.toContain("deploy:");
  });

  it("passes promtool check metrics", () => {
    const out = execFileSync(inject("promtool"), ["check", "metrics"], {
      input: text,
      encoding: "utf8",
    });
    expect(out).toBe("");
  });
});

describe("GET /metrics", () => {
  const TOKENS = [
    { name: "prom", token: "prom-token-0123456789abcdef" },
    { name: "team", token: "team-token-0123456789abcdef", namespaces: ["team-b"] },
  ];
  const setup = () => {
    const kube = new FakeKube(apps);
    const app = createHttpApp({
      apps: kube,
      config: { apiTokens: TOKENS },
      trigger: kube.trigger,
      now: () => new Date(),
    });
    return { kube, app };
  };

  it("401 JSON without a valid bearer token, before the cluster is read", async () => {
    const { kube, app } = setup();
    for (const auth of [undefined, "Bearer nope-nope-nope-nope-nope"]) {
      const res = await app.request("/metrics", auth ? { headers: { authorization: auth } } : {});
      expect(res.status).toBe(401);
      expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    }
    expect(kube.calls.listApps).toEqual([]);
  });

  it("serves the text format; a namespace-limited token sees its namespaces only", async () => {
    const { app } = setup();
    const all = await app.request("/metrics", {
      headers: { authorization: `Bearer ${TOKENS[0]!.token}` },
    });
    expect(all.status).toBe(200);
    expect(all.headers.get("content-type")).toBe(METRICS_CONTENT_TYPE);
    expect(await all.text()).toBe(renderMetrics(apps));
    const team = await app.request("/metrics", {
      headers: { authorization: `Bearer ${TOKENS[1]!.token}` },
    });
    const body = await team.text();
    expect(body).toContain('plumb_namespace_apps{namespace="team-b"} 1');
    expect(body).not.toContain("team-a");
  });
});
