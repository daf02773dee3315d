// Remote destinations end to end: an App in cluster A (the suite's control plane)
// deploys the guestbook to cluster B (a second control plane started here) with a token-only
// kubeconfig for plumb's identity in B (infra/rbac). Objects, field manager and health come
// from B; prune and deletion act on B; B stopped is DestinationUnreachable and prunes nothing,
// and the App recovers when B is back; an exec plugin is refused before anything runs.
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import type { App } from "../../src/app/index.ts";
import type { KubeObject } from "../../src/core/index.ts";
import { createDestinations } from "../../src/kube/index.ts";
import { nodeDestinationTransport } from "../../src/kube/node.ts";
import { reconcileApp } from "../../src/reconcile/index.ts";
import {
  fixtureFiles,
  type GitServer,
  REAL_FIXTURES,
  startGitServer,
  type TestRepo,
} from "../support/git-server.ts";
import { type SecondCluster, startSecondCluster } from "../support/second-cluster.ts";
import {
  api,
  createApp,
  createNamespace,
  getApp,
  getObject,
  kubeconfig,
  realPorts,
  waitFor,
} from "./support.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const NS = "remote";
const DEPLOY = `/apis/apps/v1/namespaces/${NS}/deployments/guestbook-ui`;
const SVC = `/api/v1/namespaces/${NS}/services/guestbook-ui`;

let git: GitServer;
let b: SecondCluster;
let token: string;
let repo: TestRepo;
const destinations = createDestinations({ transport: nodeDestinationTransport });
const run = (name: string) =>
  reconcileApp({ namespace: NS, name }, realPorts({ destinations }), new Date());

beforeAll(async () => {
  git = await startGitServer();
  b = await startSecondCluster(join(ROOT, ".plumb/e2e-cluster-b"));
  token = await b.plumbToken();
  await b.api(
    "POST",
    "/api/v1/namespaces",
    { apiVersion: "v1", kind: "Namespace", metadata: { name: NS } },
    [409],
  );
  await createNamespace(NS);
  await api("POST", `/api/v1/namespaces/${NS}/secrets`, {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "cluster-b" },
    stringData: { value: b.tokenKubeconfig(token) },
  });
  repo = await git.createRepo("remote", fixtureFiles(join(REAL_FIXTURES, "guestbook")), {
    allowSha1InWant: true,
  });
});
afterAll(async () => {
  await git?.stop();
  await b?.destroy();
});

/** GET an object from cluster B, undefined on 404. */
async function inB(path: string): Promise<KubeObject | undefined> {
  const res = await b.admin("GET", path);
  if (res.status === 404) return undefined;
  if (res.status >= 400) throw new Error(`GET ${path} on B: HTTP ${res.status}`);
  return res.body as KubeObject;
}

const ready = (a: App) => a.status?.conditions?.find((c) => c.type === "Ready");

/** The App's status, its Events and the run line as JSON: none may carry B's token. */
async function leaked(name: string, ...more: unknown[]): Promise<boolean> {
  const events = await api(
    "GET",
    `/api/v1/namespaces/${NS}/events?fieldSelector=involvedObject.name=${name}`,
  );
  const text = JSON.stringify([await getApp(NS, name), events, ...more]);
  return text.includes(token) || text.includes(Buffer.from(token).toString("base64"));
}

