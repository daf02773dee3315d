// Golden files: each testdata/<case>.spec.yaml (an App name, cluster settings, pins and a
// spec.source.app) rendered through validation, renderApp and renderObjects must equal
// testdata/<case>.golden.yaml. After an intended change: UPDATE_GOLDEN=1 npx vitest run <this file>.
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { validateSpec } from "../../app/index.ts";
import { renderObjects } from "../render.ts";
import { imageRequests } from "./pins.ts";
import { type AppRenderInput, renderApp } from "./render-app.ts";

const dir = new URL("./testdata/", import.meta.url);
const update = process.env["UPDATE_GOLDEN"] === "1";

interface Case {
  app: string;
  namespace: string;
  settings: AppRenderInput["settings"];
  pins: AppRenderInput["pins"];
  source: unknown;
}

function render(file: string): string {
  const c = parse(readFileSync(new URL(file, dir), "utf8")) as Case;
  const spec = validateSpec({ source: { app: c.source } });
  if (!spec.ok) throw new Error(JSON.stringify(spec.error));
  const rendered = renderApp({
    app: c.app,
    source: spec.value.source.app!,
    pins: c.pins,
    settings: c.settings,
  });
  if (!rendered.ok) throw new Error(JSON.stringify(rendered.error));
  const objects = renderObjects(rendered.value, {
    appNamespace: c.namespace,
    appName: c.app,
    destinationNamespace: c.namespace,
    allowedNamespaces: [],
    scopes: new Map(),
  });
  if (!objects.ok) throw new Error(JSON.stringify(objects.error));
  return objects.value.map((o) => stringify(o, { lineWidth: 0 })).join("---\n");
}

const cases = readdirSync(dir)
  .filter((f) => f.endsWith(".spec.yaml"))
  .map((f) => f.slice(0, -".spec.yaml".length))
  .sort();

describe("renderApp golden files", () => {
  it("covers every kind of service, job and need", () => {
    expect(cases).toEqual(["cronjob", "needs", "web-domain-volume", "worker"]);
  });

  it.each(cases)("%s", (name) => {
    const got = render(`${name}.spec.yaml`);
    const golden = new URL(`${name}.golden.yaml`, dir);
    if (update) writeFileSync(golden, got);
    expect(got).toBe(readFileSync(golden, "utf8"));
    // Deterministic: a second render is byte-for-byte the same.
    expect(render(`${name}.spec.yaml`)).toBe(got);
  });
});

describe("renderApp", () => {
  const source = (app: unknown) => {
    const r = validateSpec({ source: { app } });
    if (!r.ok) throw new Error(JSON.stringify(r.error));
    return r.value.source.app!;
  };

  it("refuses an image with no pin and an App name too long for its needs, listing every issue", () => {
    const r = renderApp({
      app: "a-very-long-application-name-that-is-too-long-for-pg",
      source: source({
        needs: ["postgres"],
        services: [
          { name: "web", image: "r/web", tag: "~1.4", port: 80 },
          { name: "x", image: "r/x" },
        ],
        jobs: [{ name: "j", schedule: "@daily", image: "r/job" }],
      }),
      pins: [
        {
          repository: "r/web",
          tag: "1.3.0",
          digest: `sha256:${"a".repeat(64)}`,
        },
      ],
      settings: {},
    });
    expect(r.ok ? [] : r.error).toEqual([
      {
        code: "InvalidSpec",
        path: "metadata.name",
        message:
          "the App name is too long for needs: postgres (its objects are named a-very-long-application-name-that-is-too-long-for-pg-postgres, at most 52 characters)",
      },
      {
        code: "RenderError",
        path: "spec.source.app.services.0.tag",
        message: "no digest is pinned for r/web:~1.4",
      },
      {
        code: "RenderError",
        path: "spec.source.app.services.1.tag",
        message: "no digest is pinned for r/x:latest",
      },
      {
        code: "RenderError",
        path: "spec.source.app.jobs.0.tag",
        message: "no digest is pinned for r/job:latest",
      },
    ]);
  });

  it("a service or job named like a need's workload is refused", () => {
    const r = renderApp({
      app: "shop",
      source: source({
        needs: ["redis", "postgres"],
        services: [{ name: "shop-redis", image: "r/x" }],
        jobs: [{ name: "shop-postgres", schedule: "@daily", image: "r/x" }],
      }),
      pins: [{ repository: "r/x", tag: "latest", digest: `sha256:${"b".repeat(64)}` }],
      settings: {},
    });
    expect(r.ok ? [] : r.error).toEqual([
      {
        code: "InvalidSpec",
        path: "spec.source.app.services.0.name",
        message: '"shop-redis" is the name of a workload that needs: renders; choose another',
      },
      {
        code: "InvalidSpec",
        path: "spec.source.app.jobs.0.name",
        message: '"shop-postgres" is the name of a workload that needs: renders; choose another',
      },
    ]);
  });

  it("an image whose digest the spec gives renders as <image>@<digest>, only with that pin", () => {
    const d = `sha256:${"d".repeat(64)}`;
    const e = `sha256:${"e".repeat(64)}`;
    const spec = source({
      services: [{ name: "web", image: "registry.example.com/acme/web", tag: "1.0", digest: d }],
    });
    expect(imageRequests(spec)).toEqual([
      { repository: "registry.example.com/acme/web", tag: "1.0", digest: d },
    ]);
    const image = (digest: string) => {
      const r = renderApp({
        app: "shop",
        source: spec,
        pins: [{ repository: "registry.example.com/acme/web", tag: "1.0", digest }],
        settings: {},
      });
      if (!r.ok) return r.error.map((i) => i.message);
      const deploy = r.value.find((o) => o.object.kind === "Deployment")!.object as unknown as {
        spec: { template: { spec: { containers: Array<{ image: string }> } } };
      };
      return deploy.spec.template.spec.containers[0]!.image;
    };
    expect(image(d)).toBe(`registry.example.com/acme/web@${d}`);
    // A revision pinned to another digest (the spec's digest changed since): not rendered.
    expect(image(e)).toEqual(["no digest is pinned for registry.example.com/acme/web:1.0"]);
  });

  it("asks for each distinct image once, sorted", () => {
    expect(
      imageRequests(
        source({
          services: [
            { name: "web", image: "r/web", tag: "~1.4" },
            { name: "worker", image: "r/web", tag: "~1.4" },
            { name: "admin", image: "r/admin" },
          ],
          jobs: [
            { name: "j", schedule: "@daily", service: "web" },
            { name: "k", schedule: "@daily", image: "r/web", tag: "1.3.0" },
          ],
        }),
      ),
    ).toEqual([
      { repository: "r/admin", tag: "latest" },
      { repository: "r/web", tag: "1.3.0" },
      { repository: "r/web", tag: "~1.4" },
    ]);
  });
});
