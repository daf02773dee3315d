// Symbolic links in a Git repository served over smart HTTP, followed as a checkout follows
// them: a manifest that becomes a link stays applied, a Kustomize base reached through a link
// renders, and a link out of the repository is refused with its path while nothing is pruned.
import { mkdirSync, rmSync, symlinkSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createNodeEngines, type NodeEngines } from "../../src/engines/node.ts";
import { reconcileApp } from "../../src/reconcile/index.ts";
import { type GitServer, startGitServer, type TestRepo } from "../support/git-server.ts";
import {
  awayFromSlot,
  createApp,
  createNamespace,
  getApp,
  getObject,
  inventoryRefs,
  realPorts,
} from "./support.ts";

const NS = "links";
const APPS = NS; // an App deploys to its own namespace unless the cluster allows more

let git: GitServer;
let engines: NodeEngines;
beforeAll(async () => {
  git = await startGitServer();
  engines = createNodeEngines();
  await createNamespace(NS);
  await createNamespace(APPS);
});
afterAll(async () => {
  await engines?.close();
  await git?.stop();
});

const run = (name: string) =>
  reconcileApp({ namespace: APPS, name }, realPorts({ engines }), new Date());

async function newApp(name: string, repo: TestRepo, path: string): Promise<void> {
  const res = await createApp(APPS, name, {
    source: { git: { url: repo.url, ref: "main", path } },
    destination: { namespace: NS },
  });
  if (res.status !== 201) throw new Error(`create App: ${res.status} ${JSON.stringify(res.body)}`);
  await awayFromSlot(APPS, name);
}

/** Replaces `path` in the work clone with a link to `target`, commits and pushes it. */
async function link(repo: TestRepo, path: string, target: string): Promise<string> {
  const at = join(repo.workDir, path);
  rmSync(at, { force: true, recursive: true });
  mkdirSync(dirname(at), { recursive: true });
  symlinkSync(target, at);
  return repo.commit({}, `link ${path}`);
}

const configMap = (name: string, data: Record<string, string>) =>
  [
    "apiVersion: v1",
    "kind: ConfigMap",
    `metadata: {name: ${name}}`,
    "data:",
    ...Object.entries(data).map(([k, v]) => `  ${k}: "${v}"`),
    "",
  ].join("\n");

const data = async (name: string) =>
  (await getObject(`/api/v1/namespaces/${NS}/configmaps/${name}`))?.["data"];

describe("symlinks in a Git source", () => {
  it("a manifest that becomes a link is still applied; a link out of the repository is refused and nothing is pruned", async () => {
    const repo = await git.createRepo("links-manifests", {
      "app/settings.yaml": configMap("settings", { mode: "direct" }),
      "app/other.yaml": configMap("other", { a: "1" }),
      "common/settings.yaml": configMap("settings", { mode: "linked" }),
    });
    await newApp("manifests", repo, "app");
    expect(await run("manifests")).toMatchObject({
      outcome: "Reconciled",
      syncStatus: "Synced",
    });
    expect(await data("settings")).toEqual({ mode: "direct" });

    const linked = await link(repo, "app/settings.yaml", "../common/settings.yaml");
    expect(await repo.git("ls-tree", "HEAD", "app/settings.yaml")).toMatch(/^120000 /);
    expect(await run("manifests")).toMatchObject({
      outcome: "Reconciled",
      syncStatus: "Synced",
      revision: linked,
    });
    expect(await data("settings")).toEqual({ mode: "linked" });
    const before = await getApp(APPS, "manifests");
    expect(inventoryRefs(before)).toEqual([
      { apiVersion: "v1", kind: "ConfigMap", namespace: NS, name: "other" },
      { apiVersion: "v1", kind: "ConfigMap", namespace: NS, name: "settings" },
    ]);

    await link(repo, "app/other.yaml", "../../../etc/passwd");
    const refused = await run("manifests");
    expect(refused.outcome).toBe("Failed");
    const after = await getApp(APPS, "manifests");
    expect(after.status?.conditions?.find((c) => c.type === "Ready")).toMatchObject({
      status: "False",
      reason: "SourceFailed",
      message: expect.stringContaining(
        'symlink "app/other.yaml" points outside the repository ("../../../etc/passwd"); a link must resolve inside it',
      ),
    });
    expect(after.status?.inventory).toEqual(before.status?.inventory);
    expect(after.status?.revision).toBe(linked);
    expect(await data("other")).toEqual({ a: "1" });
    expect(await data("settings")).toEqual({ mode: "linked" });
  });

  it("a Kustomize overlay renders a base reached through a link to a directory", async () => {
    const repo = await git.createRepo("links-kustomize", {
      "bases/web/kustomization.yaml": "resources: [settings.yaml]\n",
      "bases/web/settings.yaml": configMap("base-settings", { from: "base" }),
      "overlay/kustomization.yaml": "namePrefix: dev-\nresources: [../base]\n",
    });
    const sha = await link(repo, "base", "bases/web");
    await newApp("kustomize", repo, "overlay");
    expect(await run("kustomize")).toMatchObject({
      outcome: "Reconciled",
      syncStatus: "Synced",
      revision: sha,
    });
    expect(await data("dev-base-settings")).toEqual({ from: "base" });
    expect(inventoryRefs(await getApp(APPS, "kustomize"))).toEqual([
      { apiVersion: "v1", kind: "ConfigMap", namespace: NS, name: "dev-base-settings" },
    ]);
  });

  it("a Helm chart reached through a directory link renders its templates, one of them a link too", async () => {
    const repo = await git.createRepo("links-helm", {
      "charts/web/Chart.yaml": "apiVersion: v2\nname: web\nversion: 1.0.0\n",
      "charts/web/values.yaml": "greeting: hello\n",
      "common/cm.yaml": [
        "apiVersion: v1",
        "kind: ConfigMap",
        "metadata: {name: {{ .Release.Name }}-settings}",
        "data: {greeting: {{ .Values.greeting | quote }}}",
        "",
      ].join("\n"),
    });
    await link(repo, "charts/web/templates/cm.yaml", "../../../common/cm.yaml");
    const sha = await link(repo, "deploy/web", "../charts/web");
    await newApp("helm", repo, "deploy/web");
    expect(await run("helm")).toMatchObject({
      outcome: "Reconciled",
      syncStatus: "Synced",
      revision: sha,
    });
    expect(await data("helm-settings")).toEqual({ greeting: "hello" });
    expect(inventoryRefs(await getApp(APPS, "helm"))).toEqual([
      { apiVersion: "v1", kind: "ConfigMap", namespace: NS, name: "helm-settings" },
    ]);
  });
});
