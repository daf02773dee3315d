// API faults between plumb and the real API server: the fault proxy answers chosen requests with 429/503/500, resets or silence; plumb (the
// `plumb` bin, as an operator runs it) retries what is safe, fails what never answers within
// its deadline, and names the request and the cause.
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { type FaultProxy, startFaultProxy } from "../support/fault-proxy.ts";
import { type GitServer, startGitServer, type TestRepo } from "../support/git-server.ts";
import { sendGithubPush } from "../support/github.ts";
import { startServe } from "../support/serve.ts";
import { createApp, createNamespace, getApp, getObject, kubeconfig, waitFor } from "./support.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const BIN = join(ROOT, "functions/plumb.mjs");
const NS = "faults";
const SECRET = "faults-webhook-secret";
const run = promisify(execFile);

let git: GitServer;
let repo: TestRepo;
let proxy: FaultProxy;
let dir: string;
let viaProxy: string;

const cm = (name: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}}\ndata: {from: git}\n`;

/** Runs the bin with `kubeconfigFile`; the JSON lines of stdout, exit code, stderr, wall ms. */
async function plumb(kubeconfigFile: string, args: string[], env: Record<string, string> = {}) {
  const t0 = Date.now();
  const out = await run(process.execPath, [BIN, ...args, "--kubeconfig", kubeconfigFile], {
    env: { ...process.env, ...env },
  }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => e,
  );
  const lines = out.stdout
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { outcome?: string; error?: string; syncStatus?: string });
  return { code: out.code, lines, stderr: out.stderr, ms: Date.now() - t0 };
}

beforeAll(async () => {
  const clusterDir = dirname(kubeconfig());
  const kc = parse(readFileSync(kubeconfig(), "utf8")) as {
    clusters: Array<{ cluster: { server: string } }>;
  };
  proxy = await startFaultProxy({
    server: kc.clusters[0]!.cluster.server,
    caFile: join(clusterDir, "ca.crt"),
  });
  dir = mkdtempSync(join(tmpdir(), "plumb-faults-"));
  viaProxy = proxy.writeKubeconfig(dir, readFileSync(join(clusterDir, "token"), "utf8").trim());
  git = await startGitServer();
  repo = await git.createRepo(
    "faults",
    {
      ...Object.fromEntries([0, 1, 2, 3].map((i) => [`r${i}/cm.yaml`, cm(`r${i}`)])),
      "writes/cm.yaml": cm("writes"),
      "hook/cm.yaml": cm("hook"),
      "silent/cm.yaml": cm("silent"),
    },
    { allowSha1InWant: true },
  );
  await createNamespace(NS);
});

afterAll(async () => {
  await proxy?.stop();
  await git?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** One fault on a read of a first sync, each on its own App reads-<i> (ConfigMap r<i>). */
const READ_FAULTS = [
  [
    "a 500 on reading the App",
    { method: "GET", path: `/namespaces/${NS}/apps/reads-0`, fault: { status: 500 } },
  ],
  [
    "a 429 with Retry-After on listing the Apps",
    {
      method: "GET",
      path: /^\/apis\/plumb\.dev\/v1alpha1\/apps(\?|$)/,
      fault: { status: 429, retryAfter: 1 },
    },
  ],
  [
    // Built-in kinds need no discovery: the read of the object before its first apply.
    "a reset after the API server answered the read of an object new to the App",
    { method: "GET", path: `/api/v1/namespaces/${NS}/configmaps/r2`, fault: { reset: "after" } },
  ],
  [
    "a reset before reading the App",
    { method: "GET", path: `/namespaces/${NS}/apps/reads-3`, fault: { reset: "before" } },
  ],
] as const;

describe("transient API errors are retried", () => {
  it("a signed push right after the CRD is established: the first list of Apps gets 429 'storage is (re)initializing', then 503 Retry-After, and still 202 and the App reconciled", async () => {
    await createApp(NS, "hook", { source: { git: { url: repo.url, ref: "main", path: "hook" } } });
    const server = await startServe(viaProxy, { GITHUB_WEBHOOK_SECRET: SECRET });
    const { base } = server;
    try {
      // The list the webhook makes to find the Apps on the pushed repository.
      const list = /^\/apis\/plumb\.dev\/v1alpha1\/apps(\?|$)/;
      const initializing = proxy.inject({
        method: "GET",
        path: list,
        fault: {
          status: 429,
          retryAfter: 1,
          reason: "TooManyRequests",
          message: "storage is (re)initializing",
        },
      });
      const unavailable = proxy.inject({
        method: "GET",
        path: list,
        fault: {
          status: 503,
          retryAfter: 1,
          message: "the server is currently unable to handle the request",
        },
      });
      const seen = proxy.requests.length;
      const sha = await repo.commit({
        "hook/cm.yaml": cm("hook").replace("from: git", "from: push"),
      });
      const res = await sendGithubPush(base, SECRET, repo.url, sha);
      expect(res.status).toBe(202);
      expect(await res.json()).toMatchObject({ apps: [`${NS}/hook`], revision: sha });
      expect([initializing.hits(), unavailable.hits()]).toEqual([1, 1]);
      // (The reconcile the push started may list the Apps again afterwards.)
      expect(
        proxy.requests
          .slice(seen)
          .filter((r) => r.method === "GET" && list.test(r.path))
          .map((r) => r.status)
          .slice(0, 3),
      ).toEqual([429, 503, 200]);
      await waitFor(
        "App reconciled at the pushed commit",
        async () => (await getApp(NS, "hook")).status?.revision === sha,
      );
      const live = await getObject(`/api/v1/namespaces/${NS}/configmaps/hook`);
      expect(live?.["data"]).toEqual({ from: "push" });
      expect(server.output()).toContain(
        '"msg":"retrying kubernetes request","request":"GET /apis/plumb.dev/v1alpha1/apps","attempt":1,"cause":"HTTP 429 (Retry-After 1): storage is (re)initializing","waitMs":1000',
      );
    } catch (err) {
      throw new Error(`${String(err)}\n${server.output().slice(-4000)}`);
    } finally {
      await server.stop();
    }
  });

  it.each(READ_FAULTS)("%s: the run still succeeds", async (_, rule) => {
    const i = READ_FAULTS.findIndex(([label]) => label === _);
    const name = `reads-${i}`;
    await createApp(NS, name, { source: { git: { url: repo.url, ref: "main", path: `r${i}` } } });
    const fault = proxy.inject({ ...rule });
    try {
      const r = await plumb(viaProxy, ["reconcile", `${NS}/${name}`]);
      expect(fault.hits()).toBe(1);
      expect(r.lines).toEqual([
        expect.objectContaining({
          app: `${NS}/${name}`,
          outcome: "Reconciled",
          syncStatus: "Synced",
        }),
      ]);
      expect(r.code).toBe(0);
      expect(r.stderr).toContain('"msg":"retrying kubernetes request"');
      expect((await getObject(`/api/v1/namespaces/${NS}/configmaps/r${i}`))?.["data"]).toEqual({
        from: "git",
      });
    } finally {
      fault.remove();
    }
  });

  it("the Lease created and the server-side apply executed but their answers lost, and a 500 on the status write: all sent again, the run succeeds", async () => {
    await createApp(NS, "writes", {
      source: { git: { url: repo.url, ref: "main", path: "writes" } },
    });
    const lease = proxy.inject({
      method: "POST",
      path: `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases`,
      fault: { reset: "after" },
    });
    const applied = proxy.inject({
      method: "PATCH",
      path: `/namespaces/${NS}/configmaps/writes?`,
      fault: { reset: "after" },
    });
    const status = proxy.inject({
      method: "PUT",
      path: `/namespaces/${NS}/apps/writes/status`,
      fault: { status: 500 },
    });
    const seen = proxy.requests.length;
    const r = await plumb(viaProxy, ["reconcile", `${NS}/writes`]);
    expect([lease.hits(), applied.hits(), status.hits()]).toEqual([1, 1, 1]);
    expect(r.lines).toEqual([
      expect.objectContaining({ outcome: "Reconciled", syncStatus: "Synced" }),
    ]);
    const applies = proxy.requests
      .slice(seen)
      .filter((x) => x.method === "PATCH" && x.path.includes("/configmaps/writes?"));
    expect(applies.map((x) => x.status)).toEqual([undefined, 200]);
    expect((await getObject(`/api/v1/namespaces/${NS}/configmaps/writes`))?.["data"]).toEqual({
      from: "git",
    });
    expect((await getApp(NS, "writes")).status?.syncStatus).toBe("Synced");
  });
});

describe("deadlines and messages", () => {
  it("a request the server never answers: the run fails within the deadline, naming the request", async () => {
    await createApp(NS, "silent", {
      source: { git: { url: repo.url, ref: "main", path: "silent" } },
    });
    const hang = proxy.inject({
      method: "GET",
      path: `/namespaces/${NS}/apps/silent`,
      times: Number.POSITIVE_INFINITY,
      fault: { hang: true },
    });
    try {
      const r = await plumb(viaProxy, ["reconcile", `${NS}/silent`], {
        PLUMB_KUBE_TIMEOUT: "5s",
        PLUMB_KUBE_DEADLINE: "12s",
      });
      expect(r.code).toBe(1);
      expect(r.lines).toHaveLength(1);
      expect(r.lines[0]?.outcome).toBe("Failed");
      const said = new RegExp(
        `^GET /apis/plumb\\.dev/v1alpha1/namespaces/${NS}/apps/silent: no answer within (\\d+) ms \\(timeout\\)(?: \\((\\d+) attempts in (\\d+\\.\\d) s\\))?$`,
      ).exec(r.lines[0]?.error ?? "");
      expect(said, r.lines[0]?.error).not.toBeNull();
      // Retried until the 12 s deadline left no room for another attempt of at least 1 s: 3 on
      // an idle machine, fewer when a loaded one fires its timers late (a single attempt is then
      // named without a count); each one but the last waited its 5 s in full, and none was cut
      // below 1 s. (5 s: the run's other requests, which the same setting bounds, are answered
      // within it however loaded the machine is.)
      const attempts = said![2] === undefined ? 1 : Number(said![2]);
      expect(attempts).toBeGreaterThanOrEqual(1);
      expect(attempts).toBeLessThanOrEqual(3);
      expect(hang.hits()).toBe(attempts);
      expect(Number(said![1])).toBeGreaterThanOrEqual(1000);
      expect(Number(said![1])).toBeLessThanOrEqual(5000);
      if (attempts > 1) expect(Number(said![3])).toBeGreaterThanOrEqual(5 * (attempts - 1));
    } finally {
      hang.remove();
    }
  });

  it("an http:// server and a missing CA: the API server's own answer and the TLS cause, named", async () => {
    const kc = parse(readFileSync(kubeconfig(), "utf8")) as {
      clusters: Array<{ cluster: Record<string, string> }>;
    };
    const server = kc.clusters[0]!.cluster["server"]!;
    const write = (name: string, mutate: (c: Record<string, string>) => void) => {
      const copy = structuredClone(kc);
      mutate(copy.clusters[0]!.cluster);
      const file = join(dir, name);
      writeFileSync(file, JSON.stringify(copy));
      return file;
    };
    const plain = await plumb(
      write("kubeconfig-http", (c) => {
        c["server"] = server.replace("https://", "http://");
      }),
      ["reconcile", `${NS}/reads-0`],
    );
    expect(plain.code).toBe(1);
    expect(plain.lines[0]?.error).toBe(
      `get App ${NS}/reads-0: Client sent an HTTP request to an HTTPS server.`,
    );
    const noCa = await plumb(
      write("kubeconfig-no-ca", (c) => {
        delete c["certificate-authority-data"];
      }),
      ["reconcile", `${NS}/reads-0`],
    );
    expect(noCa.code).toBe(1);
    expect(noCa.lines[0]?.error).toMatch(
      new RegExp(
        `^GET /apis/plumb\\.dev/v1alpha1/namespaces/${NS}/apps/reads-0: TLS: the server's certificate is not signed by a trusted CA \\(UnknownIssuer; give the cluster's certificate-authority in the kubeconfig\\) \\([A-Z_]+\\)$`,
      ),
    );
  });
});
