// The first sync of guestbook (a Deployment and a Service), request by request: the `plumb` bin
// reconciles it through the fault proxy, which records every request the API server received.
// The list is exact, so a request added to the first sync fails this test.
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { generatedFiles } from "../../bench/fixtures.ts";
import { createKubePort, DiscoveryCache, type KubeTransport } from "../../src/kube/index.ts";
import { reconcileApp } from "../../src/reconcile/index.ts";
import { createGitPort } from "../../src/source/git.ts";
import { type FaultProxy, startFaultProxy } from "../support/fault-proxy.ts";
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
  kubeconfig,
  transport,
  waitFor,
} from "./support.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const BIN = join(ROOT, "functions/plumb.mjs");
const NS = "first-sync";
const run = promisify(execFile);

let git: GitServer;
let proxy: FaultProxy;
let dir: string;
let viaProxy: string;

beforeAll(async () => {
  const clusterDir = dirname(kubeconfig());
  const kc = parse(readFileSync(kubeconfig(), "utf8")) as {
    clusters: Array<{ cluster: { server: string } }>;
  };
  proxy = await startFaultProxy({
    server: kc.clusters[0]!.cluster.server,
    caFile: join(clusterDir, "ca.crt"),
  });
  dir = mkdtempSync(join(tmpdir(), "plumb-first-sync-"));
  viaProxy = proxy.writeKubeconfig(dir, readFileSync(join(clusterDir, "token"), "utf8").trim());
  git = await startGitServer();
  await createNamespace(NS);
  // A CRD's storage answers 429 for a while after it is established: the lists the run makes
  // answer 200 first, so the list below holds only the run's own requests.
  for (const path of ["/apis/plumb.dev/v1alpha1/apppolicies", "/apis/plumb.dev/v1alpha1/apps"]) {
    await waitFor(`${path} answers 200`, async () => {
      const res = await transport()("GET", path, {});
      return res.status === 200;
    });
  }
});

