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
import { type FaultProxy, startFaultProxy } from "../support/fault-proxy.ts";
import {
  fixtureFiles,
  type GitServer,
  REAL_FIXTURES,
  startGitServer,
} from "../support/git-server.ts";
import {
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

const APP = `/apis/plumb.dev/v1alpha1/namespaces/${NS}/apps/guestbook`;
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
  // Each object new to the App, read before it is applied.
  `GET /api/v1/namespaces/${NS}/services/guestbook-ui 404`,
  `GET /apis/apps/v1/namespaces/${NS}/deployments/guestbook-ui 404`,
  `PATCH /api/v1/namespaces/${NS}/services/guestbook-ui 201`,
  `PATCH /apis/apps/v1/namespaces/${NS}/deployments/guestbook-ui 201`,
  `PUT ${APP}/status 200`,
  `POST /api/v1/namespaces/${NS}/events 201`,
  `DELETE ${LEASES}/plumb-app-guestbook 200`,
];

describe("the first sync of guestbook", () => {
  it("makes exactly these requests: its 2 applies and 11 others", async () => {
    const repo = await git.createRepo(NS, fixtureFiles(join(REAL_FIXTURES, "guestbook")), {
      allowSha1InWant: true,
    });
    await createApp(NS, "guestbook", { source: { git: { url: repo.url } } });
    const seen = proxy.requests.length;
    const out = await run(process.execPath, [
      BIN,
      "reconcile",
      `${NS}/guestbook`,
      "--kubeconfig",
      viaProxy,
    ]);
    const line = JSON.parse(out.stdout.trim()) as { outcome: string; syncStatus: string };
    expect(line).toMatchObject({ outcome: "Reconciled", syncStatus: "Synced" });
    const requests = proxy.requests
      .slice(seen)
      .map((r) => `${r.method} ${r.path.split("?")[0]} ${r.status}`);
    expect(requests).toEqual(FIRST_SYNC);
    const applies = requests.filter(
      (r) => r.startsWith("PATCH /api/v1/") || r.startsWith("PATCH /apis/apps/"),
    );
    expect([applies.length, requests.length - applies.length]).toEqual([2, 11]);
    const app = await getApp(NS, "guestbook");
    expect(app.status?.inventory?.map((x) => `${x.kind}/${x.name}`).sort()).toEqual([
      "Deployment/guestbook-ui",
      "Service/guestbook-ui",
    ]);
    expect(await getObject(`/api/v1/namespaces/${NS}/services/guestbook-ui`)).toBeDefined();
  });
});
