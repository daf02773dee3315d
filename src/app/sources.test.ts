import { describe, expect, it } from "vitest";
import { SOURCE_KIND_NAMES } from "./schema.ts";
import { describeSource } from "./sources.ts";

describe("describeSource", () => {
  it("describes every source kind", () => {
    const cases: Record<(typeof SOURCE_KIND_NAMES)[number], [unknown, unknown]> = {
      git: [
        { git: { url: "https://git.example.com/org/web.git", ref: "main", path: "deploy" } },
        { type: "git", location: "https://git.example.com/org/web.git", ref: "main" },
      ],
      image: [
        { image: { repository: "registry.example.com/org/web", tag: "1.4" } },
        { type: "image", location: "registry.example.com/org/web", ref: "1.4" },
      ],
      app: [
        {
          app: {
            services: [
              { name: "web", image: "registry.example.com/org/web", tag: "^1.2" },
              { name: "worker", image: "registry.example.com/org/web", tag: "^1.2" },
            ],
            jobs: [{ name: "nightly", image: "registry.example.com/org/job" }, { service: "web" }],
          },
        },
        {
          type: "app",
          location: "registry.example.com/org/web, registry.example.com/org/job",
          ref: "^1.2, latest",
        },
      ],
      chart: [
        { chart: { repository: "https://charts.example.com/", name: "podinfo", version: "6.x" } },
        { type: "chart", location: "https://charts.example.com/podinfo", ref: "6.x" },
      ],
    };
    for (const kind of SOURCE_KIND_NAMES) {
      const [source, described] = cases[kind];
      expect(describeSource({ source }), kind).toEqual(described);
    }
  });

  it("gives each kind's default ref when the spec leaves it out", () => {
    expect(describeSource({ source: { git: { url: "https://g.example/r.git" } } }).ref).toBe(
      "HEAD",
    );
    expect(describeSource({ source: { image: { repository: "r.example/w" } } }).ref).toBe("latest");
    const chart = { chart: { repository: "oci://r.example/charts", name: "podinfo" } };
    expect(describeSource({ source: chart })).toEqual({
      type: "chart",
      location: "oci://r.example/charts/podinfo",
      ref: "*",
    });
  });

  it("never shows credentials a location carries", () => {
    const git = { git: { url: "https://deploy:s3cr3t@git.example.com/org/web.git?token=t#x" } };
    expect(describeSource({ source: git }).location).toBe("https://git.example.com/org/web.git");
    const image = { image: { repository: "robot:s3cr3t@registry.example.com/org/web" } };
    expect(describeSource({ source: image }).location).toBe("registry.example.com/org/web");
    const chart = { chart: { repository: "oci://u:s3cr3t@r.example/charts", name: "c" } };
    expect(describeSource({ source: chart }).location).toBe("oci://r.example/charts/c");
  });

  it("is unknown for a spec without a usable source", () => {
    const unknown = { type: "unknown", location: "", ref: "" };
    expect(describeSource(undefined)).toEqual(unknown);
    expect(describeSource({ source: {} })).toEqual(unknown);
    expect(describeSource({ source: { git: { url: 42 } } })).toEqual(unknown);
    expect(describeSource({ source: { chart: { repository: "https://c.example" } } })).toEqual(
      unknown,
    );
    expect(describeSource({ source: { app: { services: [] } } })).toEqual(unknown);
  });
});
