// The reconcile loop end to end: real manifests from a real Git server over smart
// HTTP, applied to the local control plane.
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type App, appRow } from "../../src/app/index.ts";
import { dueAt } from "../../src/plan/index.ts";
import { type RunResult, reconcileApp } from "../../src/reconcile/index.ts";
import {
  fixtureFiles,
  type GitServer,
  REAL_FIXTURES,
  startGitServer,
  type TestRepo,
} from "../support/git-server.ts";
import {
  api,
  createApp,
  createNamespace,
  deploymentImage,
  getApp,
  getObject,
  patchAppSpec,
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

const guestbook = () => fixtureFiles(join(REAL_FIXTURES, "guestbook"));
const podinfo = () => fixtureFiles(join(REAL_FIXTURES, "podinfo-webapp"));

async function repo(name: string, files: Record<string, string>): Promise<TestRepo> {
  return git.createRepo(name, files, { allowSha1InWant: true });
}

async function newApp(ns: string, name: string, spec: Record<string, unknown>): Promise<void> {
  await createNamespace(ns);
  const res = await createApp(ns, name, spec);
  if (res.status !== 201) throw new Error(`create App: ${res.status} ${JSON.stringify(res.body)}`);
}

const run = (ns: string, name: string, extra = {}) =>
  reconcileApp({ namespace: ns, name }, realPorts(extra), new Date());

/** Reconciles every 500 ms until `pred` holds for the App (as the cron would, faster). */
async function reconcileUntil(
  ns: string,
  name: string,
  what: string,
  pred: (a: App, r: RunResult) => boolean,
) {
  return waitFor(what, async () => {
    const r = await run(ns, name);
    const a = await getApp(ns, name);
    return pred(a, r) ? a : undefined;
  });
}

describe("guestbook and podinfo-webapp from Git", () => {
  it("one reconcile lands every object, owned by plumb; Synced at the commit; Healthy once Pods are Ready", async () => {
    const r = await repo("guestbook", guestbook());
    await newApp("guestbook", "guestbook", { source: { git: { url: r.url, ref: "main" } } });
    const first = await run("guestbook", "guestbook");
    expect(first).toMatchObject({
      outcome: "Reconciled",
      syncStatus: "Synced",
      revision: await r.head(),
    });
    const deploy = await getObject("/apis/apps/v1/namespaces/guestbook/deployments/guestbook-ui");
    expect(deploy?.metadata.managedFields?.find((m) => m.manager === "plumb")?.operation).toBe(
      "Apply",
    );
    expect(deploy?.metadata.labels).toMatchObject({
      "plumb.dev/app": "guestbook",
      "plumb.dev/app-namespace": "guestbook",
    });
    expect(await getObject("/api/v1/namespaces/guestbook/services/guestbook-ui")).toBeDefined();
    const healthy = await reconcileUntil(
      "guestbook",
      "guestbook",
      "Healthy",
      (a) => a.status?.healthStatus === "Healthy",
    );
    expect(healthy.status?.inventory?.map((i) => `${i.kind}/${i.name}`).sort()).toEqual([
      "Deployment/guestbook-ui",
      "Service/guestbook-ui",
    ]);
    expect(healthy.status?.conditions?.find((c) => c.type === "Ready")).toMatchObject({
      status: "True",
      reason: "Synced",
    });
    expect(healthy.metadata.finalizers).toContain("plumb.dev/finalizer");
  });

  it("podinfo-webapp lands in its namespace; its Deployments become Healthy and its HPA bug is reported", async () => {
    const r = await repo("podinfo", podinfo());
    await newApp("webapp", "podinfo", { source: { git: { url: r.url, ref: "refs/heads/main" } } });
    const first = await run("webapp", "podinfo");
    expect(first).toMatchObject({ syncStatus: "Synced", revision: await r.head() });
    // Upstream's frontend HPA targets the backend Deployment (deploy/webapp/frontend/hpa.yaml),
    // so both HPAs select the same pods and the HPA controller refuses them: Degraded is right.
    const app = await reconcileUntil(
      "webapp",
      "podinfo",
      "Deployments healthy, HPAs assessed",
      (a) =>
        (a.status?.resources ?? [])
          .filter((x) => x.kind === "Deployment")
          .every((x) => x.health === "Healthy") && a.status?.healthStatus !== "Progressing",
    );
    expect(app.status?.inventory).toHaveLength(11);
    expect(app.status?.resources?.every((x) => x.status === "Synced")).toBe(true);
    expect(app.status?.healthStatus).toBe("Degraded");
    expect(app.status?.healthReason).toMatch(
      /^HorizontalPodAutoscaler webapp\/(backend|frontend): AmbiguousSelector: pods by selector app=backend are controlled by multiple HPAs/,
    );
    expect(
      app.status?.resources?.find((x) => x.kind === "Deployment" && x.name === "frontend"),
    ).toMatchObject({
      health: "Healthy",
      message: "1 of 1 replicas available",
    });
  });

  it("applies a new commit that changes an image; previousRevisions holds the old commit", async () => {
    const r = await repo("gb-update", guestbook());
    await newApp("gb-update", "app", { source: { git: { url: r.url } } });
    const old = await r.head();
    await run("gb-update", "app");
    const file = "guestbook-ui-deployment.yaml";
    const next = await r.commit({
      [file]: guestbook()[file]!.replace("gb-frontend:v5", "gb-frontend:v6"),
    });
    const res = await run("gb-update", "app");
    expect(res).toMatchObject({ syncStatus: "Synced", revision: next });
    expect(await deploymentImage("gb-update", "guestbook-ui")).toBe(
      "gcr.io/google-samples/gb-frontend:v6",
    );
    expect((await getApp("gb-update", "app")).status?.previousRevisions?.[0]?.revision).toBe(old);
  });

  it("prunes a deleted file's object with prune on; keeps and reports it with prune off", async () => {
    const on = await repo("prune-on", guestbook());
    const off = await repo("prune-off", guestbook());
    await newApp("prune-on", "app", { source: { git: { url: on.url } } });
    await newApp("prune-off", "app", {
      source: { git: { url: off.url } },
      syncPolicy: { prune: false },
    });
    await run("prune-on", "app");
    await run("prune-off", "app");
    await on.commit({ "guestbook-ui-svc.yaml": null });
    await off.commit({ "guestbook-ui-svc.yaml": null });
    await run("prune-on", "app");
    await run("prune-off", "app");
    expect(await getObject("/api/v1/namespaces/prune-on/services/guestbook-ui")).toBeUndefined();
    expect(await getObject("/api/v1/namespaces/prune-off/services/guestbook-ui")).toBeDefined();
    const kept = (await getApp("prune-off", "app")).status;
    expect(kept?.resources?.find((x) => x.kind === "Service")).toMatchObject({
      status: "OutOfSync",
      message: "not in the source; prune is off",
    });
    expect(kept?.inventory?.some((x) => x.kind === "Service")).toBe(true);
    const pruned = (await getApp("prune-on", "app")).status;
    expect(pruned?.inventory?.some((x) => x.kind === "Service")).toBe(false);
    const events = await api("GET", "/api/v1/namespaces/prune-on/events");
    expect(events.items.map((e: { reason: string }) => e.reason)).toContain("Pruned");
  });

  it("a second reconcile with nothing changed makes no writes, at most 2 + kinds reads and one ls-refs", async () => {
    const r = await repo("noop", guestbook());
    await newApp("noop", "app", { source: { git: { url: r.url } } });
    await reconcileUntil("noop", "app", "Healthy", (a) => a.status?.healthStatus === "Healthy");
    const before = git.requests.length;
    const second = await run("noop", "app");
    const gitRequests = git.requests.slice(before);
    expect(second.requests).toMatchObject({ create: 0, update: 0, patch: 0, delete: 0 });
    // The App, the cluster's AppPolicies, one list per kind (2).
    expect(second.requests.get + second.requests.list).toBeLessThanOrEqual(2 + 2);
    expect(gitRequests.filter((x) => x.startsWith("POST")).length).toBe(1);
    expect(gitRequests.every((x) => x.includes("/noop.git/"))).toBe(true);
  });

  it("freeze: a new commit is not applied; observedRevision differs from revision; OutOfSync", async () => {
    const r = await repo("frozen", guestbook());
    await newApp("frozen", "app", { source: { git: { url: r.url } } });
    const applied = (await run("frozen", "app")).revision;
    await patchAppSpec("frozen", "app", { freeze: true });
    const next = await r.commit({
      "extra.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: extra}\n",
    });
    const res = await run("frozen", "app");
    const status = (await getApp("frozen", "app")).status;
    expect(res.syncStatus).toBe("OutOfSync");
    expect(status?.revision).toBe(applied);
    expect(status?.observedRevision).toBe(next);
    expect(await getObject("/api/v1/namespaces/frozen/configmaps/extra")).toBeUndefined();
  });

  it("requiresApproval holds a revision; Approve applies exactly that revision", async () => {
    const r = await repo("approval", guestbook());
    await newApp("approval", "app", {
      source: { git: { url: r.url } },
      syncPolicy: { requiresApproval: true },
    });
    const first = await run("approval", "app");
    const c1 = await r.head();
    expect(first.syncStatus).toBe("Held");
    expect((await getApp("approval", "app")).status?.heldRevision).toBe(c1);
    expect(
      await getObject("/apis/apps/v1/namespaces/approval/deployments/guestbook-ui"),
    ).toBeUndefined();
    await patchAppSpec("approval", "app", {
      operation: { id: "approve-1", type: "Approve", revision: c1 },
    });
    // A newer commit lands before the approval is acted on: the approved one is still what applies.
    const c2 = await r.commit({
      "extra.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: extra}\n",
    });
    const approved = await run("approval", "app");
    expect(approved.revision).toBe(c1);
    const status = (await getApp("approval", "app")).status;
    expect(status?.operationState).toMatchObject({
      id: "approve-1",
      type: "Approve",
      phase: "Succeeded",
      revision: c1,
    });
    expect(
      await getObject("/apis/apps/v1/namespaces/approval/deployments/guestbook-ui"),
    ).toBeDefined();
    expect(await getObject("/api/v1/namespaces/approval/configmaps/extra")).toBeUndefined();
    const next = await run("approval", "app");
    expect(next.syncStatus).toBe("Held");
    const held = (await getApp("approval", "app")).status;
    expect(held?.heldRevision).toBe(c2);
    expect(held?.resources?.find((x) => x.kind === "ConfigMap")).toMatchObject({
      name: "extra",
      message: "will be created",
    });
  });

  it("Rollback to the previous revision makes the live objects match the old commit", async () => {
    const r = await repo("rollback", guestbook());
    await newApp("rollback", "app", { source: { git: { url: r.url } } });
    const c1 = await r.head();
    await run("rollback", "app");
    const file = "guestbook-ui-deployment.yaml";
    const c2 = await r.commit({
      [file]: guestbook()[file]!.replace("gb-frontend:v5", "gb-frontend:v6"),
    });
    await run("rollback", "app");
    expect(await deploymentImage("rollback", "guestbook-ui")).toBe(
      "gcr.io/google-samples/gb-frontend:v6",
    );
    await patchAppSpec("rollback", "app", {
      operation: { id: "rb-1", type: "Rollback", revision: c1 },
    });
    const res = await run("rollback", "app");
    expect(res.revision).toBe(c1);
    expect(await deploymentImage("rollback", "guestbook-ui")).toBe(
      "gcr.io/google-samples/gb-frontend:v5",
    );
    const status = (await getApp("rollback", "app")).status;
    expect(status?.operationState).toMatchObject({ id: "rb-1", phase: "Succeeded" });
    expect(status?.rolledBackFrom).toBe(c2);
    // The automated gate does not re-apply the revision rolled back from.
    await run("rollback", "app");
    expect(await deploymentImage("rollback", "guestbook-ui")).toBe(
      "gcr.io/google-samples/gb-frontend:v5",
    );
  });

  it("deleting the App removes its objects; a Namespace another App also renders stays", async () => {
    const ns = (name: string) =>
      `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shared\n  annotations: {plumb.dev/prune: "true"}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}}\n`;
    const a = await repo("shared-a", { "all.yaml": ns("from-a") });
    const b = await repo("shared-b", { "all.yaml": ns("from-b") });
    await newApp("shared", "a", { source: { git: { url: a.url } } });
    await newApp("shared", "b", { source: { git: { url: b.url } } });
    await run("shared", "a");
    await run("shared", "b");
    await api("DELETE", "/apis/plumb.dev/v1alpha1/namespaces/shared/apps/a");
    const res = await run("shared", "a");
    expect(res.outcome).toBe("Finalized");
    await waitFor(
      "App a gone",
      async () =>
        (
          await api(
            "GET",
            "/apis/plumb.dev/v1alpha1/namespaces/shared/apps/a",
            undefined,
            undefined,
            [404],
          )
        ).code === 404,
    );
    expect(await getObject("/api/v1/namespaces/shared/configmaps/from-a")).toBeUndefined();
    expect(await getObject("/api/v1/namespaces/shared/configmaps/from-b")).toBeDefined();
    expect((await getObject("/api/v1/namespaces/shared"))?.["status"]).toMatchObject({
      phase: "Active",
    });
  });

  it("the finalizer finishes when the App's own namespace is being deleted", async () => {
    const r = await repo("ns-gone", guestbook());
    await newApp("ns-gone", "app", { source: { git: { url: r.url } } });
    await run("ns-gone", "app");
    await api("DELETE", "/api/v1/namespaces/ns-gone");
    await waitFor(
      "finalized",
      async () =>
        (await run("ns-gone", "app")).outcome !== "Failed" &&
        (await getObject("/api/v1/namespaces/ns-gone")) === undefined,
    );
  });
});

describe("bad input: the error where its author sees it, nothing lost", () => {
  it("invalid YAML fails the render with file and line and prunes nothing", async () => {
    const r = await repo("bad-yaml", guestbook());
    await newApp("bad-yaml", "app", { source: { git: { url: r.url } } });
    await run("bad-yaml", "app");
    await r.commit({
      "guestbook-ui-svc.yaml":
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: x\n   bad: indent\n",
    });
    const res = await run("bad-yaml", "app");
    expect(res.outcome).toBe("Failed");
    expect(res.error).toMatch(/^RenderFailed: guestbook-ui-svc\.yaml:4: Nested mappings/);
    expect(await getObject("/api/v1/namespaces/bad-yaml/services/guestbook-ui")).toBeDefined();
    const status = (await getApp("bad-yaml", "app")).status;
    expect(status?.inventory).toHaveLength(2);
    expect(status?.conditions?.find((c) => c.type === "Ready")).toMatchObject({
      status: "False",
      reason: "RenderFailed",
    });
    const events = await api("GET", "/api/v1/namespaces/bad-yaml/events");
    expect(
      events.items.some(
        (e: { reason: string; message: string }) =>
          e.reason === "RenderFailed" && e.message.includes("guestbook-ui-svc.yaml:4"),
      ),
    ).toBe(true);
  });

  it("a custom resource whose CRD is missing fails alone; the rest apply", async () => {
    const files = {
      ...guestbook(),
      "widget.yaml":
        "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec: {size: 1}\n",
    };
    const r = await repo("no-crd", files);
    await newApp("no-crd", "app", { source: { git: { url: r.url } } });
    const res = await run("no-crd", "app");
    expect(res.outcome).toBe("Failed");
    expect(res.error).toContain("Widget no-crd/w");
    expect(
      await getObject("/apis/apps/v1/namespaces/no-crd/deployments/guestbook-ui"),
    ).toBeDefined();
    const widget = (await getApp("no-crd", "app")).status?.resources?.find(
      (x) => x.kind === "Widget",
    );
    expect(widget).toMatchObject({ status: "Failed" });
    expect(widget?.message).toContain('no kind "Widget" is served in example.com/v1');
  });

  it("a render the API server refuses stays failed on later runs, and its schema errors are not retried", async () => {
    // A port out of range (422) and a field the kind's schema lacks (the API server's 500).
    const r = await repo("refused", {
      "svc.yaml":
        "apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {ports: [{port: 99999}]}\n",
      "cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\nbogusTop: 1\n",
      "ok.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ok}\ndata: {a: b}\n",
    });
    await newApp("refused", "app", { source: { git: { url: r.url } } });
    const first = await run("refused", "app");
    expect(first.outcome).toBe("Failed");
    // One PATCH per object: the schema error is the body's fault, not sent again.
    expect(first.requests.patch).toBe(3 + 1); // + the status write
    const stalled = (a: App) => a.status?.conditions?.find((c) => c.type === "Stalled");
    const ready = (a: App) => a.status?.conditions?.find((c) => c.type === "Ready");
    const failed = await getApp("refused", "app");
    expect(ready(failed)).toMatchObject({ status: "False", reason: "ApplyFailed" });
    expect(ready(failed)?.message).toContain("Service refused/web: invalid: spec.ports[0].port");
    expect(ready(failed)?.message).toContain(".bogusTop: field not declared in schema");
    expect(stalled(failed)?.status).toBe("True");

    // The next runs apply nothing and still say so: never Ready on a render that failed.
    for (let i = 0; i < 2; i++) {
      const again = await run("refused", "app");
      expect(again.outcome).toBe("Failed");
      const app = await getApp("refused", "app");
      expect(ready(app)).toMatchObject({
        status: "False",
        reason: "ApplyFailed",
        message: ready(failed)?.message,
      });
      expect(stalled(app)?.status).toBe("True");
      expect(app.status?.syncStatus).toBe("OutOfSync");
      // The refused objects were never created: Missing, never Healthy.
      expect(app.status?.healthStatus).toBe("Missing");
    }
    expect(await getObject("/api/v1/namespaces/refused/configmaps/ok")).toBeDefined();
    expect(await getObject("/api/v1/namespaces/refused/services/web")).toBeUndefined();

    // A commit that fixes both: applied, Ready.
    await r.commit({
      "svc.yaml":
        "apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {ports: [{port: 80}]}\n",
      "cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\ndata: {a: b}\n",
    });
    const fixed = await run("refused", "app");
    expect(fixed).toMatchObject({ outcome: "Reconciled", syncStatus: "Synced" });
    expect(ready(await getApp("refused", "app"))?.status).toBe("True");
  });

  it("an object aimed at another namespace is refused and nothing is applied", async () => {
    const r = await repo("other-ns", {
      "cm.yaml":
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: sneaky, namespace: kube-system}\n",
    });
    await newApp("other-ns", "app", { source: { git: { url: r.url } } });
    const res = await run("other-ns", "app");
    expect(res.error).toBe(
      'RenderFailed: cm.yaml:1: ConfigMap sneaky: namespace "kube-system" differs from the App\'s destination "other-ns"',
    );
    expect(await getObject("/api/v1/namespaces/kube-system/configmaps/sneaky")).toBeUndefined();
  });

  it("an App the CRD accepts but plumb cannot use is Stalled with the field path", async () => {
    // A cron schedule's fields are checked by plumb (croner), not by the CRD's schema.
    await newApp("stalled", "app", {
      source: { git: { url: "https://git.example/o/r.git" } },
      syncWindows: [{ kind: "deny", schedule: "61 * * * *", duration: "1h" }],
    });
    const res = await run("stalled", "app");
    expect(res.outcome).toBe("Failed");
    const conds = (await getApp("stalled", "app")).status?.conditions ?? [];
    expect(conds.find((c) => c.type === "Stalled")).toMatchObject({
      status: "True",
      reason: "InvalidSpec",
    });
    expect(conds.find((c) => c.type === "Stalled")?.message).toContain(
      "spec.syncWindows.0.schedule: Invalid value for minute: 61",
    );
  });

  it("an unreachable Git server: Ready=False and a retry later with backoff", async () => {
    await newApp("unreachable", "app", {
      source: { git: { url: "http://127.0.0.1:9/org/repo.git" } },
    });
    const before = Date.now();
    const res = await run("unreachable", "app");
    expect(res.outcome).toBe("Failed");
    const status = (await getApp("unreachable", "app")).status;
    expect(status?.conditions?.find((c) => c.type === "Ready")).toMatchObject({
      status: "False",
      reason: "SourceFailed",
    });
    expect(status?.conditions?.find((c) => c.type === "Stalled")?.status).toBe("False");
    expect(status?.failures).toBe(1);
    // The backoff counts from the failed run's time (no next run is stored): the
    // schedule retries it 30 s later.
    const failedAt = Date.parse(status!.lastReconciledAt!);
    expect(failedAt).toBeGreaterThanOrEqual(before - 1000);
    expect(status?.nextReconcileAt).toBeUndefined();
    const row = appRow((await getApp("unreachable", "app")) as App);
    expect(dueAt(row, { at: failedAt + 29_000, periodMs: 60_000 })).toBeUndefined();
    expect(dueAt(row, { at: failedAt + 30_000, periodMs: 60_000 })?.reason).toBe("retry");
  });
});

