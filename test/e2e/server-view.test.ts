// Apply and drift as the API server sees them: each kind's example on the real
// control plane, with the right value asserted. Every run owes a full comparison (compare: true,
// as when the App's slot comes).
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { App } from "../../src/app/index.ts";
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
  kubectl,
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

/** The value at a dotted path ("spec.replicas", "spec.template.spec.containers.0.image"). */
function at(obj: unknown, path: string): unknown {
  let v: unknown = obj;
  for (const k of path.split(".")) v = (v as Record<string, unknown> | undefined)?.[k];
  return v;
}

/** The run's clock: at least 2 s after the last run's. */
let clock = Date.now();
const tick = () => {
  clock = Math.max(clock + 2000, Date.now());
  return new Date(clock);
};
/** A run that makes a full comparison (as a scheduled run whose slot came). */
const run = (ns: string, name = "app", extra = {}): Promise<RunResult> =>
  reconcileApp({ namespace: ns, name }, realPorts(extra), tick(), { compare: true });

async function newApp(
  ns: string,
  files: Record<string, string>,
  spec: Record<string, unknown> = {},
  path?: string,
  name = "app",
): Promise<TestRepo> {
  const repo = await git.createRepo(`${ns}-${name}`, files, { allowSha1InWant: true });
  await createNamespace(ns);
  const res = await createApp(ns, name, {
    source: { git: { url: repo.url, ...(path ? { path } : {}) } },
    interval: "1s",
    ...spec,
  });
  if (res.status !== 201) throw new Error(`create App: ${res.status} ${JSON.stringify(res.body)}`);
  return repo;
}

/** Reconciles (every 500 ms) until `pred` holds for the App. */
async function reconcileUntil(
  ns: string,
  what: string,
  pred: (a: App) => boolean,
  name = "app",
): Promise<App> {
  return waitFor(what, async () => {
    await run(ns, name);
    const a = await getApp(ns, name);
    return pred(a) ? a : undefined;
  });
}

async function events(
  ns: string,
): Promise<Array<{ type: string; reason: string; message: string }>> {
  return (await api("GET", `/api/v1/namespaces/${ns}/events`)).items;
}

const cm = (name: string, data: Record<string, string>) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n${Object.entries(data)
    .map(([k, v]) => `  ${k}: "${v}"`)
    .join("\n")}\n`;

const normalised = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
  strategy:
    rollingUpdate: {maxSurge: "25%", maxUnavailable: 0}
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: web
          image: nginx:1.27
          env: []
          ports:
            - {name: http, containerPort: 8080}
          resources:
            requests: {cpu: 1000m, memory: 0.5Gi}
            limits: {cpu: 2}
          readinessProbe:
            httpGet: {path: /, port: http}
            initialDelaySeconds: 0
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector: {app: web}
  ports:
    - port: 80
      targetPort: http
`;

/** Another field manager's server-side apply of the web container's cpu request. */
async function otherSetsCpu(ns: string, cpu: string): Promise<void> {
  await api(
    "PATCH",
    `/apis/apps/v1/namespaces/${ns}/deployments/web?fieldManager=other&force=true`,
    {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "web", namespace: ns },
      spec: {
        template: { spec: { containers: [{ name: "web", resources: { requests: { cpu } } }] } },
      },
    },
    "application/apply-patch+yaml",
  );
}

describe("values the API server normalises are not drift", () => {
  it("a zero probe delay, env: [], 1000m co-owned as 1: Synced, no write, no Event; a real change is reported with its manager", async () => {
    const ns = "normalised";
    await newApp(ns, { "web.yaml": normalised }, { syncPolicy: { selfHeal: true } });
    const first = await run(ns);
    expect(first.error).toBeUndefined();
    expect(first).toMatchObject({ outcome: "Reconciled", syncStatus: "Synced" });
    await otherSetsCpu(ns, "1");
    for (let i = 0; i < 3; i++) {
      const res = await run(ns);
      expect(res).toMatchObject({ outcome: "Reconciled", syncStatus: "Synced" });
      expect(res.requests.patch).toBe(0);
      expect(res.requests.create).toBe(0);
      const status = (await getApp(ns, "app")).status;
      expect(status?.drift).toBeUndefined();
      expect(status?.resources?.every((r) => r.status === "Synced")).toBe(true);
    }
    expect((await events(ns)).map((e) => e.reason)).not.toContain("DriftCorrected");

    // A real change by another manager is reported with its manager (selfHeal off to see it).
    await patchAppSpec(ns, "app", { syncPolicy: { selfHeal: false } });
    await run(ns);
    await otherSetsCpu(ns, "2");
    await run(ns);
    const status = (await getApp(ns, "app")).status;
    expect(status?.syncStatus).toBe("OutOfSync");
    expect(status?.drift).toEqual([
      {
        apiVersion: "apps/v1",
        kind: "Deployment",
        namespace: ns,
        name: "web",
        fields: [
          {
            path: "spec.template.spec.containers[name=web].resources.requests.cpu",
            desired: "1",
            live: "2",
            manager: "other",
          },
        ],
      },
    ]);
  });
});

