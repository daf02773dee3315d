// `plumb diff` against the real control plane: what applying a revision, another ref or a
// local directory would create, change and prune, and proof that it writes nothing.
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { KubeObject } from "../../src/core/index.ts";
import {
  fixtureFiles,
  type GitServer,
  REAL_FIXTURES,
  startGitServer,
  type TestRepo,
} from "../support/git-server.ts";
import { createApp, createNamespace, getApp, getObject, kubeconfig } from "./support.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const run = promisify(execFile);
const NS = `diff-${Date.now().toString(36)}`;
const DEPLOYMENT = "guestbook-ui-deployment.yaml";
const IMAGE = "spec.template.spec.containers[name=guestbook-ui].image";
const FIRST_SECRET = "first-secret-value-7Qx9";
const SECOND_SECRET = "second-secret-value-Kp3m";

const secretYaml = (password: string) =>
  `apiVersion: v1\nkind: Secret\nmetadata: {name: db}\ntype: Opaque\nstringData: {password: ${password}, user: app}\n`;

async function plumb(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [
      join(ROOT, "functions/plumb.mjs"),
      ...args,
      "--kubeconfig",
      kubeconfig(),
    ]);
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/**
 * What a write would move: each object's resourceVersion and managedFields. The Deployment's
 * status is the controller-manager's to write at any time, so for it the generation and the
 * managedFields but its status entries stand in for the resourceVersion.
 */
async function writeMarks() {
  const out: Record<string, unknown> = {};
  for (const path of OBJECTS) {
    const obj = (await getObject(path)) as KubeObject | undefined;
    if (!obj) {
      out[path] = undefined;
      continue;
    }
    const {
      resourceVersion,
      generation,
      managedFields = [],
    } = obj.metadata as KubeObject["metadata"] & {
      generation?: number;
    };
    out[path] = path.includes("/deployments/")
      ? { generation, managedFields: managedFields.filter((m) => m.subresource !== "status") }
      : { resourceVersion, managedFields };
  }
  return out;
}

const OBJECTS = [
  `/apis/apps/v1/namespaces/${NS}/deployments/guestbook-ui`,
  `/api/v1/namespaces/${NS}/services/guestbook-ui`,
  `/api/v1/namespaces/${NS}/secrets/db`,
  `/apis/plumb.dev/v1alpha1/namespaces/${NS}/apps/web`,
];

let git: GitServer;
let repo: TestRepo;
let first: string;
let files: Record<string, string>;
beforeAll(async () => {
  git = await startGitServer();
  files = {
    ...fixtureFiles(join(REAL_FIXTURES, "guestbook")),
    "secret.yaml": secretYaml(FIRST_SECRET),
  };
  repo = await git.createRepo(NS, files);
  await createNamespace(NS);
  await createApp(NS, "web", { source: { git: { url: repo.url } } });
  const reconciled = await plumb("reconcile", `${NS}/web`);
  expect(reconciled.code, reconciled.stdout + reconciled.stderr).toBe(0);
  expect((await getApp(NS, "web")).status).toMatchObject({ syncStatus: "Synced" });
  first = await repo.head();
});
afterAll(async () => {
  await git?.stop();
});

