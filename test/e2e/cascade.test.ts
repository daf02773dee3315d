// A repository cannot delete what is not its own: a Namespace or a CRD the
// repository opted into pruning is deleted only when nothing but the App's objects goes with
// it; otherwise it is kept with a Warning Event saying what it holds. Real Git, real API server.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reconcileApp } from "../../src/reconcile/index.ts";
import { type GitServer, startGitServer } from "../support/git-server.ts";
import {
  api,
  createApp,
  createNamespace,
  getApp,
  getObject,
  realPorts,
  waitFor,
} from "./support.ts";

let git: GitServer;
beforeAll(async () => {
  git = await startGitServer();
});
afterAll(async () => {
  await git?.stop();
});

/** A suffix so the file can run again against the same control plane. */
const S = Date.now().toString(36);
const CRD_KINDS = ["CustomResourceDefinition"];

const cm = (name: string, namespace?: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}${namespace ? `, namespace: ${namespace}` : ""}}\ndata: {k: v}\n`;
const namespace = (name: string) =>
  `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${name}\n  annotations: {plumb.dev/prune: "true"}\n`;
const crd = (group: string) => `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.${group}
  annotations: {plumb.dev/prune: "true"}
spec:
  group: ${group}
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
    - name: v1
      served: true
      storage: true
      schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`;
const widget = (group: string, name: string) =>
  `apiVersion: ${group}/v1\nkind: Widget\nmetadata: {name: ${name}}\nspec: {size: 1}\n`;

async function newApp(ns: string, name: string, spec: Record<string, unknown>): Promise<void> {
  await createNamespace(ns);
  const res = await createApp(ns, name, spec);
  if (res.status !== 201) throw new Error(`create App: ${res.status} ${JSON.stringify(res.body)}`);
}

const run = (ns: string, name: string, extra = {}) =>
  reconcileApp(
    { namespace: ns, name },
    realPorts({ allowedDestinations: ["*"], allowedClusterKinds: CRD_KINDS, ...extra }),
    new Date(),
  );

/** A run that owes a full comparison (its slot came, or a person asked for it). */
const fullRun = (ns: string, name: string) =>
  reconcileApp(
    { namespace: ns, name },
    realPorts({ allowedDestinations: ["*"], allowedClusterKinds: CRD_KINDS }),
    new Date(),
    { compare: true },
  );

/** The Warning Events on App ns/name with `reason`, newest last. */
async function warnings(ns: string, name: string, reason: string): Promise<string[]> {
  const list = await api(
    "GET",
    `/api/v1/namespaces/${ns}/events?fieldSelector=involvedObject.name=${name},reason=${reason}`,
  );
  return (list.items as Array<{ type: string; message: string }>)
    .filter((e) => e.type === "Warning")
    .map((e) => e.message);
}

describe("pruning never takes others' objects with it", () => {
  it("a pre-existing Namespace rendered with plumb.dev/prune and then dropped is kept, with another App's and an unmanaged ConfigMap inside, and an Event says why", async () => {
    const shared = `k7-shared-${S}`;
    // The Namespace exists before, with an object nobody manages.
    await createNamespace(shared);
    await api("POST", `/api/v1/namespaces/${shared}/configmaps`, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "manual" },
    });
    // Another App deploys into it.
    const theirs = await git.createRepo(`k7-theirs-${S}`, { "cm.yaml": cm("theirs") });
    await newApp(`k7-b-${S}`, "other", {
      source: { git: { url: theirs.url, ref: "main" } },
      destination: { namespace: shared },
    });
    expect(await run(`k7-b-${S}`, "other")).toMatchObject({ syncStatus: "Synced" });
    // This App's repository renders the Namespace, opted into pruning, and objects in it.
    const mine = await git.createRepo(`k7-mine-${S}`, {
      "ns.yaml": namespace(shared),
      "cm.yaml": cm("mine"),
      "home.yaml": cm("home"),
    });
    const appNs = `k7-a-${S}`;
    await newApp(appNs, "mine", {
      source: { git: { url: mine.url, ref: "main" } },
      destination: { namespace: shared },
    });
    const first = await run(appNs, "mine");
    expect(first.error).toBeUndefined();
    expect(first).toMatchObject({ outcome: "Reconciled", syncStatus: "Synced" });
    const adopted = await getObject(`/api/v1/namespaces/${shared}`);
    expect(adopted?.metadata.labels).toMatchObject({ "plumb.dev/app": "mine" });

    // The repository drops the Namespace and one of its objects.
    await mine.commit({ "ns.yaml": null, "cm.yaml": null });
    const dropped = await run(appNs, "mine");
    expect(dropped).toMatchObject({ outcome: "Reconciled", syncStatus: "Synced" });
    const kept = await getObject(`/api/v1/namespaces/${shared}`);
    expect(kept?.metadata.deletionTimestamp).toBeUndefined();
    expect(await getObject(`/api/v1/namespaces/${shared}/configmaps/theirs`)).toBeDefined();
    expect(await getObject(`/api/v1/namespaces/${shared}/configmaps/manual`)).toBeDefined();
    // The App's own object in it is pruned.
    expect(await getObject(`/api/v1/namespaces/${shared}/configmaps/mine`)).toBeUndefined();
    expect(await getObject(`/api/v1/namespaces/${shared}/configmaps/home`)).toBeDefined();
    const reason =
      `Namespace ${shared} is not pruned: deleting it would delete 2 objects that are not ` +
      `this App's: ConfigMap ${shared}/manual, ConfigMap ${shared}/theirs (App k7-b-${S}/other)`;
    expect(await warnings(appNs, "mine", "PruneSkipped")).toEqual([reason]);
    const app = await getApp(appNs, "mine");
    expect(app.status?.resources?.find((r) => r.kind === "Namespace")).toMatchObject({
      status: "PruneSkipped",
      message: reason,
    });
    // Still the App's: tracked until it can be pruned.
    expect(app.status?.inventory?.map((r) => `${r.kind}/${r.name}`)).toEqual([
      "ConfigMap/home",
      `Namespace/${shared}`,
    ]);
    // The other App is untouched and still Synced.
    expect(await run(`k7-b-${S}`, "other")).toMatchObject({ syncStatus: "Synced" });

    // While others' objects are in it, later runs keep it (and say so again).
    expect(await fullRun(appNs, "mine")).toMatchObject({ syncStatus: "Synced" });
    expect((await getObject(`/api/v1/namespaces/${shared}`))?.metadata.deletionTimestamp).toBe(
      undefined,
    );
    // The last object not this App's goes (the other App is deleted, the manual one removed):
    // the next run prunes the Namespace, the App's own ConfigMap home with it.
    await api("DELETE", `/apis/plumb.dev/v1alpha1/namespaces/k7-b-${S}/apps/other`);
    expect(await run(`k7-b-${S}`, "other")).toMatchObject({ outcome: "Finalized" });
    await api("DELETE", `/api/v1/namespaces/${shared}/configmaps/manual`);
    // A steady run only looks at health; the next full one (its slot in the interval, or a
    // person asking) prunes.
    expect(await fullRun(appNs, "mine")).toMatchObject({ outcome: "Reconciled" });
    const pruned = await getObject(`/api/v1/namespaces/${shared}`);
    expect(pruned === undefined || pruned.metadata.deletionTimestamp !== undefined).toBe(true);
    expect(
      (await getApp(appNs, "mine")).status?.inventory?.map((r) => `${r.kind}/${r.name}`),
    ).toEqual(["ConfigMap/home"]);
  });

  it("a child App's Namespace marked for pruning is pruned once both Apps are deleted: the parent's finalizer waits for the child's objects to go", async () => {
    const home = `k7-parent-${S}`;
    const child = `k7-child-${S}`;
    const childRepo = await git.createRepo(`k7-child-${S}`, { "cm.yaml": cm("child-cm") });
    // The parent renders the child's Namespace (opted into pruning) and the child App in it.
    const parentRepo = await git.createRepo(`k7-parent-${S}`, {
      "ns.yaml": namespace(child),
      "app.yaml": `apiVersion: plumb.dev/v1alpha1
kind: App
metadata: {name: child, namespace: ${child}}
spec:
  source: {git: {url: "${childRepo.url}", ref: main}}
`,
    });
    await newApp(home, "parent", {
      source: { git: { url: parentRepo.url, ref: "main" } },
      destination: { namespace: child },
    });
    expect(await run(home, "parent")).toMatchObject({ syncStatus: "Synced" });
    expect(await run(child, "child")).toMatchObject({ syncStatus: "Synced" });
    expect(await getObject(`/api/v1/namespaces/${child}/configmaps/child-cm`)).toBeDefined();

    // Both Apps are deleted: the parent first (its prune deletes the child App).
    await api("DELETE", `/apis/plumb.dev/v1alpha1/namespaces/${home}/apps/parent`);
    const waiting = await run(home, "parent");
    const reason = `Namespace ${child} is not pruned: deleting it would delete 1 object that is not this App's: ConfigMap ${child}/child-cm (App ${child}/child)`;
    expect(waiting).toMatchObject({
      outcome: "Failed",
      error: `PruneFailed: finalizer waits to prune: ${reason} (tried again on every run; remove its plumb.dev/prune annotation, or set syncPolicy.prune: false, to leave it and let the App go)`,
    });
    const parent = await getApp(home, "parent");
    expect(parent.metadata.finalizers).toContain("plumb.dev/finalizer");
    expect(parent.status?.inventory?.map((r) => `${r.kind}/${r.name}`)).toEqual([
      `Namespace/${child}`,
    ]);
    expect(await warnings(home, "parent", "PruneSkipped")).toEqual([reason]);
    expect((await getApp(child, "child")).metadata.deletionTimestamp).toBeDefined();
    expect((await getObject(`/api/v1/namespaces/${child}`))?.metadata.deletionTimestamp).toBe(
      undefined,
    );

    // The child's finalizer prunes its ConfigMap and lets it go; then the parent's prunes the
    // Namespace, now empty of others' objects, and lets the parent go.
    expect(await run(child, "child")).toMatchObject({ outcome: "Finalized" });
    expect(await getObject(`/apis/plumb.dev/v1alpha1/namespaces/${child}/apps/child`)).toBe(
      undefined,
    );
    expect(await run(home, "parent")).toMatchObject({ outcome: "Finalized" });
    const ns = await getObject(`/api/v1/namespaces/${child}`);
    expect(ns === undefined || ns.metadata.deletionTimestamp !== undefined).toBe(true);
    expect(await getObject(`/apis/plumb.dev/v1alpha1/namespaces/${home}/apps/parent`)).toBe(
      undefined,
    );
  });

  it("a Namespace holding nothing but the App's objects (and their Pods) is pruned", async () => {
    const solo = `k7-solo-${S}`;
    const repo = await git.createRepo(`k7-solo-${S}`, {
      "ns.yaml": namespace(solo),
      "cm.yaml": cm("inside"),
      "deploy.yaml": `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx}]}
`,
    });
    const appNs = `k7-c-${S}`;
    await newApp(appNs, "solo", {
      source: { git: { url: repo.url, ref: "main" } },
      destination: { namespace: solo },
      syncPolicy: { allowEmpty: true },
    });
    expect(await run(appNs, "solo")).toMatchObject({ syncStatus: "Synced" });
    // The Deployment's ReplicaSet and Pod (not labelled by plumb) are its dependents.
    await waitFor("the Deployment's Pod", async () => {
      const pods = await api("GET", `/api/v1/namespaces/${solo}/pods`);
      return pods.items.length > 0 ? true : undefined;
    });
    await repo.commit({ "ns.yaml": null, "cm.yaml": null, "deploy.yaml": null });
    expect(await run(appNs, "solo")).toMatchObject({ syncStatus: "Synced" });
    const ns = await getObject(`/api/v1/namespaces/${solo}`);
    expect(ns === undefined || ns.metadata.deletionTimestamp !== undefined).toBe(true);
    expect(await warnings(appNs, "solo", "PruneSkipped")).toEqual([]);
  });

  it("a CRD dropped by its repository is kept while a custom resource of its kind is not the App's", async () => {
    const group = `k7-${S}.example.com`;
    const repo = await git.createRepo(`k7-crd-${S}`, {
      "crd.yaml": crd(group),
      "widget.yaml": widget(group, "mine"),
    });
    const appNs = `k7-d-${S}`;
    await newApp(appNs, "crd", { source: { git: { url: repo.url, ref: "main" } } });
    expect(await run(appNs, "crd")).toMatchObject({ syncStatus: "Synced" });
    // Someone else makes a Widget of their own, in another namespace.
    const elsewhere = `k7-e-${S}`;
    await createNamespace(elsewhere);
    await api("POST", `/apis/${group}/v1/namespaces/${elsewhere}/widgets`, {
      apiVersion: `${group}/v1`,
      kind: "Widget",
      metadata: { name: "theirs" },
    });
    await repo.commit({ "crd.yaml": null, "widget.yaml": null, "home.yaml": cm("home") });
    expect(await run(appNs, "crd")).toMatchObject({ syncStatus: "Synced" });
    const kept = await getObject(
      `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.${group}`,
    );
    expect(kept?.metadata.deletionTimestamp).toBeUndefined();
    expect(
      await getObject(`/apis/${group}/v1/namespaces/${elsewhere}/widgets/theirs`),
    ).toBeDefined();
    expect(await getObject(`/apis/${group}/v1/namespaces/${appNs}/widgets/mine`)).toBeUndefined();
    expect(await warnings(appNs, "crd", "PruneSkipped")).toEqual([
      `CustomResourceDefinition widgets.${group} is not pruned: deleting it would delete 1 object that is not this App's: Widget ${elsewhere}/theirs`,
    ]);
  });

  it("the cluster-wide setting, not the repository, allows a cascading prune", async () => {
    const wide = `k7-wide-${S}`;
    await createNamespace(wide);
    await api("POST", `/api/v1/namespaces/${wide}/configmaps`, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "manual" },
    });
    const repo = await git.createRepo(`k7-wide-${S}`, { "ns.yaml": namespace(wide) });
    const appNs = `k7-f-${S}`;
    await newApp(appNs, "wide", {
      source: { git: { url: repo.url, ref: "main" } },
      syncPolicy: { allowEmpty: true },
    });
    expect(await run(appNs, "wide")).toMatchObject({ syncStatus: "Synced" });
    await repo.commit({ "ns.yaml": null });
    expect(await run(appNs, "wide", { allowCascadingPrune: true })).toMatchObject({
      syncStatus: "Synced",
    });
    const ns = await getObject(`/api/v1/namespaces/${wide}`);
    expect(ns === undefined || ns.metadata.deletionTimestamp !== undefined).toBe(true);
  });
});