describe("ownership and safety", () => {
  it("a cluster-scoped ClusterRoleBinding from a tenant's repository is refused", async () => {
    const crb = `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: tenant-admin}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}
subjects: [{kind: ServiceAccount, name: default, namespace: tenant}]
`;
    const r = await repo("tenant", {
      "crb.yaml": crb,
      "cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
    });
    await newApp("tenant", "app", { source: { git: { url: r.url } } });
    const res = await run("tenant", "app");
    expect(res.error).toBe(
      "RenderFailed: crb.yaml:1: ClusterRoleBinding tenant-admin: cluster-scoped ClusterRoleBinding objects are not allowed for Apps (cluster setting PLUMB_ALLOWED_CLUSTER_KINDS)",
    );
    expect(
      await getObject("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/tenant-admin"),
    ).toBeUndefined();
    expect(await getObject("/api/v1/namespaces/tenant/configmaps/c")).toBeUndefined();
  });

  it("an object another App owns is refused, not taken over", async () => {
    const cm = (v: string) =>
      `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\ndata: {owner: ${v}}\n`;
    const first = await repo("owner-1", { "cm.yaml": cm("first") });
    const second = await repo("owner-2", { "cm.yaml": cm("second") });
    await newApp("owners", "first", { source: { git: { url: first.url } } });
    await newApp("owners", "second", { source: { git: { url: second.url } } });
    await run("owners", "first");
    const res = await run("owners", "second");
    expect(res.error).toBe(
      "ApplyFailed: ConfigMap owners/cfg: ConfigMap owners/cfg belongs to App owners/first (in its inventory); an object is managed by one App",
    );
    const live = await getObject("/api/v1/namespaces/owners/configmaps/cfg");
    expect(live?.["data"]).toEqual({ owner: "first" });
    expect(live?.metadata.labels?.["plumb.dev/app"]).toBe("first");
  });

  it("a commit that renders nothing prunes nothing unless allowEmpty", async () => {
    const r = await repo("empty", guestbook());
    await newApp("empty", "app", { source: { git: { url: r.url } } });
    await run("empty", "app");
    await r.commit({
      "guestbook-ui-deployment.yaml": null,
      "guestbook-ui-svc.yaml": null,
      "README.md": "moved\n",
    });
    const res = await run("empty", "app");
    expect(res.error).toMatch(
      /^RenderFailed: revision [0-9a-f]{40} renders no objects; refusing to prune all 2 \(set spec.syncPolicy.allowEmpty to allow it\)$/,
    );
    expect(await getObject("/api/v1/namespaces/empty/services/guestbook-ui")).toBeDefined();
    await patchAppSpec("empty", "app", { syncPolicy: { allowEmpty: true } });
    const allowed = await run("empty", "app");
    expect(allowed.outcome).toBe("Reconciled");
    expect(await getObject("/api/v1/namespaces/empty/services/guestbook-ui")).toBeUndefined();
  });

  it("a Rollback requested while the head does not render still runs", async () => {
    const r = await repo("rb-broken", guestbook());
    await newApp("rb-broken", "app", { source: { git: { url: r.url } } });
    const c1 = await r.head();
    await run("rb-broken", "app");
    const file = "guestbook-ui-deployment.yaml";
    await r.commit({ [file]: guestbook()[file]!.replace("gb-frontend:v5", "gb-frontend:v6") });
    await run("rb-broken", "app");
    await r.commit({ "guestbook-ui-svc.yaml": "kind: [\n" });
    await patchAppSpec("rb-broken", "app", {
      operation: { id: "rb-2", type: "Rollback", revision: c1 },
    });
    const res = await run("rb-broken", "app");
    expect(res.revision).toBe(c1);
    expect(await deploymentImage("rb-broken", "guestbook-ui")).toBe(
      "gcr.io/google-samples/gb-frontend:v5",
    );
    expect((await getApp("rb-broken", "app")).status?.operationState).toMatchObject({
      id: "rb-2",
      phase: "Succeeded",
    });
  });

  it("deleting an App with prune: false keeps its objects", async () => {
    const r = await repo("keep", guestbook());
    await newApp("keep", "app", { source: { git: { url: r.url } }, syncPolicy: { prune: false } });
    await run("keep", "app");
    await api("DELETE", "/apis/plumb.dev/v1alpha1/namespaces/keep/apps/app");
    expect((await run("keep", "app")).outcome).toBe("Finalized");
    expect(await getObject("/api/v1/namespaces/keep/services/guestbook-ui")).toBeDefined();
  });
});

describe("concurrency", () => {
  it("two reconciles of the same App started at once end in the correct state", async () => {
    const r = await repo("race", guestbook());
    await newApp("race", "race", { source: { git: { url: r.url } } });
    const [a, b] = await Promise.all([
      reconcileApp({ namespace: "race", name: "race" }, realPorts({ holder: "run-a" }), new Date()),
      reconcileApp({ namespace: "race", name: "race" }, realPorts({ holder: "run-b" }), new Date()),
    ]);
    expect([a.outcome, b.outcome]).toEqual(["Reconciled", "Reconciled"]);
    const status = (await getApp("race", "race")).status;
    expect(status?.revision).toBe(await r.head());
    expect(status?.inventory).toHaveLength(2);
    expect(status?.resources).toHaveLength(2);
    expect(status?.syncStatus).toBe("Synced");
    expect(status?.lastSyncedAt).toBeDefined();
  });
});
