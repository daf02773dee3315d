// A configMapGenerator's old hash-suffixed ConfigMap outlives the rollout away from it: kept in
// the inventory as pending prune while the old ReplicaSet's Pods still mount it, pruned by the
// first run after the new ReplicaSet is available. The rollout is held by pausing the
// Deployment (another field manager's field plumb never applies), so each step is decided by
// the test, not by how fast the controllers are.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { App } from "../../src/app/index.ts";
import type { KubeObject } from "../../src/core/index.ts";
import { createNodeEngines, type NodeEngines } from "../../src/engines/node.ts";
import { reconcileApp } from "../../src/reconcile/index.ts";
import { type GitServer, startGitServer, type TestRepo } from "../support/git-server.ts";
import {
  api,
  awayFromSlot,
  createApp,
  createNamespace,
  getApp,
  inventoryRefs,
  realPorts,
  waitFor,
} from "./support.ts";

const NS = "rollout-prune";
const APPS = NS; // an App deploys to its own namespace unless the cluster allows more

let git: GitServer;
let engines: NodeEngines;
let repo: TestRepo;
beforeAll(async () => {
  git = await startGitServer();
  engines = createNodeEngines();
  repo = await git.createRepo("rollout", {
    "app/kustomization.yaml": [
      `namespace: ${NS}`,
      "resources: [deployment.yaml]",
      "configMapGenerator:",
      "  - name: web-config",
      "    literals: [greeting=hello]",
      "",
    ].join("\n"),
    "app/deployment.yaml": [
      "apiVersion: apps/v1",
      "kind: Deployment",
      "metadata: {name: web}",
      "spec:",
      "  replicas: 1",
      "  selector: {matchLabels: {app: web}}",
      "  template:",
      "    metadata: {labels: {app: web}}",
      "    spec:",
      "      containers:",
      "        - name: web",
      "          image: nginx:1.27",
      "          envFrom: [{configMapRef: {name: web-config}}]",
      "      volumes:",
      "        - name: config",
      "          configMap: {name: web-config}",
      "",
    ].join("\n"),
  });
  await createNamespace(NS);
  await createNamespace(APPS);
  const res = await createApp(APPS, "web", {
    source: { git: { url: repo.url, ref: "main", path: "app" } },
    destination: { namespace: NS },
  });
  if (res.status !== 201) throw new Error(`create App: ${res.status} ${JSON.stringify(res.body)}`);
  await awayFromSlot(APPS, "web");
});
afterAll(async () => {
  await engines?.close();
  await git?.stop();
});

const run = () =>
  reconcileApp({ namespace: APPS, name: "web" }, realPorts({ engines }), new Date());

async function list(path: string): Promise<KubeObject[]> {
  return ((await api("GET", path)) as { items: KubeObject[] }).items;
}
const configMaps = async () =>
  (await list(`/api/v1/namespaces/${NS}/configmaps`))
    .map((c) => c.metadata.name)
    .filter((n) => n.startsWith("web-config-"))
    .sort();

type Spec = {
  replicas?: number;
  template: { spec: { volumes: Array<{ configMap: { name: string } }> } };
};
type ReplicaSet = KubeObject & {
  spec: Spec;
  status?: { replicas?: number; availableReplicas?: number };
};
const replicaSets = async () =>
  (await list(`/apis/apps/v1/namespaces/${NS}/replicasets`)) as ReplicaSet[];
const mounted = (rs: ReplicaSet) => rs.spec.template.spec.volumes[0]?.configMap.name;

/** The ReplicaSet whose template mounts `config`, once it has all its replicas available. */
async function availableFor(config: string): Promise<ReplicaSet | undefined> {
  const rs = (await replicaSets()).find((r) => mounted(r) === config);
  return rs && rs.status?.availableReplicas === 1 ? rs : undefined;
}

const pausing = (paused: boolean) =>
  api(
    "PATCH",
    `/apis/apps/v1/namespaces/${NS}/deployments/web`,
    { spec: { paused } },
    "application/merge-patch+json",
  );

