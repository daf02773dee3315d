// AppSets on the real control plane with a real Git repository (git http-backend): the CRD
// accepts and stores a templated AppSet; a Git directory generator makes one App per directory
// (owned by the AppSet, synced by plumb), follows directories added and removed (the App's
// finalizer prunes its objects), releases Apps under deletePolicy keep, and never touches an
// App of the same name it did not make.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { App } from "../../src/app/index.ts";
import { type AppSetResult, reconcileApp, reconcileAppSets } from "../../src/reconcile/index.ts";
import { type GitServer, startGitServer, type TestRepo } from "../support/git-server.ts";
import {
  api,
  createApp,
  createNamespace,
  getObject,
  kubePort,
  realPorts,
  transport,
} from "./support.ts";

const NS = "e2e-appset";
const PATH = `/apis/plumb.dev/v1alpha1/namespaces/${NS}/appsets`;
const APPS = `/apis/plumb.dev/v1alpha1/namespaces/${NS}/apps`;

function appSet(name: string, spec: Record<string, unknown>) {
  return {
    apiVersion: "plumb.dev/v1alpha1",
    kind: "AppSet",
    metadata: { name, namespace: NS },
    spec,
  };
}

const configMap = (name: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  from: ${name}\n`;

let git: GitServer;
let repo: TestRepo;

beforeAll(async () => {
  await createNamespace(NS);
  git = await startGitServer();
  repo = await git.createRepo("org/envs", {
    "apps/alpha/cm.yaml": configMap("cm-alpha"),
    "apps/beta/cm.yaml": configMap("cm-beta"),
    "README.md": "environments\n",
  });
});
afterAll(async () => {
  await git?.stop();
});

/** Reconciles the namespace's AppSets once (as the tick does) and returns the one named. */
async function tickAppSet(name: string): Promise<AppSetResult> {
  const results = await reconcileAppSets({ ...realPorts(), kube: kubePort() }, new Date(), {
    namespace: NS,
  });
  const r = results.find((x) => x.appset === `${NS}/${name}`);
  if (!r) throw new Error(`no result for ${name}: ${JSON.stringify(results)}`);
  return r;
}

async function readApp(
  name: string,
): Promise<(App & { metadata: { ownerReferences?: unknown[] } }) | undefined> {
  return (await getObject(`${APPS}/${name}`)) as never;
}

async function readAppSet(name: string) {
  return (await api("GET", `${PATH}/${name}`)) as {
    metadata: { uid: string; generation: number };
    status?: {
      observedGeneration?: number;
      apps?: Array<{ name: string }>;
      conditions?: Array<{ type: string; status: string; reason: string; message: string }>;
    };
  };
}

/** Syncs an App (its finalizer prunes when it is being deleted). */
const sync = (name: string) => reconcileApp({ namespace: NS, name }, realPorts(), new Date());

describe("AppSet CRD", () => {
  it("stores a templated AppSet as written and refuses one without generators", async () => {
    const spec = {
      generators: [{ list: { elements: [{ env: "dev" }, { env: "prod" }] } }],
      template: {
        metadata: { name: "web-{{env}}" },
        spec: { source: { git: { url: "https://git.example/r.git", path: "envs/{{env}}" } } },
      },
    };
    const created = await transport()("POST", PATH, { body: appSet("web", spec) });
    expect(created.status).toBe(201);
    const stored = created.body as { spec: Record<string, unknown> };
    expect(stored.spec["template"]).toEqual(spec.template);
    // The schema's default is filled in by the API server.
    expect(stored.spec["deletePolicy"]).toBe("delete");

    const bad = await transport()("POST", PATH, {
      body: appSet("empty", { ...spec, generators: [] }),
    });
    expect(bad.status).toBe(422);
    expect(JSON.stringify(bad.body)).toContain("spec.generators");
    await api("DELETE", `${PATH}/web`);
  });
});

describe("Git directory generator", () => {
  it("makes one owned App per directory, follows directories added and removed", async () => {
    await api("POST", PATH, {
      ...appSet("envs", {
        generators: [
          { git: { repoURL: repo.url, revision: "main", directories: [{ path: "apps/*" }] } },
        ],
        template: {
          metadata: { name: "env-{{path.basename}}", labels: { env: "{{path.basename}}" } },
          spec: { source: { git: { url: repo.url, ref: "main", path: "{{path}}" } } },
        },
      }),
    });
    const first = await tickAppSet("envs");
    expect(first).toMatchObject({ outcome: "Synced", created: ["env-alpha", "env-beta"] });
    const set = await readAppSet("envs");
    for (const dir of ["alpha", "beta"]) {
      const app = await readApp(`env-${dir}`);
      expect(app?.metadata.labels).toEqual({ env: dir, "plumb.dev/appset": "envs" });
      expect(app?.metadata.ownerReferences).toEqual([
        {
          apiVersion: "plumb.dev/v1alpha1",
          kind: "AppSet",
          name: "envs",
          uid: set.metadata.uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ]);
      expect((app?.spec as { source?: { git?: { path?: string } } })?.source?.git?.path).toBe(
        `apps/${dir}`,
      );
      const r = await sync(`env-${dir}`);
      expect(r.outcome).toBe("Reconciled");
      const cm = await getObject(`/api/v1/namespaces/${NS}/configmaps/cm-${dir}`);
      expect(cm?.["data"]).toEqual({ from: `cm-${dir}` });
    }
    expect(set.status?.apps).toEqual([{ name: "env-alpha" }, { name: "env-beta" }]);
    expect(set.status?.observedGeneration).toBe(set.metadata.generation);
    expect(set.status?.conditions?.find((c) => c.type === "Ready")).toMatchObject({
      status: "True",
      reason: "AppsUpToDate",
    });
    // Nothing moved: no App is written again.
    const again = await tickAppSet("envs");
    expect(again).toMatchObject({ created: [], updated: [], deleted: [] });

    // A third directory pushed: a third App.
    await repo.commit({ "apps/gamma/cm.yaml": configMap("cm-gamma") }, "gamma");
    expect((await tickAppSet("envs")).created).toEqual(["env-gamma"]);
    expect((await readApp("env-gamma"))?.metadata.labels?.["plumb.dev/appset"]).toBe("envs");

    // A directory removed: its App is deleted and its finalizer prunes its ConfigMap.
    await repo.commit({ "apps/beta/cm.yaml": null }, "no beta");
    expect((await tickAppSet("envs")).deleted).toEqual(["env-beta"]);
    await sync("env-beta");
    expect(await readApp("env-beta")).toBeUndefined();
    expect(await getObject(`/api/v1/namespaces/${NS}/configmaps/cm-beta`)).toBeUndefined();
    expect(await getObject(`/api/v1/namespaces/${NS}/configmaps/cm-alpha`)).toBeDefined();
    expect((await readAppSet("envs")).status?.apps).toEqual([
      { name: "env-alpha" },
      { name: "env-gamma" },
    ]);
  });

  it("releases an App whose directory vanished under deletePolicy keep", async () => {
    await api("POST", PATH, {
      ...appSet("kept", {
        deletePolicy: "keep",
        generators: [
          {
            git: {
              repoURL: repo.url,
              revision: "main",
              directories: [{ path: "apps/*" }, { path: "apps/alpha", exclude: true }],
            },
          },
        ],
        template: {
          metadata: { name: "kept-{{path.basenameNormalized}}" },
          spec: { source: { git: { url: repo.url, ref: "main", path: "{{path}}" } } },
        },
      }),
    });
    expect((await tickAppSet("kept")).created).toEqual(["kept-gamma"]);
    await repo.commit({ "apps/gamma/cm.yaml": null }, "no gamma");
    expect((await tickAppSet("kept")).released).toEqual(["kept-gamma"]);
    const app = await readApp("kept-gamma");
    expect(app).toBeDefined();
    expect(app?.metadata.deletionTimestamp).toBeUndefined();
    expect(app?.metadata.ownerReferences).toBeUndefined();
    expect(app?.metadata.labels?.["plumb.dev/appset"]).toBeUndefined();
    // Released means no longer its: it stays however often the AppSet runs.
    expect(await tickAppSet("kept")).toMatchObject({ deleted: [], released: [] });
    expect((await readAppSet("kept")).status?.apps).toEqual([]);
  });

  it("reports an App of the same name it did not make as a conflict and leaves it untouched", async () => {
    const foreign = { source: { git: { url: "https://git.example/other.git", path: "x" } } };
    expect((await createApp(NS, "mine-alpha", foreign)).status).toBe(201);
    const before = await readApp("mine-alpha");
    await api("POST", PATH, {
      ...appSet("mine", {
        generators: [{ list: { elements: [{ dir: "alpha" }] } }],
        template: {
          metadata: { name: "mine-{{dir}}" },
          spec: { source: { git: { url: repo.url, ref: "main", path: "apps/{{dir}}" } } },
        },
      }),
    });
    const r = await tickAppSet("mine");
    expect(r).toMatchObject({
      outcome: "Synced",
      created: [],
      updated: [],
      conflicts: ["mine-alpha"],
    });
    const after = await readApp("mine-alpha");
    expect(after?.metadata.resourceVersion).toBe(before?.metadata.resourceVersion);
    expect(after?.spec).toEqual(before?.spec);
    const ready = (await readAppSet("mine")).status?.conditions?.find((c) => c.type === "Ready");
    expect(ready).toMatchObject({ status: "False", reason: "ApplicationConflict" });
    expect(ready?.message).toContain("mine-alpha");
    const events = (await api(
      "GET",
      `/api/v1/namespaces/${NS}/events?fieldSelector=involvedObject.kind=AppSet,involvedObject.name=mine`,
    )) as { items: Array<{ type: string; reason: string }> };
    expect(events.items.map((e) => [e.type, e.reason])).toEqual([
      ["Warning", "ApplicationConflict"],
    ]);
  });

  it("reports a template the App schema refuses and changes nothing", async () => {
    await api("POST", PATH, {
      ...appSet("broken", {
        generators: [{ list: { elements: [{ n: "1" }] } }],
        template: { metadata: { name: "broken-{{n}}" }, spec: { source: { git: { url: 7 } } } },
      }),
    });
    const r = await tickAppSet("broken");
    expect(r.outcome).toBe("Failed");
    expect(r.created).toEqual([]);
    expect(await readApp("broken-1")).toBeUndefined();
    const err = (await readAppSet("broken")).status?.conditions?.find(
      (c) => c.type === "ErrorOccurred",
    );
    expect(err).toMatchObject({ status: "True", reason: "ApplicationGenerationFailed" });
    expect(err?.message).toContain("spec.source.git.url");
  });
});
