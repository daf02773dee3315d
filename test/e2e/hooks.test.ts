// Helm hook semantics on the real control plane: install hooks on the first apply only,
// upgrade hooks on every later one, delete policies as Helm reads them, delete hooks around
// the finalizer's prune, and sync waves applied in order across runs.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createNodeEngines, type NodeEngines } from "../../src/engines/node.ts";
import { type Ports, reconcileApp } from "../../src/reconcile/index.ts";
import { type GitServer, startGitServer } from "../support/git-server.ts";
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
let engines: NodeEngines;
beforeAll(async () => {
  git = await startGitServer();
  engines = createNodeEngines();
});
afterAll(async () => {
  await engines?.close();
  await git?.stop();
});

/**
 * Ports whose cluster records what plumb wrote: every Job applied (name and the uid the server
 * gave), and every apply and delete in order ("apply Kind/name", "delete Kind/name").
 */
function recordingPorts(): {
  ports: Ports;
  jobs: Array<{ name: string; uid: string }>;
  writes: string[];
} {
  const ports = realPorts({ engines });
  const jobs: Array<{ name: string; uid: string }> = [];
  const writes: string[] = [];
  const apply = ports.kube.apply.bind(ports.kube);
  ports.kube.apply = async (obj, options) => {
    const stored = await apply(obj, options);
    if (options?.dryRun) return stored;
    writes.push(`apply ${obj.kind}/${obj.metadata.name}`);
    if (obj.kind === "Job") {
      jobs.push({ name: stored.metadata.name, uid: stored.metadata.uid as string });
    }
    return stored;
  };
  const del = ports.kube.delete.bind(ports.kube);
  ports.kube.delete = async (ref, options) => {
    const done = await del(ref, options);
    if (done === "deleted") writes.push(`delete ${ref.kind}/${ref.name}`);
    return done;
  };
  return { ports, jobs, writes };
}

/** The Warning Events on App ns/name with `reason`. */
async function warnings(ns: string, name: string, reason: string): Promise<string[]> {
  const list = await api(
    "GET",
    `/api/v1/namespaces/${ns}/events?fieldSelector=involvedObject.name=${name},reason=${reason}`,
  );
  return (list.items as Array<{ type: string; message: string }>)
    .filter((e) => e.type === "Warning")
    .map((e) => e.message);
}

const run = (ns: string, name: string, ports: Ports, compare = false) =>
  reconcileApp({ namespace: ns, name }, ports, new Date(), { compare });

/** A hook Job (the simulated node completes it; image busybox:fail fails it). */
function hookJob(name: string, hook: string, policy?: string, image = "busybox"): string {
  return [
    "apiVersion: batch/v1",
    "kind: Job",
    "metadata:",
    `  name: ${name}`,
    "  annotations:",
    `    helm.sh/hook: ${hook}`,
    ...(policy ? [`    helm.sh/hook-delete-policy: ${policy}`] : []),
    "spec:",
    "  backoffLimit: 0",
    "  template:",
    "    spec:",
    "      restartPolicy: Never",
    `      containers: [{name: main, image: "${image}"}]`,
    "",
  ].join("\n");
}

const job = (ns: string, name: string) => getObject(`/apis/batch/v1/namespaces/${ns}/jobs/${name}`);