const scaled = (replicas: number) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: ${replicas}
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: web
          image: nginx:1.27
          resources:
            requests: {cpu: 100m}
`;
const autoscaler = (min: number) => `apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: ${min}
  maxReplicas: 6
  metrics:
    - type: Resource
      resource: {name: cpu, target: {type: Utilization, averageUtilization: 80}}
`;
const liveReplicas = async (ns: string) =>
  at(await getObject(`/apis/apps/v1/namespaces/${ns}/deployments/web`), "spec.replicas");

describe("fields another controller owns", () => {
  it("an HPA in the render owns replicas: later applies leave them, and they are never drift", async () => {
    const ns = "autoscaled";
    const repo = await newApp(
      ns,
      { "web.yaml": scaled(1), "hpa.yaml": autoscaler(2) },
      { syncPolicy: { selfHeal: true } },
    );
    expect(await run(ns)).toMatchObject({ outcome: "Reconciled", syncStatus: "Synced" });
    // The HPA controller raises replicas to its minimum (no metrics are needed for that).
    await waitFor("HPA scaled to 2", async () => (await liveReplicas(ns)) === 2);
    kubectl(["scale", "-n", ns, "deployment/web", "--replicas=4"]);
    expect(await liveReplicas(ns)).toBe(4);

    // Full comparisons (selfHeal on) see no drift; a new unrelated commit keeps 4 replicas.
    await run(ns);
    await repo.commit({ "cm.yaml": cm("unrelated", { v: "1" }) });
    const applied = await run(ns);
    expect(applied).toMatchObject({
      outcome: "Reconciled",
      syncStatus: "Synced",
      revision: await repo.head(),
    });
    expect(await liveReplicas(ns)).toBe(4);
    await run(ns);
    expect(await liveReplicas(ns)).toBe(4);
    const status = (await getApp(ns, "app")).status;
    expect(status?.syncStatus).toBe("Synced");
    expect(status?.drift).toBeUndefined();
    expect((await events(ns)).map((e) => e.reason)).not.toContain("DriftCorrected");
  });

  it("an HPA added to a running workload: its replicas are handed over, not reset", async () => {
    const ns = "autoscaled-later";
    const repo = await newApp(ns, { "web.yaml": scaled(3) });
    await run(ns);
    expect(await liveReplicas(ns)).toBe(3);
    // 3 is within the HPA's range, so the HPA (without metrics) leaves it.
    await repo.commit({ "hpa.yaml": autoscaler(2) });
    await run(ns);
    await repo.commit({ "cm.yaml": cm("unrelated", { v: "1" }) });
    await run(ns);
    expect(await liveReplicas(ns)).toBe(3);
    const replicaOwners = async () =>
      (
        (await getObject(`/apis/apps/v1/namespaces/${ns}/deployments/web`))?.metadata
          .managedFields ?? []
      )
        .filter((m) => JSON.stringify(m.fieldsV1 ?? {}).includes('"f:replicas"') && !m.subresource)
        .map((m) => m.manager);
    expect(await replicaOwners()).toContain("plumb-replicas-handover");
    // The workload is applied again only when its own form changes: then without
    // spec.replicas, which stay with the hand-over manager.
    await repo.commit({ "web.yaml": scaled(3).replace("nginx:1.27", "nginx:1.28") });
    await run(ns);
    expect(await liveReplicas(ns)).toBe(3);
    expect(await replicaOwners()).toEqual(["plumb-replicas-handover"]);
    expect((await getApp(ns, "app")).status?.syncStatus).toBe("Synced");
  });
});

describe("fields left behind by the previous owner (client-side kubectl apply)", () => {
  it("plumb takes a client-side-applied ConfigMap over; removing a key in Git removes it live", async () => {
    await createNamespace("takeover");
    kubectl(["apply", "-n", "takeover", "-f", "-"], cm("settings", { key: "a", legacy: "b" }));
    const before = await getObject("/api/v1/namespaces/takeover/configmaps/settings");
    expect(before?.metadata.managedFields?.map((m) => m.manager)).toEqual([
      "kubectl-client-side-apply",
    ]);
    // An object made by hand with kubectl is taken over without spec.adopt (that is for
    // objects another tool manages); its client-side fields become plumb's as
    // kubectl's and client-go's csaupgrade move them.
    const repo = await newApp("takeover", { "cm.yaml": cm("settings", { key: "a", legacy: "b" }) });
    expect(await run("takeover")).toMatchObject({ outcome: "Reconciled", syncStatus: "Synced" });
    const taken = await getObject("/api/v1/namespaces/takeover/configmaps/settings");
    expect(taken?.metadata.managedFields?.map((m) => `${m.manager}/${m.operation}`)).toEqual([
      "plumb/Apply",
    ]);

    await repo.commit({ "cm.yaml": cm("settings", { key: "a" }) });
    expect(await run("takeover")).toMatchObject({ outcome: "Reconciled", syncStatus: "Synced" });
    const live = await getObject("/api/v1/namespaces/takeover/configmaps/settings");
    expect(live?.["data"]).toEqual({ key: "a" });
    expect(live?.metadata.annotations?.["kubectl.kubernetes.io/last-applied-configuration"]).toBe(
      undefined,
    );
    expect((await getApp("takeover", "app")).status?.syncStatus).toBe("Synced");
  });
});

const job = (image: string, annotations = "") => `apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
${annotations}spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: migrate
          image: ${image}
