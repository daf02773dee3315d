// Golden files: what an image source renders to, exactly (STYLE.md "Rendered output").
// Run `UPDATE_GOLDEN=1 npx vitest run src/render/image.test.ts` to rewrite them, then review
// the diff: each file must be what a user expects their spec to become.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { ImageSource } from "../app/index.ts";
import { renderImage } from "./image.ts";

const DIGEST = `sha256:${"0123456789abcdef".repeat(4)}`;
const UPDATE = process.env["UPDATE_GOLDEN"] === "1";

/** Each case: App name, spec.source.image as a user writes it (defaults filled by the schema). */
const cases: Array<{ name: string; app: string; image: Record<string, unknown> }> = [
  {
    name: "minimal",
    app: "web",
    image: { repository: "registry.example.com/org/web" },
  },
  {
    name: "full",
    app: "shop",
    image: {
      repository: "ghcr.io/acme/shop",
      tag: "1.4.2",
      port: 3000,
      replicas: 3,
      env: { LOG_LEVEL: "info", WORKERS: "4", DEBUG: "false", DATABASE_HOST: "db.shop.svc" },
      healthCheck: { path: "/healthz" },
      domain: "shop.example.com",
    },
  },
  {
    name: "probe-default-path-no-env",
    app: "api",
    image: { repository: "api", env: {}, healthCheck: {}, replicas: 0 },
  },
];

/** The rendered set as one multi-document YAML file, with each object's origin as a comment. */
function toYaml(app: string, image: Record<string, unknown>): string {
  return renderImage(app, ImageSource.parse(image), DIGEST)
    .map(
      ({ object, origin }) =>
        `# origin: ${origin}\n${stringify(object, { lineWidth: 0, aliasDuplicateObjects: false })}`,
    )
    .join("---\n");
}

describe("renderImage (golden files in src/render/testdata)", () => {
  it.each(cases)("$name", ({ name, app, image }) => {
    const file = new URL(`./testdata/image-${name}.golden.yaml`, import.meta.url);
    const got = toYaml(app, image);
    if (UPDATE) writeFileSync(file, got);
    expect(existsSync(file), `missing ${file.pathname}: run with UPDATE_GOLDEN=1`).toBe(true);
    expect(got).toBe(readFileSync(file, "utf8"));
  });

  it("is deterministic: env order in the spec does not change the render", () => {
    const a = toYaml("web", { repository: "web", env: { B: "2", A: "1" } });
    const b = toYaml("web", { repository: "web", env: { A: "1", B: "2" } });
    expect(a).toBe(b);
  });
});