describe("Helm hooks", () => {
  it("runs install hooks on the first apply only, upgrade hooks after it; hook-succeeded deletes a hook once it ran", async () => {
    const ns = "hooks-events";
    const files = {
      "Chart.yaml": "apiVersion: v2\nname: events\nversion: 1.0.0\n",
      "templates/cm.yaml":
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  v: '{{ .Values.v | default 1 }}'\n",
      "templates/install.yaml": hookJob("install", "pre-install"),
      "templates/upgrade.yaml": hookJob("upgrade", "pre-upgrade"),
      "templates/migrate.yaml": hookJob("migrate", "pre-install,pre-upgrade", "hook-succeeded"),
    };
    const repo = await git.createRepo(ns, files, { allowSha1InWant: true });
    await createNamespace(ns);
    expect(
      (await createApp(ns, "app", { source: { git: { url: repo.url, ref: "main" } } })).status,
    ).toBe(201);

    // Install: pre-install and the migration run; the pre-upgrade hook does not.
    const { ports, jobs } = recordingPorts();
    expect(await run(ns, "app", ports)).toMatchObject({
      outcome: "Reconciled",
      syncStatus: "Synced",
    });
    expect(jobs.map((j) => j.name).sort()).toEqual(["install", "migrate"]);
    const install = await job(ns, "install");
    expect(install?.metadata.uid).toBe(jobs.find((j) => j.name === "install")?.uid);
    expect(await job(ns, "upgrade")).toBeUndefined();
    // hook-succeeded: deleted once it ran, recorded as done (not Missing, not drift).
    expect(await job(ns, "migrate")).toBeUndefined();
    const installed = (await getApp(ns, "app")).status!;
    expect(installed.inventory?.find((e) => e.name === "migrate")?.finished).toBe(true);
    expect(installed.healthStatus).toBe("Healthy");
    expect(installed.resources?.find((r) => r.name === "migrate")).toMatchObject({
      status: "Synced",
      health: "Healthy",
      message:
        "hook not present: it runs on its events only, and its delete policy removes it once run",
    });

    // A full comparison of the same render: no drift, nothing applied, no hook runs.
    const steady = recordingPorts();
    expect(await run(ns, "app", steady.ports, true)).toMatchObject({
      outcome: "Reconciled",
      syncStatus: "Synced",
    });
    expect(steady.jobs).toEqual([]);
    expect((await getApp(ns, "app")).status?.drift ?? []).toEqual([]);

    // Upgrade: the pre-install Job is left as it is, the pre-upgrade Job is created, the
    // migration runs again (a new Job) and is deleted again.
    await patchAppSpec(ns, "app", { source: { helm: { values: { v: 2 } } } });
    const upgrade = recordingPorts();
    expect(await run(ns, "app", upgrade.ports)).toMatchObject({
      outcome: "Reconciled",
      syncStatus: "Synced",
    });
    expect(upgrade.jobs.map((j) => j.name).sort()).toEqual(["migrate", "upgrade"]);
    expect((await job(ns, "install"))?.metadata.uid).toBe(install?.metadata.uid);
    expect((await job(ns, "upgrade"))?.metadata.uid).toBe(
      upgrade.jobs.find((j) => j.name === "upgrade")?.uid,
    );
    const migrations = [...jobs, ...upgrade.jobs].filter((j) => j.name === "migrate");
    expect(new Set(migrations.map((j) => j.uid)).size).toBe(2);
    expect(await job(ns, "migrate")).toBeUndefined();
    expect((await getObject(`/api/v1/namespaces/${ns}/configmaps/app`))?.["data"]).toEqual({
      v: "2",
    });

    // The next upgrade recreates the pre-upgrade Job (before-hook-creation, the default).
    await patchAppSpec(ns, "app", { source: { helm: { values: { v: 3 } } } });
    const again = recordingPorts();
    expect((await run(ns, "app", again.ports)).outcome).toBe("Reconciled");
    expect(again.jobs.map((j) => j.name).sort()).toEqual(["migrate", "upgrade"]);
    expect((await job(ns, "upgrade"))?.metadata.uid).toBe(
      again.jobs.find((j) => j.name === "upgrade")?.uid,
    );
    expect(again.jobs.find((j) => j.name === "upgrade")?.uid).not.toBe(
      upgrade.jobs.find((j) => j.name === "upgrade")?.uid,
    );
    expect((await job(ns, "install"))?.metadata.uid).toBe(install?.metadata.uid);
  });

  it("runs pre-delete and post-delete hooks of the revision last applied around the finalizer's prune; a failing pre-delete hook keeps the App", async () => {
    const ns = "hooks-delete";
    const files = (image: string) => ({
      "Chart.yaml": "apiVersion: v2\nname: deletes\nversion: 1.0.0\n",
      "templates/cm.yaml":
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n",
      "templates/backup.yaml": hookJob(
        "{{ .Release.Name }}-backup",
        "pre-delete",
        undefined,
        image,
      ),
      "templates/cleanup.yaml": hookJob("{{ .Release.Name }}-cleanup", "post-delete"),
    });
    await createNamespace(ns);
    for (const [name, image] of [
      ["ok", "busybox"],
      ["fails", "busybox:fail"],
    ] as const) {
      const repo = await git.createRepo(`${ns}-${name}`, files(image), { allowSha1InWant: true });
      expect(
        (await createApp(ns, name, { source: { git: { url: repo.url, ref: "main" } } })).status,
      ).toBe(201);
      const { ports, writes } = recordingPorts();
      expect(await run(ns, name, ports)).toMatchObject({
        outcome: "Reconciled",
        syncStatus: "Synced",
      });
      // A sync never runs delete hooks; the apply records them for the finalizer.
      expect(writes).toEqual([`apply ConfigMap/${name}`]);
      const status = (await getApp(ns, name)).status!;
      expect(status.deleteHooks?.map((r) => r.name)).toEqual([`${name}-backup`, `${name}-cleanup`]);
      expect(status.inventory?.map((r) => r.name)).toEqual([name]);
    }

    // Deleted: pre-delete runs before the prune, post-delete after it, then the App goes.
    await api("DELETE", `/apis/plumb.dev/v1alpha1/namespaces/${ns}/apps/ok`);
    const deleting = recordingPorts();
    expect(await run(ns, "ok", deleting.ports)).toMatchObject({ outcome: "Finalized" });
    expect(deleting.writes).toEqual([
      "apply Job/ok-backup",
      "delete ConfigMap/ok",
      "apply Job/ok-cleanup",
    ]);
    expect(await getObject(`/apis/plumb.dev/v1alpha1/namespaces/${ns}/apps/ok`)).toBeUndefined();
    expect(await getObject(`/api/v1/namespaces/${ns}/configmaps/ok`)).toBeUndefined();
    expect((await job(ns, "ok-cleanup"))?.metadata.uid).toBe(
      deleting.jobs.find((j) => j.name === "ok-cleanup")?.uid,
    );

    // A pre-delete hook that fails: nothing pruned, the finalizer stays, status and an Event
    // say why.
    await api("DELETE", `/apis/plumb.dev/v1alpha1/namespaces/${ns}/apps/fails`);
    const failing = recordingPorts();
    const result = await run(ns, "fails", failing.ports);
    expect(failing.writes).toEqual(["apply Job/fails-backup"]);
    expect(result.outcome).toBe("Failed");
    const app = await getApp(ns, "fails");
    expect(app.metadata.finalizers).toContain("plumb.dev/finalizer");
    expect(app.status?.inventory?.map((r) => r.name)).toEqual(["fails"]);
    expect(await getObject(`/api/v1/namespaces/${ns}/configmaps/fails`)).toBeDefined();
    const ready = app.status?.conditions?.find((c) => c.type === "Ready");
    expect(ready).toMatchObject({ status: "False", reason: "HookFailed" });
    expect(ready?.message).toMatch(
      /^finalizer: pre-delete hook Job hooks-delete\/fails-backup failed: Job failed: BackoffLimitExceeded .+; nothing was pruned and the App is kept until it succeeds$/,
    );
    expect(result.error).toBe(`HookFailed: ${ready?.message}`);
    expect(await warnings(ns, "fails", "HookFailed")).toEqual([ready?.message]);
  });

  it("applies sync waves in order, each once the one before is healthy, across runs", async () => {
    const ns = "hooks-waves";
    const cm = (name: string, wave: string, key = "argocd.argoproj.io/sync-wave") =>
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  annotations:\n    ${key}: "${wave}"\n`;
    const files = {
      "first.yaml": cm("first", "-1"),
      "db.yaml": [
        "apiVersion: apps/v1",
        "kind: Deployment",
        "metadata:",
        "  name: db",
        "  annotations:",
        '    plumb.dev/sync-wave: "0"',
        "spec:",
        "  replicas: 1",
        "  selector: {matchLabels: {app: db}}",
        "  template:",
        "    metadata: {labels: {app: db}}",
        '    spec: {containers: [{name: db, image: "busybox"}]}',
        "",
      ].join("\n"),
      "last.yaml": cm("last", "5", "plumb.dev/sync-wave"),
    };
    const repo = await git.createRepo(ns, files, { allowSha1InWant: true });
    await createNamespace(ns);
    expect(
      (await createApp(ns, "app", { source: { git: { url: repo.url, ref: "main" } } })).status,
    ).toBe(201);

    // Wave -1 is healthy at once, so wave 0 follows in the same run; the new Deployment is not
    // healthy yet: wave 5 waits, the run ends Progressing and prunes nothing.
    const first = recordingPorts();
    expect(await run(ns, "app", first.ports)).toMatchObject({
      outcome: "Reconciled",
      syncStatus: "OutOfSync",
      healthStatus: "Progressing",
    });
    expect(first.writes).toEqual(["apply ConfigMap/first", "apply Deployment/db"]);
    expect(await getObject(`/api/v1/namespaces/${ns}/configmaps/last`)).toBeUndefined();
    const waiting = (await getApp(ns, "app")).status!;
    expect(waiting.objectHash).toBeUndefined();
    expect(waiting.resources?.find((r) => r.name === "last")).toMatchObject({
      status: "OutOfSync",
      health: "Progressing",
      message: expect.stringMatching(
        /^not applied yet: waiting for sync wave 0 to be healthy \(Deployment hooks-waves\/db Progressing\)$/,
      ),
    });

    // Once the Deployment is available, the next run applies wave 5, and only it.
    await waitFor("the Deployment db available", async () => {
      const db = await getObject(`/apis/apps/v1/namespaces/${ns}/deployments/db`);
      return ((db?.["status"] as { availableReplicas?: number })?.availableReplicas ?? 0) === 1;
    });
    const second = recordingPorts();
    expect(await run(ns, "app", second.ports)).toMatchObject({
      outcome: "Reconciled",
      syncStatus: "Synced",
    });
    expect(second.writes).toEqual(["apply ConfigMap/last"]);
    expect(await getObject(`/api/v1/namespaces/${ns}/configmaps/last`)).toBeDefined();
    expect((await getApp(ns, "app")).status?.objectHash).toBeDefined();
  });
});
