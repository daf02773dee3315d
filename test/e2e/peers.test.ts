// What Argo CD and Flux users rely on, on the real control plane: ignoreDifferences, CEL health
// checks (Flux's healthCheckExprs) and dependsOn.
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRunner } from "../../functions/node-runs.ts";
import { type RunResult, reconcileApp } from "../../src/reconcile/index.ts";
import {
  fixtureFiles,
  type GitServer,
  REAL_FIXTURES,
  startGitServer,
} from "../support/git-server.ts";
import {
  api,
  createApp,
  createNamespace,
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
const minutes = (m: number) => new Date(Date.now() + m * 60_000);
/** A run of App ns/name; `compare`: a scheduled run whose slot came (drift compared). */
const run = (ns: string, name = "app", at = new Date(), compare = false) =>
  reconcileApp({ namespace: ns, name }, realPorts(CLUSTER_KINDS), at, { compare });
/** The cluster setting that lets Apps apply CRDs (PLUMB_ALLOWED_CLUSTER_KINDS). */
const CLUSTER_KINDS = { allowedClusterKinds: ["CustomResourceDefinition"] };

describe("ignoreDifferences", () => {
  it("leaves an ignored field as changed by hand, reports no drift for it, and corrects the rest", async () => {
    const repo = await git.createRepo("ignore", guestbook());
    await createNamespace("ignore");
    await createApp("ignore", "app", {
      source: { git: { url: repo.url } },
      syncPolicy: { selfHeal: true },
      ignoreDifferences: [{ group: "apps", kind: "Deployment", jsonPointers: ["/spec/replicas"] }],
    });
    await run("ignore");
    const path = "/apis/apps/v1/namespaces/ignore/deployments/guestbook-ui";
    const spec = async () =>
      (await getObject(path))!["spec"] as { replicas: number; revisionHistoryLimit: number };
    expect(await spec()).toMatchObject({ replicas: 1, revisionHistoryLimit: 3 });

    // By hand, as `kubectl edit` would: one ignored field, one that is not.
    await api(
      "PATCH",
      `${path}?fieldManager=kubectl-edit`,
      { spec: { replicas: 4, revisionHistoryLimit: 7 } },
      "application/merge-patch+json",
    );
    await run("ignore", "app", minutes(10), true);
    expect(await spec()).toMatchObject({ replicas: 4, revisionHistoryLimit: 3 });
    const healed = (await getApp("ignore", "app")).status;
    expect(healed?.lastDriftCorrection?.objects).toEqual([
      "Deployment ignore/guestbook-ui: spec.revisionHistoryLimit by kubectl-edit",
    ]);

    // Only the ignored field differs now: no drift, Synced, nothing corrected.
    await run("ignore", "app", minutes(20), true);
    const steady = (await getApp("ignore", "app")).status;
    expect(steady?.drift).toBeUndefined();
    expect(steady?.syncStatus).toBe("Synced");
    expect(steady?.resources?.find((r) => r.kind === "Deployment")).toMatchObject({
      status: "Synced",
    });
    expect(steady?.lastDriftCorrection).toEqual(healed?.lastDriftCorrection);
    expect((await spec()).replicas).toBe(4);

    // A new commit changes the Deployment: it is applied, the ignored field keeps its live value.
    const manifest = guestbook()["guestbook-ui-deployment.yaml"]!;
    await repo.commit({
      "guestbook-ui-deployment.yaml": manifest.replace(
        "revisionHistoryLimit: 3",
        "revisionHistoryLimit: 5",
      ),
    });
    await run("ignore", "app", minutes(30), true);
    expect(await spec()).toMatchObject({ replicas: 4, revisionHistoryLimit: 5 });
    expect((await getApp("ignore", "app")).status?.syncStatus).toBe("Synced");
  });
});

const WIDGET_CRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.peers.example.com
spec:
  group: peers.example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
    - name: v1
      served: true
      storage: true
      subresources: {status: {}}
      schema:
        openAPIV3Schema:
          type: object
          x-kubernetes-preserve-unknown-fields: true
`;

const WIDGET = `apiVersion: peers.example.com/v1
kind: Widget
metadata:
  name: w
spec:
  size: 1
`;

describe("healthChecks", () => {
  it("judges a custom resource by its CEL expressions: Healthy only when current holds, Degraded on failed", async () => {
    const repo = await git.createRepo("celhealth", {
      "crd.yaml": WIDGET_CRD,
      "widget.yaml": WIDGET,
    });
    await createNamespace("celhealth");
    await createApp("celhealth", "app", {
      source: { git: { url: repo.url } },
      healthChecks: [
        {
          apiVersion: "peers.example.com/v1",
          kind: "Widget",
          current: "has(self.status) && self.status.phase == 'Ready'",
          failed: "has(self.status) && self.status.phase == 'Failed'",
        },
      ],
    });
    await run("celhealth");
    const widgetLine = async () => {
      const status = (await getApp("celhealth", "app")).status;
      const line = status?.resources?.find((r) => r.kind === "Widget");
      return { app: status?.healthStatus, health: line?.health, message: line?.message };
    };
    expect(await widgetLine()).toEqual({
      app: "Progressing",
      health: "Progressing",
      message: "waiting for healthChecks[0].current",
    });

    // The Widget's controller (here: the test) reports through the status subresource.
    const setPhase = (phase: string) =>
      api(
        "PATCH",
        "/apis/peers.example.com/v1/namespaces/celhealth/widgets/w/status",
        { status: { phase } },
        "application/merge-patch+json",
      );
    await setPhase("Ready");
    await run("celhealth", "app", minutes(1));
    expect(await widgetLine()).toEqual({
      app: "Healthy",
      health: "Healthy",
      message: "healthChecks[0].current holds: has(self.status) && self.status.phase == 'Ready'",
    });

    await setPhase("Failed");
    await run("celhealth", "app", minutes(2));
    expect(await widgetLine()).toEqual({
      app: "Degraded",
      health: "Degraded",
      message: "healthChecks[0].failed holds: has(self.status) && self.status.phase == 'Failed'",
    });
  });

  it("refuses an expression that does not parse: InvalidSpec naming it and where", async () => {
    await createNamespace("celbad");
    const repo = await git.createRepo("celbad", guestbook());
    await createApp("celbad", "app", {
      source: { git: { url: repo.url } },
      healthChecks: [
        { apiVersion: "peers.example.com/v1", kind: "Widget", current: "self.status.(" },
      ],
    });
    await run("celbad");
    const ready = (await getApp("celbad", "app")).status?.conditions?.find(
      (c) => c.type === "Ready",
    );
    expect(ready).toMatchObject({
      status: "False",
      reason: "InvalidSpec",
      message: `spec.healthChecks[0].current: "self.status.(": Expected IDENTIFIER, got LPAREN at position 12`,
    });
    expect(
      await getObject("/apis/apps/v1/namespaces/celbad/deployments/guestbook-ui"),
    ).toBeUndefined();
  });
});

const configMap = (name: string) => ({
  [`${name}.yaml`]: `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  k: v\n`,
});
const readyOf = async (ns: string, name: string) =>
  (await getApp(ns, name)).status?.conditions?.find((c) => c.type === "Ready");

describe("dependsOn", () => {
  it("holds B until A is Ready, saying why, and runs B when A's run makes it Ready", async () => {
    await createNamespace("depends");
    const repoA = await git.createRepo("depends-a", configMap("a"));
    const repoB = await git.createRepo("depends-b", configMap("b"));
    await createApp("depends", "b", {
      source: { git: { url: repoB.url } },
      dependsOn: [{ name: "a" }],
    });
    await run("depends", "b");
    expect(await readyOf("depends", "b")).toMatchObject({
      status: "False",
      reason: "DependencyNotReady",
      message: "dependency 'depends/a' not found",
    });
    await createApp("depends", "a", { source: { git: { url: repoA.url } } });
    await run("depends", "b", minutes(1));
    expect(await readyOf("depends", "b")).toMatchObject({
      reason: "DependencyNotReady",
      message: "dependency 'depends/a' is not ready",
    });
    expect(await getObject("/api/v1/namespaces/depends/configmaps/b")).toBeUndefined();

    // plumb serve's runner: A's run makes it Ready and runs B straight away.
    const lines: RunResult[] = [];
    const runner = createRunner(
      () => realPorts(),
      (r) => lines.push(r),
      () => {},
    );
    await runner.reconcile({ namespace: "depends", name: "a" });
    expect(lines[0]).toMatchObject({ app: "depends/a", dependants: ["depends/b"] });
    await waitFor("B Ready", async () => (await readyOf("depends", "b"))?.status === "True");
    expect(await getObject("/api/v1/namespaces/depends/configmaps/b")).toBeDefined();
    runner.stop();

    // A readyExpr must hold as well (dep: the App depended on).
    await patchAppSpec("depends", "b", {
      dependsOn: [{ name: "a", readyExpr: "dep.spec.interval == '1h'" }],
    });
    await run("depends", "b", minutes(2));
    expect(await readyOf("depends", "b")).toMatchObject({
      reason: "DependencyNotReady",
      message: "dependency 'depends/a' is not ready according to readyExpr",
    });
  });

  it("refuses a dependency chain that returns to the App, naming the cycle", async () => {
    await createNamespace("cycle");
    const repo = await git.createRepo("cycle", configMap("c"));
    await createApp("cycle", "c", {
      source: { git: { url: repo.url } },
      dependsOn: [{ name: "d" }],
    });
    await createApp("cycle", "d", {
      source: { git: { url: repo.url } },
      dependsOn: [{ name: "e" }],
    });
    await createApp("cycle", "e", {
      source: { git: { url: repo.url } },
      dependsOn: [{ name: "c" }],
    });
    await run("cycle", "c");
    expect(await readyOf("cycle", "c")).toMatchObject({
      status: "False",
      reason: "InvalidSpec",
      message: "spec.dependsOn: a dependency cycle: cycle/c → cycle/d → cycle/e → cycle/c",
    });
  });
});
