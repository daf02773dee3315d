// The CLI as an operator runs it: JSON lines, exit codes, due Apps only unless --force.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  fixtureFiles,
  type GitServer,
  REAL_FIXTURES,
  startGitServer,
} from "../support/git-server.ts";
import {
  awayFromSlot,
  createApp,
  createNamespace,
  getApp,
  getObject,
  kubeconfig,
} from "./support.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const run = promisify(execFile);

async function plumb(
  ...args: string[]
): Promise<{ code: number; lines: Array<Record<string, unknown>>; stderr: string }> {
  return plumbWith({}, ...args);
}

/** `plumb ARGS` with `env` added to this process's environment. */
async function plumbWith(
  env: Record<string, string>,
  ...args: string[]
): Promise<{ code: number; lines: Array<Record<string, unknown>>; stderr: string }> {
  try {
    const { stdout, stderr } = await run(
      process.execPath,
      [join(ROOT, "functions/plumb.mjs"), ...args, "--kubeconfig", kubeconfig()],
      // NODE_DEBUG=esm writes more than execFile's default 1 MiB of stderr.
      { env: { ...process.env, ...env }, maxBuffer: 64 * 1024 * 1024 },
    );
    return {
      code: 0,
      lines: stdout
        .trim()
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l)),
      stderr,
    };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return {
      code: e.code,
      lines: e.stdout
        .trim()
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l)),
      stderr: e.stderr,
    };
  }
}

let git: GitServer;
beforeAll(async () => {
  git = await startGitServer();
});
afterAll(async () => {
  await git?.stop();
});