afterAll(async () => {
  await proxy?.stop();
  await git?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Reconciles App `ns/name` once with the bin; its JSON line and every request it made. */
async function reconcile(ns: string, name: string) {
  const seen = proxy.requests.length;
  const out = await run(process.execPath, [
    BIN,
    "reconcile",
    `${ns}/${name}`,
    "--kubeconfig",
    viaProxy,
  ]).catch((e: { stdout: string }) => e);
  const line = JSON.parse(out.stdout.trim()) as {
    outcome: string;
    syncStatus: string;
    error?: string;
  };
  const requests = proxy.requests
    .slice(seen)
    .map((r) => `${r.method} ${r.path.split("?")[0]} ${r.status}`);
  return { line, requests };
}

const appPath = (ns: string, name: string) =>
  `/apis/plumb.dev/v1alpha1/namespaces/${ns}/apps/${name}`;
const APP = appPath(NS, "guestbook");
const LEASES = `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases`;

/** Every request of the first sync, in order: "METHOD path status" (the query left out). */
const FIRST_SYNC = [
  `GET ${APP} 200`,
  // The finalizer, before anything is written.
  `PATCH ${APP} 200`,
  "GET /apis/plumb.dev/v1alpha1/apppolicies 200",
  `POST ${LEASES} 201`,
  // Exact ownership: the other Apps' inventories.
  "GET /apis/plumb.dev/v1alpha1/apps 200",
  // The inventory tracked before the first apply; conditional on the App read first, it also
  // proves the App unchanged under the Lease (no re-read).
  `PUT ${APP}/status 200`,
  // Each object new to the App, read before it is applied (one of its kind: a GET).
  `GET /api/v1/namespaces/${NS}/services/guestbook-ui 404`,
  `GET /apis/apps/v1/namespaces/${NS}/deployments/guestbook-ui 404`,
  `PATCH /api/v1/namespaces/${NS}/services/guestbook-ui 201`,
  `PATCH /apis/apps/v1/namespaces/${NS}/deployments/guestbook-ui 201`,
  `PUT ${APP}/status 200`,
  `POST /api/v1/namespaces/${NS}/events 201`,
  `DELETE ${LEASES}/plumb-app-guestbook 200`,
];

const applies = (requests: readonly string[]) =>
  requests.filter((r) => /^PATCH \/api(s\/apps)?\/v1\/namespaces\//.test(r));

describe("the first sync of guestbook", () => {
  it("makes exactly these requests: its 2 applies and 11 others", async () => {
    const repo = await git.createRepo(NS, fixtureFiles(join(REAL_FIXTURES, "guestbook")), {
      allowSha1InWant: true,
    });
    await createApp(NS, "guestbook", { source: { git: { url: repo.url } } });
    const { line, requests } = await reconcile(NS, "guestbook");
    expect(line).toMatchObject({ outcome: "Reconciled", syncStatus: "Synced" });
    expect(requests).toEqual(FIRST_SYNC);
    expect([applies(requests).length, requests.length - applies(requests).length]).toEqual([2, 11]);
    const app = await getApp(NS, "guestbook");
    expect(app.status?.inventory?.map((x) => `${x.kind}/${x.name}`).sort()).toEqual([
      "Deployment/guestbook-ui",
      "Service/guestbook-ui",
    ]);
    expect(await getObject(`/api/v1/namespaces/${NS}/services/guestbook-ui`)).toBeDefined();
  });
});

describe("the first sync of several objects of one kind", () => {
  const cm = (name: string) =>
    `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}}\ndata: {from: git}\n`;

  it("reads them with one list of the namespace, not a GET each", async () => {
    const ns = "first-sync-list";
    await createNamespace(ns);
    const repo = await git.createRepo(
      ns,
      { "a.yaml": cm("a"), "b.yaml": cm("b"), "c.yaml": cm("c") },
      {
        allowSha1InWant: true,
      },
    );
    await createApp(ns, "cms", { source: { git: { url: repo.url } } });
    const { line, requests } = await reconcile(ns, "cms");
    expect(line).toMatchObject({ outcome: "Reconciled", syncStatus: "Synced" });
    const app = appPath(ns, "cms");
    const leases = `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases`;
    const sent = requests.map((r) => r.replace(/(configmaps\/)[abc] /, "$1* "));
    expect(sent).toEqual([
      `GET ${app} 200`,
      `PATCH ${app} 200`,
      "GET /apis/plumb.dev/v1alpha1/apppolicies 200",
      `POST ${leases} 201`,
      "GET /apis/plumb.dev/v1alpha1/apps 200",
      `PUT ${app}/status 200`,
      `GET /api/v1/namespaces/${ns}/configmaps 200`,
      `PATCH /api/v1/namespaces/${ns}/configmaps/* 201`,
      `PATCH /api/v1/namespaces/${ns}/configmaps/* 201`,
      `PATCH /api/v1/namespaces/${ns}/configmaps/* 201`,
      `PUT ${app}/status 200`,
      `POST /api/v1/namespaces/${ns}/events 201`,
      `DELETE ${leases}/plumb-app-cms 200`,
    ]);
  });

  it("what the list finds is refused or taken over as a GET's answer would be", async () => {
    const ns = "first-sync-owned";
    await createNamespace(ns);
    // "helm" made one, kubectl (client-side) another: refused, and taken over.
    for (const [name, manager] of [
      ["by-helm", "helm"],
      ["by-kubectl", "kubectl-client-side-apply"],
    ] as const) {
      await api("POST", `/api/v1/namespaces/${ns}/configmaps?fieldManager=${manager}`, {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name },
        data: { from: manager },
      });
    }
    const repo = await git.createRepo(
      ns,
      { "a.yaml": cm("by-helm"), "b.yaml": cm("by-kubectl"), "c.yaml": cm("new") },
      { allowSha1InWant: true },
    );
    await createApp(ns, "cms", { source: { git: { url: repo.url } } });
    const { line, requests } = await reconcile(ns, "cms");
    expect(line.outcome).toBe("Failed");
    expect(line.error).toContain(
      'ConfigMap first-sync-owned/by-helm exists and is managed by field manager "helm", not by this App',
    );
    expect(
      requests.filter((r) => r.startsWith("GET /api/v1/namespaces/first-sync-owned/configmaps")),
    ).toEqual([`GET /api/v1/namespaces/${ns}/configmaps 200`]);
    const data = async (name: string) =>
      (await getObject(`/api/v1/namespaces/${ns}/configmaps/${name}`))?.["data"];
    expect(await data("by-helm")).toEqual({ from: "helm" });
    expect(await data("by-kubectl")).toEqual({ from: "git" });
    expect(await data("new")).toEqual({ from: "git" });
  });
});

describe("the first sync of the benchmark's 50 objects (10 each of 5 kinds)", () => {
  it("reads the objects with 5 lists: 50 applies and 14 others, besides Lease renewals", async () => {
    const ns = "first-sync-50";
    await createNamespace(ns);
    const repo = await git.createRepo(ns, generatedFiles(), { allowSha1InWant: true });
    await createApp(ns, "gen", { source: { git: { url: repo.url } } });
    const { line, requests } = await reconcile(ns, "gen");
    expect(line.outcome).toBe("Reconciled");
    const app = appPath(ns, "gen");
    const leases = `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases`;
    const applied = requests.filter(
      (r) => r.startsWith("PATCH ") && !r.startsWith(`PATCH ${app} `),
    );
    // How many renewals a run makes depends on how long it takes (one per 1.5 s held).
    const renewals = requests.filter((r) => r.startsWith(`PUT ${leases}/plumb-app-gen `));
    const others = requests.filter((r) => !applied.includes(r) && !renewals.includes(r));
    expect(applied).toHaveLength(50);
    expect(others).toEqual([
      `GET ${app} 200`,
      `PATCH ${app} 200`,
      "GET /apis/plumb.dev/v1alpha1/apppolicies 200",
      `POST ${leases} 201`,
      "GET /apis/plumb.dev/v1alpha1/apps 200",
      `PUT ${app}/status 200`,
      // One list per kind (render order: the apply's stages), no GET per object.
      `GET /api/v1/namespaces/${ns}/serviceaccounts 200`,
      `GET /api/v1/namespaces/${ns}/configmaps 200`,
      `GET /apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/roles 200`,
      `GET /api/v1/namespaces/${ns}/services 200`,
      `GET /apis/apps/v1/namespaces/${ns}/deployments 200`,
      `PUT ${app}/status 200`,
      `POST /api/v1/namespaces/${ns}/events 201`,
      `DELETE ${leases}/plumb-app-gen 200`,
    ]);
  });
});

/**
 * The real transport, recording "METHOD path" of each request; request `crashAfter` (0-based)
 * lands but its answer is lost, and no later request is sent: the process is gone.
 */
function crashing(log: string[], crashAfter = Number.POSITIVE_INFINITY): KubeTransport {
  return async (method, path, request) => {
    const i = log.length;
    if (i > crashAfter) throw new Error("crashed");
    log.push(`${method} ${path.split("?")[0]}`);
    const res = await transport()(method, path, request);
    if (i === crashAfter) throw new Error("crashed");
    return res;
  };
}

/** One run of App `ns/app` in this process, through `kubeTransport`. */
function runIn(ns: string, kubeTransport: KubeTransport) {
  const kube = createKubePort(kubeTransport, { discovery: new DiscoveryCache() });
  return reconcileApp(
    { namespace: ns, name: "app" },
    { kube, git: createGitPort(), holder: "e2e" },
    new Date(),
  );
}

describe("a first sync cut short after any one of its requests", () => {
  it("leaves nothing the next run cannot find: what the source dropped is pruned, the rest tracked", async () => {
    const guestbook = fixtureFiles(join(REAL_FIXTURES, "guestbook"));
    const probe: string[] = [];
    const ns0 = "first-sync-crash-probe";
    const r0 = await git.createRepo(ns0, guestbook, { allowSha1InWant: true });
    await createNamespace(ns0);
    await createApp(ns0, "app", { source: { git: { url: r0.url } } });
    expect(await runIn(ns0, crashing(probe))).toMatchObject({ outcome: "Reconciled" });
    expect(probe).toHaveLength(13);
    for (let i = 0; i < probe.length; i++) {
      const ns = `first-sync-crash-${i}`;
      const r = await git.createRepo(ns, guestbook, { allowSha1InWant: true });
      await createNamespace(ns);
      await createApp(ns, "app", { source: { git: { url: r.url } } });
      const crashed: string[] = [];
      await runIn(ns, crashing(crashed, i)).catch(() => undefined);
      expect(crashed).toEqual(probe.slice(0, i + 1).map((x) => x.replaceAll(ns0, ns)));
      // The source drops the Service; the next run (another process) must find it if it landed.
      await r.commit({ "guestbook-ui-svc.yaml": null });
      const next = await runIn(ns, transport());
      expect(next, `cut short after ${probe[i]}`).toMatchObject({ outcome: "Reconciled" });
      expect(await getObject(`/api/v1/namespaces/${ns}/services/guestbook-ui`)).toBeUndefined();
      const deploy = await getObject(`/apis/apps/v1/namespaces/${ns}/deployments/guestbook-ui`);
      expect(deploy?.metadata.labels?.["plumb.dev/app"]).toBe("app");
      const app = await getApp(ns, "app");
      expect(app.status?.inventory?.map((x) => `${x.kind}/${x.name}`)).toEqual([
        "Deployment/guestbook-ui",
      ]);
      expect(app.metadata.finalizers).toContain("plumb.dev/finalizer");
    }
  });
});