`;

describe("immutable fields", () => {
  it("a completed Job whose image changes: a short Stalled condition, a Warning Event, its own health; recreated on opt-in", async () => {
    const ns = "immutable";
    const repo = await newApp(ns, { "job.yaml": job("busybox:1") });
    const done = await reconcileUntil(
      ns,
      "Job complete",
      (a) => a.status?.healthStatus === "Healthy",
    );
    expect(done.status?.syncStatus).toBe("Synced");
    const first = await getObject(`/apis/batch/v1/namespaces/${ns}/jobs/migrate`);

    await repo.commit({ "job.yaml": job("busybox:2") });
    const failed = await run(ns);
    expect(failed.outcome).toBe("Failed");
    const expected =
      'Job immutable/migrate: spec.template is immutable; set the annotation plumb.dev/recreate: "true" on it to delete and recreate it';
    expect(failed.error).toBe(`ApplyFailed: ${expected}`);
    let status = (await getApp(ns, "app")).status;
    expect(status?.conditions?.find((c) => c.type === "Stalled")).toMatchObject({
      status: "True",
      reason: "ApplyFailed",
    });
    expect(status?.conditions?.find((c) => c.type === "Stalled")?.message).toContain(expected);
    expect(status?.conditions?.find((c) => c.type === "Ready")?.message).toBe(expected);
    // The Job exists: it keeps its own health, never Missing.
    expect(status?.resources?.find((r) => r.kind === "Job")).toMatchObject({
      status: "Failed",
      health: "Healthy",
      message: expect.stringContaining("spec.template is immutable"),
    });
    expect(status?.healthStatus).toBe("Healthy");
    const warnings = (await events(ns)).filter((e) => e.reason === "ApplyFailed");
    expect(warnings.map((e) => [e.type, e.message])).toEqual([["Warning", expected]]);
    expect(JSON.stringify(status)).not.toContain("Invalid value");

    // Terminal until the render changes: the next runs do not apply it again.
    const again = await run(ns);
    expect(again.requests.patch).toBeLessThanOrEqual(1); // at most the comparison's dry run
    status = (await getApp(ns, "app")).status;
    expect(status?.conditions?.find((c) => c.type === "Stalled")?.status).toBe("True");
    expect((await events(ns)).filter((e) => e.reason === "ApplyFailed")).toHaveLength(1);
    const still = await getObject(`/apis/batch/v1/namespaces/${ns}/jobs/migrate`);
    expect(still?.metadata.uid).toBe(first?.metadata.uid);

    // Opt in: the Job is deleted and created again, and the new one runs.
    await repo.commit({
      "job.yaml": job("busybox:2", '  annotations:\n    plumb.dev/recreate: "true"\n'),
    });
    expect(await run(ns)).toMatchObject({ outcome: "Reconciled", syncStatus: "Synced" });
    const recreated = await getObject(`/apis/batch/v1/namespaces/${ns}/jobs/migrate`);
    expect(recreated?.metadata.uid).not.toBe(first?.metadata.uid);
    const image = at(recreated, "spec.template.spec.containers.0.image");
    expect(image).toBe("busybox:2");
    expect((await events(ns)).map((e) => e.reason)).toContain("Recreated");
    const healthy = await reconcileUntil(
      ns,
      "new Job complete",
      (a) => a.status?.healthStatus === "Healthy",
    );
    expect(healthy.status?.conditions?.find((c) => c.type === "Stalled")?.status).toBe("False");
    const complete = await getObject(`/apis/batch/v1/namespaces/${ns}/jobs/migrate`);
    expect(at(complete, "status.succeeded")).toBe(1);
  });
});

const ttlJob = (image: string) => `apiVersion: batch/v1
kind: Job
metadata:
  name: seed