describe("plumb CLI", () => {
  it("reconcile NS/NAME prints one JSON line with the run's outcome and requests by verb", async () => {
    const repo = await git.createRepo("cli", fixtureFiles(join(REAL_FIXTURES, "guestbook")));
    await createNamespace("cli");
    await createApp("cli", "good", { source: { git: { url: repo.url } } });
    const r = await plumb("reconcile", "cli/good");
    expect(r.code).toBe(0);
    expect(r.lines).toHaveLength(1);
    expect(r.lines[0]).toMatchObject({
      app: "cli/good",
      outcome: "Reconciled",
      syncStatus: "Synced",
      revision: await repo.head(),
    });
    expect(Object.keys(r.lines[0]?.["requests"] as object).sort()).toEqual([
      "create",
      "delete",
      "get",
      "list",
      "patch",
      "update",
    ]);
  });

  it("renders a Kustomize overlay and a Helm chart from the bundled CLI, with the native helpers it finds in dist/engines", async () => {
    const repo = await git.createRepo("cli-engines", {
      ...Object.fromEntries(
        Object.entries(fixtureFiles(join(REAL_FIXTURES, "helm-guestbook"))).map(([p, c]) => [
          `chart/${p}`,
          c,
        ]),
      ),
      "base/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {a: b}\n",
      "base/kustomization.yaml": "resources: [cm.yaml]\n",
      "overlay/kustomization.yaml": "resources: [../base]\nnamePrefix: prod-\n",
    });
    await createNamespace("cli-engines");
    await createApp("cli-engines", "kz", {
      source: { git: { url: repo.url, path: "overlay" } },
    });
    await createApp("cli-engines", "chart", { source: { git: { url: repo.url, path: "chart" } } });
    for (const name of ["kz", "chart"]) {
      // As a new user runs it: no PLUMB_ENGINES_DIR, the bundle (not the sources) running.
      const r = await plumbWith({ PLUMB_ENGINES_DIR: "" }, "reconcile", `cli-engines/${name}`);
      expect(r.lines[0], r.stderr).toMatchObject({ outcome: "Reconciled", syncStatus: "Synced" });
      expect(r.code).toBe(0);
      expect(r.stderr).not.toContain("running from source");
    }
    expect(
      await getObject("/api/v1/namespaces/cli-engines/configmaps/prod-settings"),
    ).toBeDefined();

    // Engines that are not built: a transient failure saying how to build them; nothing pruned.
    const empty = mkdtempSync(join(tmpdir(), "plumb-no-engines-"));
    try {
      const before = (await getApp("cli-engines", "kz")).status!;
      const r = await plumbWith({ PLUMB_ENGINES_DIR: empty }, "reconcile", "cli-engines/kz");
      expect(r.code).toBe(1);
      expect(r.lines[0]).toMatchObject({
        outcome: "Failed",
        error: `RenderFailed: overlay: engine unavailable: the Kustomize engine is not built (no plumb-kustomize in ${empty}): run \`npm run build:engines\` (needs Go >= 1.26)`,
      });
      const after = (await getApp("cli-engines", "kz")).status!;
      expect(after.conditions?.find((c) => c.type === "Stalled")).toMatchObject({
        status: "False",
        message: "transient; retrying with backoff",
      });
      expect(after.inventory).toEqual(before.inventory);
      expect(
        await getObject("/api/v1/namespaces/cli-engines/configmaps/prod-settings"),
      ).toBeDefined();
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
    // PLUMB_RENDER_TIMEOUT is a duration, checked at start-up.
    const bad = await plumbWith({ PLUMB_RENDER_TIMEOUT: "soon" }, "reconcile", "cli-engines/kz");
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain(
      'PLUMB_RENDER_TIMEOUT: must be a duration such as \\"15s\\" or \\"1m\\"',
    );
  });

  it("reconcile --all runs the due Apps, prints Skipped for the others, and exits 1 when one failed", async () => {
    await createNamespace("cli-all");
    await createApp("cli-all", "broken", {
      source: { git: { url: "http://127.0.0.1:9/nothing.git" } },
    });
    const r = await plumb("reconcile", "--all", "--namespace", "cli-all");
    expect(r.code).toBe(1);
    expect(r.lines).toEqual([
      expect.objectContaining({
        app: "cli-all/broken",
        outcome: "Failed",
        error: expect.stringMatching(/^SourceFailed: /),
      }),
    ]);
    // An App reconciled, healthy and whose slot is not near: Skipped, with its next run.
    const repo = await git.createRepo("cli-steady", {
      "cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: steady}\n",
    });
    await createNamespace("cli-steady");
    await createApp("cli-steady", "steady", { source: { git: { url: repo.url } } });
    await awayFromSlot("cli-steady", "steady");
    expect((await plumb("reconcile", "cli-steady/steady")).code).toBe(0);
    // NODE_DEBUG=esm names every module file Node loads: the bundle's lazily loaded entries
    // are named after their source (cli-tick-<hash>.js, node-ports-<hash>.js, reconcile-...).
    const loaded = (stderr: string) =>
      [...stderr.matchAll(/dist\/cli\/[^/]+\/([a-z-]+)-[A-Z0-9]+\.js/g)].map((m) => m[1]);
    const good = await plumbWith(
      { NODE_DEBUG: "esm" },
      "reconcile",
      "--all",
      "--namespace",
      "cli-steady",
    );
    // Nothing due: the list of Apps only, not the reconcile loop, its Git client or engines.
    expect(loaded(good.stderr)).toContain("cli-tick");
    expect(loaded(good.stderr)).not.toContain("node-ports");
    expect(loaded(good.stderr)).not.toContain("reconcile");
    expect(good.lines).toEqual([
      expect.objectContaining({
        app: "cli-steady/steady",
        outcome: "Skipped",
        syncStatus: "Synced",
        healthStatus: "Healthy",
        revision: await repo.head(),
        nextReconcileAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      }),
    ]);
    expect(Date.parse(good.lines[0]?.["nextReconcileAt"] as string)).toBeGreaterThan(
      Date.now() + 600_000,
    );
    expect(good.code).toBe(0);
    const forced = await plumbWith(
      { NODE_DEBUG: "esm" },
      "reconcile",
      "--all",
      "--force",
      "--namespace",
      "cli-steady",
    );
    expect(loaded(forced.stderr)).toEqual(expect.arrayContaining(["node-ports", "reconcile"]));
    expect(forced.lines).toEqual([
      expect.objectContaining({ app: "cli-steady/steady", outcome: "Reconciled" }),
    ]);
    // The forced run found nothing new: it wrote nothing.
    const requests = forced.lines[0]?.["requests"] as Record<string, number>;
    expect([requests["update"], requests["patch"], requests["create"]]).toEqual([0, 0, 0]);
  });

  it("never prints a rendered Secret's value that the API server echoes in its error", async () => {
    // A number where a string belongs: server-side apply refuses it and quotes the value.
    const secret = [
      "apiVersion: v1",
      "kind: Secret",
      "metadata: {name: api}",
      "stringData: {token: 8675309123, nested: {deeper: s3cr3t-in-a-map}}",
    ].join("\n");
    const repo = await git.createRepo("cli-secret", { "secret.yaml": secret });
    await createNamespace("cli-secret");
    await createApp("cli-secret", "leaky", { source: { git: { url: repo.url } } });
    const r = await plumb("reconcile", "cli-secret/leaky");
    expect(r.code).toBe(1);
    expect(r.lines).toEqual([
      expect.objectContaining({
        outcome: "Failed",
        error: expect.stringContaining(".stringData.token: expected string"),
      }),
    ]);
    expect(r.lines[0]?.["error"]).toContain("[redacted]");
    expect(JSON.stringify(r)).not.toMatch(/8675309123|s3cr3t-in-a-map/);
  });

  it("exits 1 with an error naming an App that does not exist", async () => {
    await createNamespace("cli");
    const r = await plumb("reconcile", "cli/nosuch");
    expect(r.code).toBe(1);
    expect(r.lines).toEqual([
      expect.objectContaining({
        app: "cli/nosuch",
        outcome: "NotFound",
        error: "App cli/nosuch not found",
      }),
    ]);
  });

  it("refuses a malformed target with usage and exit code 2", async () => {
    const r = await plumb("reconcile", "Not/A/Ref");
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('expected NAME or NAMESPACE/NAME, got "Not/A/Ref"');
  });
});
