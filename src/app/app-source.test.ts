import { describe, expect, it } from "vitest";
import { appCrd } from "./crd.ts";
import { validateSpec } from "./validate.ts";

const valid = {
  services: [
    { name: "web", image: "registry.example.com/org/web", tag: "~1.4", port: 8080 },
    { name: "worker", image: "registry.example.com/org/web", command: ["work"] },
  ],
  jobs: [{ name: "nightly", schedule: "0 3 * * *", service: "web", command: ["report"] }],
  needs: ["postgres"],
};

function issues(app: unknown) {
  const r = validateSpec({ source: { app } });
  return r.ok ? [] : r.error.map(({ path, message }) => ({ path, message }));
}

describe("spec.source.app", () => {
  it("accepts a service spec and fills its defaults", () => {
    const r = validateSpec({ source: { app: valid } });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const [web, worker] = r.value.source.app!.services;
    expect(web).toMatchObject({ tag: "~1.4", replicas: 1, size: "small", port: 8080 });
    expect(worker).toMatchObject({ tag: "latest", replicas: 1 });
    expect(worker!.port).toBeUndefined();
    expect(r.value.source.app!.jobs[0]).toMatchObject({ concurrencyPolicy: "Forbid" });
    expect(r.value.source.app!.jobs[0]!.tag).toBeUndefined();
  });

  it("refuses what cannot be rendered, each with its path", () => {
    expect(
      issues({
        services: [
          { name: "Web", image: "r/web" },
          { name: "api", image: "r/api", domains: ["api.example.com"] },
          { name: "db", image: "r/db", port: 5432, replicas: 2, volume: { path: "/data" } },
          { name: "x", image: "r/x", tag: ">=", liveness: { path: "/live" } },
          { name: "y", image: "r/y", tag: "a:b" },
          { name: "z", image: "r/z", port: 80, env: { "A=B": "1" } },
        ],
        jobs: [
          { name: "j", schedule: "daily", image: "r/j" },
          { name: "k", schedule: "@daily" },
          { name: "l", schedule: "@daily", service: "nope" },
        ],
        needs: ["mysql"],
      }),
    ).toEqual([
      {
        path: "spec.source.app.services.0.name",
        message: "must be a lower-case RFC 1035 label (a-z, 0-9, '-', starting with a letter)",
      },
      { path: "spec.source.app.services.1.domains", message: "domains need a port" },
      {
        path: "spec.source.app.services.2.replicas",
        message: "a service with a volume runs at most 1 replica (a ReadWriteOnce volume)",
      },
      {
        path: "spec.source.app.services.3.tag",
        message:
          "must be a tag ([a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}) or a semver range such as ~1.4 or >=2 <3",
      },
      { path: "spec.source.app.services.3.liveness", message: "a liveness check needs a port" },
      {
        path: "spec.source.app.services.4.tag",
        message:
          "must be a tag ([a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}) or a semver range such as ~1.4 or >=2 <3",
      },
      {
        path: "spec.source.app.services.5.env.A=B",
        message: "must be an environment variable name",
      },
      {
        path: "spec.source.app.jobs.0.schedule",
        message: "must be a cron schedule (five fields) or a macro such as @daily",
      },
      { path: "spec.source.app.jobs.1", message: "exactly one of service and image must be set" },
      {
        path: "spec.source.app.needs.0",
        message: 'Invalid option: expected one of "postgres"|"redis"',
      },
    ]);
  });

  it("takes a digest with a tag (used as it is), never with a range or beside a job's service", () => {
    const d = `sha256:${"d".repeat(64)}`;
    expect(
      issues({
        services: [{ name: "web", image: "r/web", tag: "1.0", digest: d }],
        jobs: [{ name: "j", schedule: "@daily", image: "r/job", digest: d }],
      }),
    ).toEqual([]);
    expect(
      issues({
        services: [
          { name: "web", image: "r/web", tag: "~1.4", digest: d },
          { name: "api", image: "r/api", digest: "sha256:ABC" },
        ],
        jobs: [{ name: "j", schedule: "@daily", service: "web", digest: d }],
      }).map((i) => `${i.path}: ${i.message}`),
    ).toEqual([
      "spec.source.app.services.0.tag: a digest pins one image: give a tag, not a semver range, with it",
      "spec.source.app.services.1.digest: must be a manifest digest: sha256: and 64 lower-case hex digits",
      "spec.source.app.jobs.0.digest: digest pins the job's own image: set image with it (a service's digest is its own)",
    ]);
  });

  it("refuses duplicates, a job naming no service, one domain on two services, an empty app", () => {
    expect(
      issues({
        services: [
          { name: "web", image: "r/web", port: 80, domains: ["a.example.com"] },
          { name: "web", image: "r/web", port: 80 },
          { name: "api", image: "r/api", port: 80, domains: ["a.example.com"] },
        ],
        jobs: [
          { name: "j", schedule: "@daily", service: "nope" },
          { name: "api", schedule: "@daily", service: "web" },
        ],
        needs: ["redis", "redis"],
      }).map((i) => `${i.path}: ${i.message}`),
    ).toEqual([
      "spec.source.app.services.1.name: duplicate name",
      'spec.source.app.jobs.0.service: no service named "nope"',
      "spec.source.app.jobs.1.name: a service has this name; a job needs one of its own",
      "spec.source.app.needs: duplicate need",
      "spec.source.app.services: domain a.example.com is served by both web and api",
    ]);
    expect(issues({})).toEqual([
      { path: "spec.source.app", message: "declare at least one service or job" },
    ]);
  });

  it("is one of exactly one source", () => {
    expect(validateSpec({ source: { app: valid, image: { repository: "r/web" } } }).ok).toBe(false);
  });

  it("its patterns are RE2 (the API server refuses lookarounds and backreferences)", () => {
    const patterns = [...JSON.stringify(appCrd()).matchAll(/"pattern":"((?:[^"\\]|\\.)*)"/g)];
    expect(patterns.length).toBeGreaterThan(10);
    for (const [, p] of patterns) expect(p).not.toMatch(/\(\?[=!<]|\\[1-9]/);
  });

  it("every field has a description for kubectl explain", () => {
    const missing: string[] = [];
    const walk = (node: unknown, at: string) => {
      if (node === null || typeof node !== "object") return;
      const n = node as Record<string, unknown>;
      const props = n["properties"] as Record<string, Record<string, unknown>> | undefined;
      for (const [key, sub] of Object.entries(props ?? {})) {
        if (typeof sub["description"] !== "string" || sub["description"] === "")
          missing.push(`${at}.${key}`);
        walk(sub, `${at}.${key}`);
      }
      walk(n["items"], `${at}[]`);
      walk(n["additionalProperties"], `${at}{}`);
    };
    const crd = appCrd() as {
      spec: { versions: Array<{ schema: { openAPIV3Schema: unknown } }> };
    };
    const root = crd.spec.versions[0]!.schema.openAPIV3Schema as {
      properties: { spec: { properties: { source: { properties: { app: unknown } } } } };
    };
    const app = root.properties.spec.properties.source.properties.app;
    walk(app, "spec.source.app");
    expect(missing).toEqual([]);
    expect((app as { description?: string }).description).toContain("service spec");
  });
});
