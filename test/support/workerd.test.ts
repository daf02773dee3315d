// startWorkerd on a Worker that does not build: it fails with wrangler's own error instead of
// waiting out the wait limit for a /healthz that never answers. Real wrangler dev, no cluster:
// the build fails before the Worker would reach the API server.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWorkerd } from "./workerd.ts";

let dir: string;
let kubeconfig: string;

/** A wrangler configuration in `dir` for the Worker `main`, with `extra` lines. */
function config(name: string, main: string, source: string, extra = ""): string {
  writeFileSync(join(dir, main), source);
  const file = join(dir, `${name}.toml`);
  writeFileSync(
    file,
    `name = "${name}"\nmain = "${main}"\ncompatibility_date = "2026-11-01"\n${extra}`,
  );
  return file;
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "plumb-workerd-test-"));
  // The layout test/cluster writes (kubeconfig, token, ca.crt); nothing listens at the server.
  kubeconfig = join(dir, "kubeconfig");
  writeFileSync(kubeconfig, "clusters:\n  - cluster:\n      server: https://127.0.0.1:9\n");
  writeFileSync(join(dir, "token"), "unused-token\n");
  writeFileSync(join(dir, "ca.crt"), "");
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("startWorkerd", () => {
  it("rejects with the bundler's error when the Worker's entry does not build", async () => {
    const broken = config(
      "unresolved",
      "unresolved.ts",
      'import { value } from "./missing.ts";\nexport default { fetch: () => new Response(String(value)) };\n',
    );
    const err = await startWorkerd(kubeconfig, {}, { configs: [broken] }).then(
      () => new Error("started"),
      (e: unknown) => e as Error,
    );
    expect(err.message).toMatch(/^wrangler dev: the Worker's build failed\n/);
    expect(err.message).toContain('Could not resolve "./missing.ts"');
  });

  it("rejects when the build command fails and wrangler exits", async () => {
    const failing = config(
      "failing-build",
      "ok.ts",
      'export default { fetch: () => new Response("ok") };\n',
      '[build]\ncommand = "echo engine build broke; exit 3"\n',
    );
    const err = await startWorkerd(kubeconfig, {}, { configs: [failing] }).then(
      () => new Error("started"),
      (e: unknown) => e as Error,
    );
    expect(err.message).toMatch(/^wrangler dev: the Worker's build failed|^wrangler dev exited/);
    expect(err.message).toContain("engine build broke");
    expect(err.message).toContain("Running custom build `echo engine build broke; exit 3` failed");
  });
});
