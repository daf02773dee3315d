// AppSets on the real control plane with a real Git repository (git http-backend): the CRD
// accepts and stores a templated AppSet; a Git directory generator makes one App per directory
// (owned by the AppSet, synced by plumb), follows directories added and removed (the App's
// finalizer prunes its objects), releases Apps under deletePolicy keep, and never touches an
// App of the same name it did not make.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAllDocuments, parse as parseYaml } from "yaml";
import type { App } from "../../src/app/index.ts";
import { createKubePort } from "../../src/kube/index.ts";
import { nodeKubeTransport } from "../../src/kube/node.ts";
import { type AppSetResult, reconcileApp, reconcileAppSets } from "../../src/reconcile/index.ts";
import { type GitServer, startGitServer, type TestRepo } from "../support/git-server.ts";
import {
  api,
  createApp,
  createNamespace,
  getObject,
  kubeconfig,
  kubePort,
  realPorts,
  transport,
} from "./support.ts";

const ROOT = resolve(import.meta.dirname, "../..");
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

describe("the example AppSets (infra/examples)", () => {
  it.each(["appset-environments.yaml", "appset-previews.yaml"])(
    "the API server accepts %s as written",
    async (file) => {
      const doc = parseYaml(readFileSync(join(ROOT, "infra/examples", file), "utf8")) as {
        metadata: Record<string, unknown>;
      };
      const body = { ...doc, metadata: { ...doc.metadata, namespace: NS } };
      const res = await transport()("POST", `${PATH}?dryRun=All`, { body });
      expect(res.status).toBe(201);
      expect((res.body as { spec: unknown }).spec).toMatchObject(
        (doc as unknown as { spec: object }).spec,
      );
    },
  );
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

describe("plumb's identity (infra/rbac/plumb.yaml)", () => {
  it("lets plumb read AppSets, write their status and create, release and delete their Apps", async () => {
    const ns = "e2e-appset-rbac";
    await createNamespace(ns);
    await api("POST", `/api/v1/namespaces/${ns}/serviceaccounts`, {
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { name: "plumb" },
    });
    const minted = (await api("POST", `/api/v1/namespaces/${ns}/serviceaccounts/plumb/token`, {
      apiVersion: "authentication.k8s.io/v1",
      kind: "TokenRequest",
      spec: { expirationSeconds: 3600 },
    })) as { status: { token: string } };
    // The admin kubeconfig's server and CA, with the ServiceAccount's token as the only user.
    const admin = parseYaml(readFileSync(kubeconfig(), "utf8")) as Record<string, unknown> & {
      users: Array<{ name: string }>;
    };
    const dir = mkdtempSync(join(tmpdir(), "appset-rbac-"));
    const file = join(dir, "kubeconfig");
    writeFileSync(
      file,
      JSON.stringify({
        ...admin,
        users: admin.users.map((u) => ({ name: u.name, user: { token: minted.status.token } })),
      }),
    );
    const asPlumb = () => ({ ...realPorts(), kube: createKubePort(nodeKubeTransport(file)) });
    const path = `/apis/plumb.dev/v1alpha1/namespaces/${ns}/appsets`;
    await api("POST", path, {
      apiVersion: "plumb.dev/v1alpha1",
      kind: "AppSet",
      metadata: { name: "envs", namespace: ns },
      spec: {
        generators: [{ list: { elements: [{ env: "dev" }, { env: "prod" }] } }],
        template: {
          metadata: { name: "web-{{env}}" },
          spec: { source: { git: { url: repo.url, path: "apps/alpha" } } },
        },
      },
    });
    // Without plumb's rules the identity may not even list AppSets.
    await expect(reconcileAppSets(asPlumb(), new Date(), { namespace: ns })).rejects.toThrow(
      /cannot list resource "appsets"/,
    );

    // The ClusterRole as shipped, bound in this namespace only.
    const docs = parseAllDocuments(readFileSync(join(ROOT, "infra/rbac/plumb.yaml"), "utf8"));
    const role = docs
      .map((d) => d.toJS() as { kind: string; metadata: { name: string }; rules?: unknown[] })
      .find((d) => d.kind === "ClusterRole" && d.metadata.name === "plumb-apps");
    expect(role?.rules?.length).toBeGreaterThan(0);
    const rbac = `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}`;
    await api("POST", `${rbac}/roles`, {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "Role",
      metadata: { name: "plumb-apps" },
      rules: role?.rules,
    });
    await api("POST", `${rbac}/rolebindings`, {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: { name: "plumb-apps" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "plumb-apps" },
      subjects: [{ kind: "ServiceAccount", name: "plumb", namespace: ns }],
    });

    const [made] = await reconcileAppSets(asPlumb(), new Date(), { namespace: ns });
    expect(made).toMatchObject({ outcome: "Synced", created: ["web-dev", "web-prod"] });
    const status = (await api("GET", `${path}/envs`)) as {
      status?: { apps?: unknown[]; conditions?: Array<{ type: string; status: string }> };
    };
    expect(status.status?.apps).toEqual([{ name: "web-dev" }, { name: "web-prod" }]);
    expect(status.status?.conditions?.find((c) => c.type === "Ready")?.status).toBe("True");
    const events = (await api("GET", `/api/v1/namespaces/${ns}/events`)) as {
      items: Array<{ reason: string; involvedObject: { kind: string } }>;
    };
    expect(
      events.items.filter((e) => e.involvedObject.kind === "AppSet").map((e) => e.reason),
    ).toEqual(["AppCreated", "AppCreated"]);

    // One element fewer: its App deleted; then deletePolicy keep and none left: released.
    await api(
      "PATCH",
      `${path}/envs`,
      {
        spec: { generators: [{ list: { elements: [{ env: "dev" }] } }] },
      },
      "application/merge-patch+json",
    );
    const [shrunk] = await reconcileAppSets(asPlumb(), new Date(), { namespace: ns });
    expect(shrunk).toMatchObject({ outcome: "Synced", deleted: ["web-prod"] });
    await api(
      "PATCH",
      `${path}/envs`,
      {
        spec: { deletePolicy: "keep", generators: [{ list: { elements: [] } }] },
      },
      "application/merge-patch+json",
    );
    const [kept] = await reconcileAppSets(asPlumb(), new Date(), { namespace: ns });
    expect(kept).toMatchObject({ outcome: "Synced", released: ["web-dev"] });
    const dev = (await getObject(`/apis/plumb.dev/v1alpha1/namespaces/${ns}/apps/web-dev`)) as {
      metadata: { ownerReferences?: unknown[] };
    };
    expect(dev.metadata.ownerReferences).toBeUndefined();
    rmSync(dir, { recursive: true, force: true });
  });
});
