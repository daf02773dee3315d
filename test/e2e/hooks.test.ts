// Helm hook semantics on the real control plane: install hooks on the first apply only,
// upgrade hooks on every later one, delete policies as Helm reads them, delete hooks around
// the finalizer's prune, and sync waves applied in order across runs.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createNodeEngines, type NodeEngines } from "../../src/engines/node.ts";
import { type Ports, reconcileApp } from "../../src/reconcile/index.ts";
import { type GitServer, startGitServer } from "../support/git-server.ts";
import {
  createApp,
  createNamespace,
  getApp,
  getObject,
  patchAppSpec,
  realPorts,
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

/** Ports whose cluster records every Job plumb applied: name and the uid the server gave. */
function recordingPorts(): { ports: Ports; jobs: Array<{ name: string; uid: string }> } {
  const ports = realPorts({ engines });
  const jobs: Array<{ name: string; uid: string }> = [];
  const apply = ports.kube.apply.bind(ports.kube);
  ports.kube.apply = async (obj, options) => {
    const stored = await apply(obj, options);
    if (obj.kind === "Job" && !options?.dryRun) {
      jobs.push({ name: stored.metadata.name, uid: stored.metadata.uid as string });
    }
    return stored;
  };
  return { ports, jobs };
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
      message: "hook ran; not present (deleted by its delete policy)",
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
});