describe("an App in cluster A deploys to cluster B", () => {
  it("objects, field manager and health come from B; prune, unreachable, recovery and deletion act on B", async () => {
    expect(
      (
        await createApp(NS, "guestbook", {
          source: { git: { url: repo.url, ref: "main" } },
          destination: { cluster: { secretRef: { name: "cluster-b" } } },
        })
      ).status,
    ).toBe(201);

    // First sync through the CLI: the Node composition root wires remote destinations.
    const { stdout } = await promisify(execFile)(process.execPath, [
      join(ROOT, "functions/plumb.mjs"),
      "reconcile",
      `${NS}/guestbook`,
      "--kubeconfig",
      kubeconfig(),
    ]);
    const line = JSON.parse(stdout.trim()) as Record<string, unknown>;
    expect(line).toMatchObject({
      outcome: "Reconciled",
      syncStatus: "Synced",
      revision: await repo.head(),
    });

    const deploy = await inB(DEPLOY);
    expect(deploy?.metadata.managedFields?.find((m) => m.manager === "plumb")?.operation).toBe(
      "Apply",
    );
    expect(deploy?.metadata.labels).toMatchObject({
      "plumb.dev/app": "guestbook",
      "plumb.dev/app-namespace": NS,
    });
    expect(await inB(SVC)).toBeDefined();
    expect(await getObject(DEPLOY)).toBeUndefined(); // nothing in A
    let app = await getApp(NS, "guestbook");
    expect(app.status?.inventory?.map((e) => `${e.kind}/${e.name}@${e.cluster}`).sort()).toEqual([
      `Deployment/guestbook-ui@${b.server}`,
      `Service/guestbook-ui@${b.server}`,
    ]);
    expect(app.status?.clusters).toEqual([{ server: b.server, secretRef: { name: "cluster-b" } }]);

    // Health comes from B's Pods (its readiness simulator).
    app = await waitFor("Healthy from B", async () => {
      await run("guestbook");
      const a = await getApp(NS, "guestbook");
      return a.status?.healthStatus === "Healthy" ? a : undefined;
    });
    expect(app.status?.resources?.find((r) => r.kind === "Deployment")?.health).toBe("Healthy");
    // A steady run: no writes anywhere; reads: the App and the Secret in A, the probe and one
    // list per kind (2) in B — the no-op target (1 + K reads) plus the Secret and the probe —
    // and the list of AppPolicies in A.
    const steady = await run("guestbook");
    expect(steady.requests).toEqual({ get: 3, list: 3, create: 0, update: 0, patch: 0, delete: 0 });

    // Removing a file prunes on B.
    await repo.commit({ "guestbook-ui-svc.yaml": null }, "drop the Service");
    expect(await run("guestbook")).toMatchObject({
      syncStatus: "Synced",
      revision: await repo.head(),
    });
    expect(await inB(SVC)).toBeUndefined();
    expect(await inB(DEPLOY)).toBeDefined();

    // B stopped: DestinationUnreachable; nothing is pruned; the inventory is kept.
    const inventory = (await getApp(NS, "guestbook")).status?.inventory;
    await b.stop();
    const down = await run("guestbook");
    expect(down.outcome).toBe("Failed");
    expect(down.error).toMatch(
      new RegExp(`^DestinationUnreachable: destination unreachable: GET ${b.server}/version: `),
    );
    app = await getApp(NS, "guestbook");
    expect(ready(app)).toMatchObject({ status: "False", reason: "DestinationUnreachable" });
    expect(app.status?.inventory).toEqual(inventory);
    expect(app.status?.failures).toBe(1);
    expect(await leaked("guestbook", down)).toBe(false);

    // B back: the App recovers by itself; nothing was pruned meanwhile.
    await b.start();
    const back = await run("guestbook");
    expect(back).toMatchObject({ outcome: "Reconciled", syncStatus: "Synced" });
    app = await getApp(NS, "guestbook");
    expect(app.status?.failures).toBeUndefined();
    expect(ready(app)?.reason).not.toBe("DestinationUnreachable");
    expect(app.status?.inventory).toEqual(inventory);
    expect(await inB(DEPLOY)).toBeDefined();

    // Deleting the App prunes on B, then releases the App.
    await api("DELETE", `/apis/plumb.dev/v1alpha1/namespaces/${NS}/apps/guestbook`);
    expect(await run("guestbook")).toMatchObject({ outcome: "Finalized" });
    await waitFor("Deployment gone from B", async () =>
      (await inB(DEPLOY)) === undefined ? true : undefined,
    );
    expect(await getApp(NS, "guestbook").catch(() => undefined)).toBeUndefined();
  });

  it("a kubeconfig with an exec plugin is refused and nothing runs", async () => {
    const marker = join(mkdtempSync(join(tmpdir(), "plumb-exec-")), "ran");
    const evil = stringify({
      apiVersion: "v1",
      kind: "Config",
      "current-context": "b",
      clusters: [{ name: "b", cluster: { server: b.server } }],
      users: [
        {
          name: "x",
          user: {
            exec: {
              apiVersion: "client.authentication.k8s.io/v1",
              command: "/bin/sh",
              args: ["-c", `touch ${marker}`],
              interactiveMode: "Never",
            },
          },
        },
      ],
      contexts: [{ name: "b", context: { cluster: "b", user: "x" } }],
    });
    await api("POST", `/api/v1/namespaces/${NS}/secrets`, {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "exec-kubeconfig" },
      stringData: { "value.yaml": evil },
    });
    await createApp(NS, "exec", {
      source: { git: { url: repo.url, ref: "main" } },
      destination: { cluster: { secretRef: { name: "exec-kubeconfig" } } },
    });
    const result = await run("exec");
    expect(result.outcome).toBe("Failed");
    expect(result.error).toBe(
      `DestinationInvalid: destination: kubeconfig Secret ${NS}/exec-kubeconfig key value.yaml: user "x": exec is not allowed for this kubeconfig (credential plugins run local commands)`,
    );
    expect(existsSync(marker)).toBe(false);
    const app = await getApp(NS, "exec");
    expect(ready(app)).toMatchObject({ status: "False", reason: "DestinationInvalid" });
    expect(app.status?.inventory ?? []).toEqual([]);
    rmSync(join(marker, ".."), { recursive: true, force: true });
  });
});
