// The loop under API faults and races, through the fault proxy between
// plumb and the real API server: nothing a failed run applied is orphaned, every failure is
// recorded, a Lease whose release failed costs seconds, a stale run never applies an older
// commit over a newer one, and a run that outlives its Lease writes nothing more.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { createKubePort, DiscoveryCache, type RetryOptions } from "../../src/kube/index.ts";
import { nodeKubeTransport } from "../../src/kube/node.ts";
import { type Ports, type RunOptions, reconcileApp } from "../../src/reconcile/index.ts";
import { createGitPort } from "../../src/source/git.ts";
import { type FaultProxy, startFaultProxy } from "../support/fault-proxy.ts";
import { type GitServer, startGitServer, type TestRepo } from "../support/git-server.ts";
import {
  api,
  createApp,
  createNamespace,
  getApp,
  getObject,
  kubeconfig,
  patchAppSpec,
  realPorts,
  waitFor,
} from "./support.ts";

/** Each App lives (and deploys) in its own namespace (suffixed: the file may run again). */
const S = Date.now().toString(36);
const nsOf = (name: string) => `lf-${name}-${S}`;
let git: GitServer;
let dir: string;
let server: string;
let token: string;
let caFile: string;
/** Proxies started by a test, stopped after it. */
const proxies: FaultProxy[] = [];