const line = (app: App, name: string) =>
  app.status?.resources?.find((r) => r.kind === "ConfigMap" && r.name === name);

describe("prune after the rollout", () => {
  it("keeps the old generated ConfigMap pending until the new ReplicaSet is available, then prunes it", async () => {
    expect(await run()).toMatchObject({
      outcome: "Reconciled",
      syncStatus: "Synced",
    });
    const [first, ...others] = await configMaps();
    expect(others).toEqual([]);
    expect(first).toMatch(/^web-config-[a-z0-9]{10}$/);
    const oldRs = await waitFor("the first ReplicaSet is available", () =>
      availableFor(first as string),
    );
    const [oldPod] = (await list(`/api/v1/namespaces/${NS}/pods`)).filter(
      (p) => p.metadata.deletionTimestamp === undefined,
    );
    expect(oldPod?.metadata.ownerReferences?.[0]).toMatchObject({ name: oldRs.metadata.name });

    // The rollout to the next content cannot start while the Deployment is paused.
    await pausing(true);
    await repo.commit({
      "app/kustomization.yaml": [
        `namespace: ${NS}`,
        "resources: [deployment.yaml]",
        "configMapGenerator:",
        "  - name: web-config",
        "    literals: [greeting=bonjour]",
        "",
      ].join("\n"),
    });
    expect(await run()).toMatchObject({
      outcome: "Reconciled",
      syncStatus: "Synced",
    });
    const both = await configMaps();
    expect(both).toHaveLength(2);
    const second = both.find((n) => n !== first) as string;
    expect(second).toMatch(/^web-config-[a-z0-9]{10}$/);
    const reason = (app: App) => {
      const since = app.status?.inventory?.find((e) => e.name === first)?.prunePending;
      expect(since).toMatch(/^\d{4}-\d\d-\d\dT/);
      return `pending prune since ${since}: ConfigMap ${NS}/${first} is still used by Pod ${oldPod?.metadata.name}, ReplicaSet ${oldRs.metadata.name}; pruned once the rollout that moved away from it has finished`;
    };
    const held = await getApp(APPS, "web");
    expect(inventoryRefs(held)).toContainEqual({
      apiVersion: "v1",
      kind: "ConfigMap",
      namespace: NS,
      name: first,
    });
    expect(line(held, first as string)).toEqual({
      apiVersion: "v1",
      kind: "ConfigMap",
      namespace: NS,
      name: first,
      status: "PrunePending",
      message: reason(held),
    });
    expect(line(held, second)).toMatchObject({ status: "Synced" });

    // The next run (the health follow-up) finds the rollout where it was: still kept.
    await run();
    expect(await configMaps()).toEqual([first, second].sort());
    const again = await getApp(APPS, "web");
    expect(line(again, first as string)?.message).toBe(reason(held));

    await pausing(false);
    await waitFor("the new ReplicaSet is available and the old one has no Pods left", async () => {
      const all = await replicaSets();
      const old = all.find((r) => r.metadata.name === oldRs.metadata.name);
      return (await availableFor(second)) && old?.spec.replicas === 0 && !old.status?.replicas;
    });
    // Nothing ran since: the old ConfigMap is still there when the rollout has finished.
    expect(await configMaps()).toEqual([first, second].sort());

    expect(await run()).toMatchObject({
      outcome: "Reconciled",
      syncStatus: "Synced",
    });
    expect(await configMaps()).toEqual([second]);
    const done = await getApp(APPS, "web");
    expect(inventoryRefs(done).filter((r) => r.kind === "ConfigMap")).toEqual([
      { apiVersion: "v1", kind: "ConfigMap", namespace: NS, name: second },
    ]);
    expect(done.status?.inventory?.some((e) => e.prunePending !== undefined)).toBe(false);
    expect(line(done, first as string)).toMatchObject({ status: "Pruned" });
    const events = await list(`/api/v1/namespaces/${APPS}/events`);
    expect(
      events.some(
        (e) =>
          (e as { reason?: string }).reason === "Pruned" &&
          (e as { message?: string }).message === `pruned ConfigMap ${NS}/${first}`,
      ),
    ).toBe(true);
  });
});