spec:
  ttlSecondsAfterFinished: 0
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: seed
          image: ${image}
`;

describe("objects that finish and go away", () => {
  it("a Job its TTL removed is done: Synced, not recreated by selfHeal or a new commit, until its spec changes", async () => {
    const ns = "ttl";
    const job = `/apis/batch/v1/namespaces/${ns}/jobs/seed`;
    const repo = await newApp(
      ns,
      { "job.yaml": ttlJob("busybox:1"), "cm.yaml": cm("settings", { v: "1" }) },
      { syncPolicy: { selfHeal: true } },
    );
    await run(ns);
    const first = await getObject(job);
    expect(first).toBeDefined();
    await waitFor(
      "the TTL controller removed the finished Job",
      async () => !(await getObject(job)),
    );

    for (let i = 0; i < 2; i++) {
      expect(await run(ns)).toMatchObject({
        outcome: "Reconciled",
        syncStatus: "Synced",
        healthStatus: "Healthy",
      });
    }
    expect(await getObject(job)).toBeUndefined();
    let status = (await getApp(ns, "app")).status;
    expect(status?.resources?.find((r) => r.kind === "Job")).toMatchObject({
      status: "Synced",
      health: "Healthy",
      message: "finished; removed after its ttlSecondsAfterFinished",
    });
    expect(status?.drift).toBeUndefined();
    expect(status?.inventory?.find((r) => r.kind === "Job")?.finished).toBe(true);
    expect((await events(ns)).map((e) => e.reason)).not.toContain("DriftCorrected");

    // A new commit that does not change the Job applies the rest, not the Job.
    await repo.commit({ "cm.yaml": cm("settings", { v: "2" }) });
    expect(await run(ns)).toMatchObject({ syncStatus: "Synced", revision: await repo.head() });
    expect(await getObject(job)).toBeUndefined();
    expect(at(await getObject(`/api/v1/namespaces/${ns}/configmaps/settings`), "data.v")).toBe("2");

    // A changed Job is a new one: it is created and runs.
    await repo.commit({ "job.yaml": ttlJob("busybox:2") });
    await run(ns);
    const second = await getObject(job);
    expect(at(second, "spec.template.spec.containers.0.image")).toBe("busybox:2");
    expect(second?.metadata.uid).not.toBe(first?.metadata.uid);
    status = (await getApp(ns, "app")).status;
    expect(status?.inventory?.find((r) => r.kind === "Job")?.finished).toBeUndefined();
    await waitFor("the new Job ran and its TTL removed it", async () => !(await getObject(job)));
    expect(await run(ns)).toMatchObject({ syncStatus: "Synced", healthStatus: "Healthy" });
    expect(await getObject(job)).toBeUndefined();
  });
});

describe("a Namespace two Apps render", () => {
  it("both see it Healthy, its labels do not flip; deleting one keeps it with an Event naming the other", async () => {
    const ns = "team-a";
    const files = (name: string) => ({
      "ns.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-a\n",
      "cm.yaml": cm(`from-${name}`, { v: "1" }),
    });
    await newApp(ns, files("a"), {}, undefined, "demo-a");
    await newApp(ns, files("b"), {}, undefined, "demo-b");
    const labels = async () => (await getObject("/api/v1/namespaces/team-a"))?.metadata.labels;
    for (let i = 0; i < 2; i++) {
      for (const name of ["demo-a", "demo-b"]) {
        expect(await run(ns, name)).toMatchObject({
          outcome: "Reconciled",
          syncStatus: "Synced",
          healthStatus: "Healthy",
        });
        expect(await labels()).toMatchObject({
          "plumb.dev/app": "demo-a",
          "plumb.dev/app-namespace": "team-a",
        });
      }
    }
    for (const name of ["demo-a", "demo-b"]) {
      const status = (await getApp(ns, name)).status;
      expect(status?.resources?.find((r) => r.kind === "Namespace")).toMatchObject({
        status: "Synced",
        health: "Healthy",
      });
      expect(status?.drift).toBeUndefined();
      expect(status?.inventory?.some((r) => r.kind === "Namespace")).toBe(true);
    }

    await api("DELETE", "/apis/plumb.dev/v1alpha1/namespaces/team-a/apps/demo-a");
    expect((await run(ns, "demo-a")).outcome).toBe("Finalized");
    const kept = (await events(ns)).filter((e) => e.reason === "PruneSkipped");
    expect(kept.map((e) => e.message)).toEqual([
      "kept Namespace team-a: also rendered by team-a/demo-b",
    ]);
    expect(at(await getObject("/api/v1/namespaces/team-a"), "status.phase")).toBe("Active");
    expect(await getObject("/api/v1/namespaces/team-a/configmaps/from-a")).toBeUndefined();
    expect(await run(ns, "demo-b")).toMatchObject({
      syncStatus: "Synced",
      healthStatus: "Healthy",
    });
  });
});

describe("a commit that changes nothing for this App (monorepo)", () => {
  const monorepo = (): Record<string, string> => ({
    ...Object.fromEntries(Object.entries(guestbook()).map(([p, c]) => [`apps/demo/${p}`, c])),
    "apps/other/cm.yaml": cm("other", { v: "1" }),
  });
  const otherCommit = (repo: TestRepo, v: string) =>
    repo.commit({ "apps/other/cm.yaml": cm("other", { v }) });
  const replicas = async (ns: string) =>
    at(await getObject(`/apis/apps/v1/namespaces/${ns}/deployments/guestbook-ui`), "spec.replicas");

  it("is observed, not applied: a kubectl edit stays with selfHeal off; nothing is held", async () => {
    const ns = "mono-edit";
    const repo = await newApp(ns, monorepo(), {}, "apps/demo");
    const c1 = await repo.head();
    expect(await run(ns)).toMatchObject({ syncStatus: "Synced", revision: c1 });
    await api(
      "PATCH",
      `/apis/apps/v1/namespaces/${ns}/deployments/guestbook-ui?fieldManager=kubectl-edit`,
      { spec: { replicas: 3 } },
      "application/merge-patch+json",
    );
    const c2 = await otherCommit(repo, "2");
    await run(ns);
    expect(await replicas(ns)).toBe(3);
    let status = (await getApp(ns, "app")).status;
    expect(status?.observedRevision).toBe(c2);
    expect(status?.revision).toBe(c1);
    expect((await events(ns)).filter((e) => e.reason === "Applied")).toHaveLength(1);

    // requiresApproval: a commit that changes nothing here is not held, nothing is announced.
    await patchAppSpec(ns, "app", { syncPolicy: { requiresApproval: true } });
    await run(ns);
    const c3 = await otherCommit(repo, "3");
    await run(ns);
    status = (await getApp(ns, "app")).status;
    expect(status?.observedRevision).toBe(c3);
    expect(status?.heldRevision).toBeUndefined();
    expect(status?.syncStatus).not.toBe("Held");
    expect((await events(ns)).filter((e) => e.reason === "Held")).toHaveLength(0);
    expect(await replicas(ns)).toBe(3);
  });

  it("does not undo a Rollback", async () => {
    const ns = "mono-rb";
    const repo = await newApp(ns, monorepo(), {}, "apps/demo");
    const c1 = await repo.head();
    await run(ns);
    const file = "apps/demo/guestbook-ui-deployment.yaml";
    const c2 = await repo.commit({
      [file]: monorepo()[file]!.replace("gb-frontend:v5", "gb-frontend:v6"),
    });
    await run(ns);
    expect(await deploymentImage(ns, "guestbook-ui")).toBe("gcr.io/google-samples/gb-frontend:v6");
    await patchAppSpec(ns, "app", { operation: { id: "rb-1", type: "Rollback", revision: c1 } });
    expect(await run(ns)).toMatchObject({ revision: c1 });
    expect(await deploymentImage(ns, "guestbook-ui")).toBe("gcr.io/google-samples/gb-frontend:v5");

    const c3 = await otherCommit(repo, "3");
    await run(ns);
    await run(ns);
    expect(await deploymentImage(ns, "guestbook-ui")).toBe("gcr.io/google-samples/gb-frontend:v5");
    const status = (await getApp(ns, "app")).status;
    expect(status).toMatchObject({ revision: c1, observedRevision: c3, rolledBackFrom: c2 });
    expect((await events(ns)).filter((e) => e.reason === "Applied")).toHaveLength(3);
  });
});