beforeAll(async () => {
  const kc = parse(readFileSync(kubeconfig(), "utf8")) as {
    clusters: Array<{ cluster: { server: string } }>;
  };
  server = kc.clusters[0]!.cluster.server;
  caFile = join(dirname(kubeconfig()), "ca.crt");
  token = readFileSync(join(dirname(kubeconfig()), "token"), "utf8").trim();
  dir = mkdtempSync(join(tmpdir(), "plumb-loop-faults-"));
  git = await startGitServer();
});
afterEach(async () => {
  for (const p of proxies.splice(0)) await p.stop();
});
afterAll(async () => {
  await git?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A fault proxy in front of the API server; stopped after the test. */
async function proxy(): Promise<FaultProxy> {
  const p = await startFaultProxy({ server, caFile, seed: proxies.length + 1 });
  proxies.push(p);
  return p;
}

/**
 * Ports that talk through `p`, with their own discovery. A fault that never passes exhausts
 * the transport's retries by their count (3 retries, 100 ms backoff) rather than by the 30 s
 * deadline, which would only make these tests slow; the per-attempt timeout and the deadline
 * stay the product's, so a loaded machine's slow answers are never taken for faults.
 */
function through(p: FaultProxy, retry: RetryOptions = {}, extra: Partial<Ports> = {}): Ports {
  const file = p.writeKubeconfig(mkdtempSync(join(dir, "kc-")), token);
  const transport = nodeKubeTransport(file, {
    retry: { maxRetries: 3, backoffMs: 100, ...retry },
  });
  return {
    kube: createKubePort(transport, { discovery: new DiscoveryCache() }),
    git: createGitPort(),
    holder: "faulty",
    ...extra,
  };
}

const cm = (name: string, value = "v") =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}}\ndata: {k: "${value}"}\n`;

async function newApp(name: string): Promise<TestRepo> {
  await createNamespace(nsOf(name));
  const repo = await git.createRepo(name, { "base.yaml": cm("base") });
  const res = await createApp(nsOf(name), name, {
    source: { git: { url: repo.url, ref: "main" } },
  });
  if (res.status !== 201) throw new Error(`create App: ${res.status} ${JSON.stringify(res.body)}`);
  const first = await run(name);
  expect(first).toMatchObject({ outcome: "Reconciled", syncStatus: "Synced" });
  return repo;
}

const run = (name: string, ports: Ports = realPorts(), options: RunOptions = {}) =>
  reconcileApp({ namespace: nsOf(name), name }, ports, new Date(), options);
const configMap = (app: string, name: string) =>
  getObject(`/api/v1/namespaces/${nsOf(app)}/configmaps/${name}`);
const inventory = async (name: string) =>
  ((await getApp(nsOf(name), name)).status?.inventory ?? []).map((r) => r.name).sort();
/** The messages of the Warning Events on App `name` with `reason`. */
async function warnings(name: string, reason: string): Promise<string[]> {
  const list = await api(
    "GET",
    `/api/v1/namespaces/${nsOf(name)}/events?fieldSelector=involvedObject.name=${name},reason=${reason}`,
  );
  return (list.items as Array<{ type: string; message: string }>)
    .filter((e) => e.type === "Warning")
    .map((e) => e.message);
}

describe("nothing a failed run may have applied is orphaned", () => {
  it("a reset after the API server created ConfigMap extra: extra is tracked, and pruned once Git drops it", async () => {
    const repo = await newApp("k1-reset");
    await repo.commit({ "extra.yaml": cm("extra") });
    const p = await proxy();
    p.inject({
      method: "PATCH",
      path: `/namespaces/${nsOf("k1-reset")}/configmaps/extra`,
      times: Number.POSITIVE_INFINITY,
      fault: { reset: "after" },
    });
    const failed = await run("k1-reset", through(p));
    expect(failed.outcome).toBe("Failed");
    expect(failed.error).toMatch(
      new RegExp(`^ApplyFailed: ConfigMap ${nsOf("k1-reset")}/extra: .*reset`),
    );
    expect(failed.retryable).toBeUndefined();
    // The API server made it; the run never heard; the inventory has it anyway.
    expect(await configMap("k1-reset", "extra")).toBeDefined();
    expect(await inventory("k1-reset")).toEqual(["base", "extra"]);
    // Before the first PATCH of extra: one status write tracked it.
    const seen = p.requests.map((r) => `${r.method} ${r.path.split("?")[0]}`);
    const firstPatch = seen.findIndex((r) => r.endsWith("/configmaps/extra"));
    expect(seen.slice(0, firstPatch).filter((r) => r.endsWith("/apps/k1-reset/status"))).toEqual([
      `PUT /apis/plumb.dev/v1alpha1/namespaces/${nsOf("k1-reset")}/apps/k1-reset/status`,
    ]);

    await repo.commit({ "extra.yaml": null });
    const clean = await run("k1-reset");
    expect(clean).toMatchObject({ outcome: "Reconciled", syncStatus: "Synced" });
    expect(await configMap("k1-reset", "extra")).toBeUndefined();
    expect(await inventory("k1-reset")).toEqual(["base"]);
  });

  it("a status write that fails with 500 after a successful apply: extra is tracked, and pruned once Git drops it", async () => {
    const repo = await newApp("k1-status");
    await repo.commit({ "extra.yaml": cm("extra-2") });
    const p = await proxy();
    // The tracking write passes; every later status write fails.
    const broken = p.inject({
      method: "PUT",
      path: `/apps/k1-status/status`,
      skip: 1,
      times: Number.POSITIVE_INFINITY,
      fault: { status: 500, message: "etcdserver: request timed out" },
    });
    const failed = await run("k1-status", through(p));
    expect(failed).toMatchObject({ outcome: "Failed", retryable: true });
    expect(failed.error).toMatch(/^status not written: .*etcdserver: request timed out/);
    expect(broken.hits()).toBeGreaterThanOrEqual(2); // the outcome, then the failure
    expect(await configMap("k1-status", "extra-2")).toBeDefined();
    expect(await inventory("k1-status")).toEqual(["base", "extra-2"]);
    // Nobody can read status, so the Event says what happened.
    const events = await warnings("k1-status", "ApiFailed");
    expect(events.some((m) => m.includes("etcdserver: request timed out"))).toBe(true);

    await repo.commit({ "extra.yaml": null });
    expect(await run("k1-status")).toMatchObject({ outcome: "Reconciled", syncStatus: "Synced" });
    expect(await configMap("k1-status", "extra-2")).toBeUndefined();
    expect(await inventory("k1-status")).toEqual(["base"]);
  });
});

describe("a run that still fails after the retries records it", () => {
  it("single faults on reads are retried; a list that keeps failing is in status and an Event", async () => {
    const repo = await newApp("k2");
    await repo.commit({ "base.yaml": cm("base", "two") });
    const p = await proxy();
    // One of each on the reads of a sync: all retried by the transport, the run succeeds.
    p.inject({ method: "GET", path: `/apps/k2`, fault: { status: 500 } });
    p.inject({ method: "GET", path: /\/apps(\?|$)/, fault: { status: 429, retryAfter: 1 } });
    p.inject({ method: "GET", path: `/apps/k2`, fault: { reset: "before" } });
    expect(await run("k2", through(p))).toMatchObject({
      outcome: "Reconciled",
      syncStatus: "Synced",
    });

    // A new object: the run reads the other Apps' inventories (exact ownership) before applying
    // (only a changed object new to the App, a Namespace or a prune needs them).
    await repo.commit({ "base.yaml": cm("base", "three"), "extra.yaml": cm("extra", "one") });
    p.inject({
      method: "GET",
      path: /\/apis\/plumb\.dev\/v1alpha1\/apps(\?|$)/,
      times: Number.POSITIVE_INFINITY,
      fault: { status: 500, message: "etcd cluster is unavailable" },
    });
    const failed = await run("k2", through(p));
    expect(failed.outcome).toBe("Failed");
    expect(failed.retryable).toBeUndefined();
    expect(failed.error).toMatch(/^ApiFailed: .*etcd cluster is unavailable/);
    const app = await getApp(nsOf("k2"), "k2");
    expect(app.status?.conditions?.find((c) => c.type === "Ready")).toMatchObject({
      status: "False",
      reason: "ApiFailed",
    });
    expect(app.status?.failures).toBe(1);
    expect((await warnings("k2", "ApiFailed")).length).toBe(1);
    // Nothing was applied: the failure came before the apply.
    expect((await configMap("k2", "base"))?.["data"]).toEqual({ k: "two" });
    expect(await configMap("k2", "extra")).toBeUndefined();
    p.clear();
    expect(await run("k2", through(p))).toMatchObject({
      outcome: "Reconciled",
      syncStatus: "Synced",
    });
  });
});

describe("a Lease whose release failed costs seconds, not a minute", () => {
  it("a 500 on the Lease DELETE is retried: the next run finds it free", async () => {
    const repo = await newApp("k3-once");
    await repo.commit({ "base.yaml": cm("base", "b") });
    const p = await proxy();
    const release = p.inject({ method: "DELETE", path: "/leases/", fault: { status: 500 } });
    expect(await run("k3-once", through(p))).toMatchObject({ syncStatus: "Synced" });
    expect(release.hits()).toBe(1);
    expect(
      await getObject(
        `/apis/coordination.k8s.io/v1/namespaces/${nsOf("k3-once")}/leases/plumb-app-k3-once`,
      ),
    ).toBeUndefined();
  });

  it("a release that fails for good delays the next run by the Lease's few seconds, polled with backoff", async () => {
    const repo = await newApp("k3-stuck");
    await repo.commit({ "base.yaml": cm("base", "b") });
    const p = await proxy();
    p.inject({
      method: "DELETE",
      path: "/leases/",
      times: Number.POSITIVE_INFINITY,
      fault: { status: 500 },
    });
    expect(await run("k3-stuck", through(p))).toMatchObject({ syncStatus: "Synced" });
    expect(
      await getObject(
        `/apis/coordination.k8s.io/v1/namespaces/${nsOf("k3-stuck")}/leases/plumb-app-k3-stuck`,
      ),
    ).toBeDefined();
    p.clear();
    await repo.commit({ "base.yaml": cm("base", "c") });
    const before = p.requests.length;
    expect(await run("k3-stuck", through(p))).toMatchObject({ syncStatus: "Synced" });
    const leaseRequests = p.requests.slice(before).filter((r) => r.path.includes("/leases"));
    // create (409), then a GET per poll (200 ms doubling to 2 s within the Lease's
    // LEASE_SECONDS), the take-over, the release: a wait of a minute would poll 30 times more.
    expect(leaseRequests.map((r) => `${r.method} ${r.status}`).slice(0, 2)).toEqual([
      "POST 409",
      "GET 200",
    ]);
    expect(leaseRequests.length).toBeLessThanOrEqual(10);
  });
});

describe("a stale run never applies an older commit over a newer one", () => {
  it("run A resolves K and waits for the Lease while run B applies K+1: A applies nothing, the cluster is K+1's", async () => {
    const repo = await newApp("k4");
    // K only changes what the App owns: no tracking write (which would also catch A) before it.
    const k = await repo.commit({ "base.yaml": cm("base", "K") });
    // A: it resolves K, and its Lease create is held until B holds the Lease.
    const pa = await proxy();
    let bHolds = () => {};
    const held = new Promise<void>((r) => {
      bHolds = r;
    });
    pa.inject({ method: "POST", path: "/leases", fault: { holdUntil: held } });
    const a = run("k4", through(pa));
    await waitForRequest(pa, (r) => r.method === "POST" && r.path.includes("/leases"));
    // Meanwhile K+1 lands and B applies it, holding the Lease for a while (a slow apply).
    const k1 = await repo.commit({
      "base.yaml": cm("base", "K+1"),
      "new.yaml": cm("new-k1"),
    });
    const pb = await proxy();
    pb.inject({ method: "PATCH", path: "/configmaps/base", fault: { delayMs: 3_000 } });
    const running = run("k4", through(pb));
    // B's slow apply: B holds the Lease now, so A's create (let through) meets it.
    await waitForRequest(pb, (r) => r.method === "PATCH" && r.path.includes("/configmaps/base"));
    bHolds();
    const b = await running;
    expect(b).toMatchObject({ outcome: "Reconciled", syncStatus: "Synced", revision: k1 });
    const ra = await a;
    expect(ra).toMatchObject({ outcome: "Reconciled", syncStatus: "Synced", revision: k1 });
    // A waited for the Lease (its create got 409), then never applied K.
    expect(
      pa.requests.some(
        (r) => r.method === "POST" && r.path.includes("/leases") && r.status === 409,
      ),
    ).toBe(true);
    expect(
      pa.requests.filter((r) => r.method === "PATCH" && r.path.includes("/configmaps/")),
    ).toEqual([]);
    expect((await configMap("k4", "base"))?.["data"]).toEqual({ k: "K+1" });
    expect(await configMap("k4", "new-k1")).toBeDefined();
    const app = await getApp(nsOf("k4"), "k4");
    expect(app.status?.revision).toBe(k1);
    expect(app.status?.revision).not.toBe(k);
  });
});

describe("a run that outlives its Lease writes nothing more", () => {
  it("a run whose apply and Lease renewals go unanswered stops when its Lease runs out and never sends that apply again", async () => {
    const repo = await newApp("k5");
    const k1 = await repo.commit({ "base.yaml": cm("base", "K1") });
    // A: its renewals are never answered, nor its first apply of base (the transport would
    // send it again after the attempt's 8 s timeout).
    const pa = await proxy();
    pa.inject({
      method: "PUT",
      path: "/leases/",
      times: Number.POSITIVE_INFINITY,
      fault: { hang: true },
    });
    pa.inject({ method: "PATCH", path: "/configmaps/base", fault: { hang: true } });
    const a = run("k5", through(pa, { attemptTimeoutMs: 8_000, deadlineMs: 20_000 }));
    await waitForRequest(pa, (r) => r.method === "PATCH" && r.path.includes("/configmaps/base"));
    // K2 lands and another run reconciles it meanwhile (once A's Lease is free).
    const k2 = await repo.commit({ "base.yaml": cm("base", "K2") });
    const b = await run("k5");
    expect(b).toMatchObject({ outcome: "Reconciled", syncStatus: "Synced", revision: k2 });
    const ra = await a;
    // A's first attempt stopped when its Lease ran out (LEASE_SECONDS), not when its hung
    // apply timed out (8 s, after which the transport would have sent it again): it released
    // the Lease with no second apply of base before. Any later apply by A comes from a new
    // attempt under a new Lease, after it re-read the App and resolved K2.
    const seen = pa.requests;
    const applyOfBase = (r: (typeof seen)[number]) =>
      r.method === "PATCH" && r.path.includes("/configmaps/base");
    const firstApply = seen.findIndex(applyOfBase);
    const stopped = seen.findIndex(
      (r, i) => i > firstApply && r.method === "DELETE" && r.path.includes("/leases/"),
    );
    expect(stopped).toBeGreaterThan(firstApply);
    expect(seen.slice(firstApply + 1, stopped).filter(applyOfBase)).toEqual([]);
    const nextLease = seen.findIndex(
      (r, i) => i > firstApply && r.method === "POST" && r.path.includes("/leases"),
    );
    for (const [i, r] of seen.entries()) {
      if (i > firstApply && r.method === "PATCH" && r.path.includes("/configmaps/")) {
        expect(nextLease, "an apply after the first comes from a new Lease").toBeGreaterThan(-1);
        expect(i).toBeGreaterThan(nextLease);
      }
    }
    expect(ra).toMatchObject({ outcome: "Reconciled", revision: k2 });
    expect((await configMap("k5", "base"))?.["data"]).toEqual({ k: "K2" });
    const app = await getApp(nsOf("k5"), "k5");
    expect(app.status?.revision).toBe(k2);
    expect(app.status?.revision).not.toBe(k1);
  });
});

describe("an older run's write that lands after a newer run's apply is drift", () => {
  it("A's apply of base=2 is held past its Lease, B applies base=3, then A's write lands: the next full run reports data.k and selfHeal puts back 3", async () => {
    const repo = await newApp("k6");
    await repo.commit({ "base.yaml": cm("base", "2") });
    // A: its Lease renewals go unanswered and its apply of base is held on the link (not lost):
    // A gives up on it when the Lease runs out, and the API server gets it later.
    const pa = await proxy();
    pa.inject({
      method: "PUT",
      path: "/leases/",
      times: Number.POSITIVE_INFINITY,
      fault: { hang: true },
    });
    let release!: () => void;
    const held = new Promise<void>((r) => {
      release = r;
    });
    pa.inject({ method: "PATCH", path: "/configmaps/base", fault: { holdUntil: held } });
    const a = run("k6", through(pa, { attemptTimeoutMs: 8_000, deadlineMs: 20_000 }));
    await waitForRequest(pa, (r) => r.fault === "hold");
    // Rev3 lands; B applies it once A's Lease is free.
    const rev3 = await repo.commit({ "base.yaml": cm("base", "3") });
    const b = await run("k6");
    expect(b).toMatchObject({ outcome: "Reconciled", syncStatus: "Synced", revision: rev3 });
    expect((await configMap("k6", "base"))?.["data"]).toEqual({ k: "3" });
    await a;
    // Now A's old write reaches the API server: an older revision's value under plumb's own
    // field manager, while status says rev3 Synced.
    release();
    await waitForRequest(pa, (r) => r.fault === "hold" && r.status === 200);
    expect((await configMap("k6", "base"))?.["data"]).toEqual({ k: "2" });
    const before = await getApp(nsOf("k6"), "k6");
    expect(before.status).toMatchObject({ revision: rev3, syncStatus: "Synced" });
    expect(before.status?.drift).toBeUndefined();

    // The next full run compares values, not owners: the drift is reported, field by field.
    const seen = await run("k6", realPorts(), { compare: true });
    expect(seen).toMatchObject({ outcome: "Reconciled", syncStatus: "OutOfSync", revision: rev3 });
    const drifted = (await getApp(nsOf("k6"), "k6")).status;
    expect(drifted?.drift).toEqual([
      {
        apiVersion: "v1",
        kind: "ConfigMap",
        namespace: nsOf("k6"),
        name: "base",
        fields: [{ path: "data.k", desired: "3", live: "2" }],
      },
    ]);
    expect(drifted?.resources?.find((r) => r.name === "base")?.message).toBe("drifted: data.k");

    // selfHeal puts back what rev3 applied; the run after that finds nothing and patches nothing.
    await patchAppSpec(nsOf("k6"), "k6", { syncPolicy: { selfHeal: true } });
    const healed = await run("k6", realPorts(), { compare: true });
    expect(healed).toMatchObject({ outcome: "Reconciled", syncStatus: "Synced", revision: rev3 });
    expect((await configMap("k6", "base"))?.["data"]).toEqual({ k: "3" });
    expect((await getApp(nsOf("k6"), "k6")).status?.drift).toBeUndefined();
    const pc = await proxy();
    const steady = await run("k6", through(pc), { compare: true });
    expect(steady).toMatchObject({ outcome: "Reconciled", syncStatus: "Synced", revision: rev3 });
    expect(
      pc.requests.filter((r) => r.method === "PATCH" && r.path.includes("/configmaps/")),
    ).toEqual([]);
    expect((await configMap("k6", "base"))?.["data"]).toEqual({ k: "3" });
  });
});

/** Resolves when `p` has seen a request matching `pred` (polls every 20 ms). */
async function waitForRequest(
  p: FaultProxy,
  pred: (r: FaultProxy["requests"][number]) => boolean,
): Promise<void> {
  await waitFor("the request", async () => p.requests.some(pred), { everyMs: 20 });
}