describe("plumb diff", () => {
  it("exits 0 when applying the source would change nothing", async () => {
    const before = await writeMarks();
    const same = await plumb("diff", `${NS}/web`);
    expect(same.code, same.stderr).toBe(0);
    expect(same.stdout).toBe(`${NS}/web at ${first.slice(0, 7)}: no changes\n`);
    expect(await writeMarks()).toEqual(before);
  });

  it("after a commit: exits 1 with each changed field and both values, created and pruned objects, a Secret masked; writes nothing", async () => {
    const head = await repo.commit({
      [DEPLOYMENT]: files[DEPLOYMENT]!.replace(":v5", ":v6"),
      "guestbook-ui-svc.yaml": null,
      "secret.yaml": secretYaml(SECOND_SECRET),
      "cm.yaml":
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {mode: fast}\n",
    });
    const before = await writeMarks();

    const text = await plumb("diff", `${NS}/web`);
    expect(text.code, text.stderr).toBe(1);
    const out = text.stdout;
    expect(out.split("\n")[0]).toBe(
      `${NS}/web at ${head.slice(0, 7)}: 1 to create, 2 to change, 1 to prune`,
    );
    // The Deployment: one hunk, the image line from live to desired.
    expect(out).toContain(
      [
        `--- a/apps/v1/Deployment/${NS}/guestbook-ui`,
        `+++ b/apps/v1/Deployment/${NS}/guestbook-ui`,
      ].join("\n"),
    );
    expect(out).toContain(
      "-        - image: gcr.io/google-samples/gb-frontend:v5\n+        - image: gcr.io/google-samples/gb-frontend:v6\n",
    );
    // Created and pruned objects diff against /dev/null.
    expect(out).toMatch(
      new RegExp(
        `--- /dev/null\n\\+\\+\\+ b/v1/ConfigMap/${NS}/settings\n@@ -0,0 \\+1,\\d+ @@\n\\+apiVersion: v1\n\\+kind: ConfigMap\n(\\+.*\n)*\\+data:\n\\+  mode: fast\n`,
      ),
    );
    expect(out).toContain(`--- a/v1/Service/${NS}/guestbook-ui\n+++ /dev/null\n`);
    // The Secret: which key changed, never a value (plain or base64).
    expect(out).toContain("-  password: ++++++++\n+  password: ++++++++++++\n");
    expect(out).toContain("   user: ++++++++\n");
    for (const secret of [FIRST_SECRET, SECOND_SECRET]) {
      expect(out).not.toContain(secret);
      expect(out).not.toContain(Buffer.from(secret).toString("base64"));
    }

    const json = await plumb("diff", `${NS}/web`, "-o", "json");
    expect(json.code, json.stderr).toBe(1);
    const report = JSON.parse(json.stdout) as {
      changed: boolean;
      revision: string;
      counts: Record<string, number>;
      objects: Array<Record<string, unknown>>;
    };
    expect(report).toMatchObject({
      app: `${NS}/web`,
      revision: head,
      changed: true,
      counts: { create: 1, change: 2, prune: 1, fail: 0 },
    });
    const of = (kind: string) => report.objects.find((o) => o["kind"] === kind);
    expect(of("Deployment")).toMatchObject({
      action: "change",
      fields: [
        {
          path: IMAGE,
          live: "gcr.io/google-samples/gb-frontend:v5",
          desired: "gcr.io/google-samples/gb-frontend:v6",
        },
      ],
    });
    expect(of("Secret")).toMatchObject({ action: "change", fields: [{ path: "data.password" }] });
    expect(of("Secret")?.["fields"]).toEqual([{ path: "data.password" }]);
    expect(of("ConfigMap")).toMatchObject({ action: "create", name: "settings" });
    expect(of("Service")).toMatchObject({ action: "prune", name: "guestbook-ui" });
    for (const secret of [FIRST_SECRET, SECOND_SECRET]) {
      expect(json.stdout).not.toContain(secret);
      expect(json.stdout).not.toContain(Buffer.from(secret).toString("base64"));
    }

    // Nothing was written: no object, no status, no finalizer moved; the ConfigMap not created.
    expect(await writeMarks()).toEqual(before);
    expect(await getObject(`/api/v1/namespaces/${NS}/configmaps/settings`)).toBeUndefined();

    // --revision: the commit the App was synced at changes nothing.
    const old = await plumb("diff", `${NS}/web`, "--revision", first);
    expect(old.code, old.stderr).toBe(0);
    expect(old.stdout).toBe(`${NS}/web at ${first.slice(0, 7)}: no changes\n`);
  });

  it("--path renders a local directory in place of the App's path", async () => {
    const dir = mkdtempSync(join(tmpdir(), "plumb-diff-"));
    try {
      for (const [name, content] of Object.entries(files)) {
        writeFileSync(
          join(dir, name),
          name === DEPLOYMENT
            ? content.replace(":v5", ":v7").replace("replicas: 1", "replicas: 3")
            : content,
        );
      }
      const before = await writeMarks();
      const local = await plumb("diff", `${NS}/web`, "--path", dir, "-o", "json");
      expect(local.code, local.stderr).toBe(1);
      const report = JSON.parse(local.stdout) as { revision: string; objects: unknown[] };
      expect(report.revision).toBe(`local:${dir}`);
      expect(report.objects).toEqual([
        expect.objectContaining({
          action: "change",
          kind: "Deployment",
          fields: [
            { path: "spec.replicas", live: "1", desired: "3" },
            {
              path: IMAGE,
              live: "gcr.io/google-samples/gb-frontend:v5",
              desired: "gcr.io/google-samples/gb-frontend:v7",
            },
          ],
        }),
      ]);
      expect(await writeMarks()).toEqual(before);

      const missing = await plumb("diff", `${NS}/web`, "--path", join(dir, "nosuch"));
      expect(missing.code).toBe(2);
      expect(missing.stderr).toContain(`--path ${join(dir, "nosuch")}: not a directory`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("--path renders a Kustomize overlay whose base sits in the same working tree", async () => {
    const ns = `${NS}-k`;
    const tree = (mode: string) => ({
      "base/kustomization.yaml": "resources: [cm.yaml]\n",
      "base/cm.yaml": `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {mode: ${mode}}\n`,
      "overlay/kustomization.yaml": "resources: [../base]\ncommonLabels: {tier: web}\n",
    });
    const kustomized = await git.createRepo(ns, tree("slow"));
    await createNamespace(ns);
    await createApp(ns, "web", { source: { git: { url: kustomized.url, path: "overlay" } } });
    const reconciled = await plumb("reconcile", `${ns}/web`);
    expect(reconciled.code, reconciled.stdout + reconciled.stderr).toBe(0);
    const unchanged = await plumb("diff", `${ns}/web`);
    expect(unchanged.code, unchanged.stderr).toBe(0);

    const dir = mkdtempSync(join(tmpdir(), "plumb-diff-k-"));
    try {
      mkdirSync(join(dir, ".git"));
      for (const [path, content] of Object.entries(tree("fast"))) {
        mkdirSync(join(dir, path, ".."), { recursive: true });
        writeFileSync(join(dir, path), content);
      }
      const local = await plumb("diff", `${ns}/web`, "--path", join(dir, "overlay"), "-o", "json");
      expect(local.code, local.stderr).toBe(1);
      const report = JSON.parse(local.stdout) as { objects: unknown[] };
      expect(report.objects).toEqual([
        expect.objectContaining({
          action: "change",
          kind: "ConfigMap",
          name: "settings",
          fields: [{ path: "data.mode", live: "slow", desired: "fast" }],
        }),
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("exits 2 on a missing App, with a clear message", async () => {
    const missing = await plumb("diff", `${NS}/nosuch`);
    expect(missing.code).toBe(2);
    expect(missing.stdout).toBe("");
    expect(missing.stderr).toBe(`plumb: diff of ${NS}/nosuch: App ${NS}/nosuch not found\n`);
  });
});
