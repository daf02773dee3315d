// The loop's decisions under faults and races, on the fake API server: what is
// tracked before it is applied, what a failed run records, how the Lease is waited for, renewed,
// lost and released, and how a stale run starts over. The same kinds run against the real API
// server through a fault-injecting proxy in test/e2e/faults.test.ts.
import { describe, expect, it } from "vitest";
import { createFakeKube, type FakeKube, testApp } from "../../test/support/fake-kube.ts";
import { KubeApiError, type SourceFile } from "../core/index.ts";
import type { GitPort, Ports } from "./index.ts";
import { reconcileApp } from "./index.ts";
import { LEASE_SECONDS, leaseName, RENEW_MS } from "./lease.ts";

const CM = (name: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}}\ndata: {k: "${name}"}\n`;
const A = "a".repeat(40);
const B = "b".repeat(40);
const C = "c".repeat(40);
const D = "d".repeat(40);
const REF = { namespace: "team-a", name: "web" };
const t0 = new Date("2026-11-29T12:00:00Z");
const later = (s: number) => new Date(t0.getTime() + s * 1000);

/** Commits: A renders `base`; B adds `extra`; C drops it again and changes `base`. */
function setup() {
  const kube = createFakeKube();
  const commits = new Map<string, SourceFile[]>([
    [A, [{ path: "base.yaml", content: CM("base") }]],
    [
      B,
      [
        { path: "base.yaml", content: CM("base") },
        { path: "extra.yaml", content: CM("extra") },
      ],
    ],
    [C, [{ path: "base.yaml", content: CM("base").replace('"base"', '"c"') }]],
    // D renders exactly what A renders (the render last applied before B).
    [D, [{ path: "base.yaml", content: CM("base") }]],
  ]);
  const head = { sha: A };
  const git: GitPort = {
    async resolve() {
      return head.sha;
    },
    async fetch(_s, commit) {
      return commits.get(commit) ?? [];
    },
  };
  // A clock that only sleeping moves: Lease waits and expiries are exact.
  const time = { now: 0 };
  kube.clock = () => time.now;
  const ports: Ports = {
    kube,
    git,
    holder: "test",
    clock: () => time.now,
    sleep: async (ms) => {
      time.now += ms;
    },
  };
  kube.apps.set("team-a/web", testApp("team-a", "web"));
  kube.apps.get("team-a/web")!.metadata.uid = "uid-web";
  return { kube, head, ports, time };
}

const status = (kube: FakeKube) => kube.apps.get("team-a/web")!.status!;
const inventory = (kube: FakeKube) => (status(kube).inventory ?? []).map((r) => r.name).sort();
const live = (kube: FakeKube) => [...kube.objects.values()].map((o) => o.metadata.name).sort();

describe("whatever a run may apply is tracked before it is applied", () => {
  it("an object created by a run whose final status write failed is pruned when the source drops it", async () => {
    const { kube, head, ports } = setup();
    await reconcileApp(REF, ports, t0);
    head.sha = B;
    const writes: string[][] = [];
    const write = kube.writeStatus.bind(kube);
    kube.writeStatus = async (app, s) => {
      writes.push((s.inventory ?? []).map((r) => r.name).sort());
      if (writes.length === 2) throw new KubeApiError(500, "InternalError", "etcd timeout");
      return write(app, s);
    };
    const failed = await reconcileApp(REF, ports, later(60));
    // One write tracks the union before applying; the final one failed; the failure is
    // recorded instead (the stored inventory kept).
    expect(writes).toEqual([
      ["base", "extra"],
      ["base", "extra"],
      ["base", "extra"],
    ]);
    expect(failed).toMatchObject({ outcome: "Failed", error: "ApiFailed: etcd timeout" });
    expect(live(kube)).toEqual(["base", "extra"]);
    expect(inventory(kube)).toEqual(["base", "extra"]);
    kube.writeStatus = write;
    head.sha = C;
    const next = await reconcileApp(REF, ports, later(120));
    expect(next).toMatchObject({ outcome: "Reconciled", syncStatus: "Synced", revision: C });
    expect(live(kube)).toEqual(["base"]);
    expect(inventory(kube)).toEqual(["base"]);
  });

  it("after such a run, a commit rendering exactly the set applied before still prunes the tracked object", async () => {
    const { kube, head, ports } = setup();
    await reconcileApp(REF, ports, t0);
    head.sha = B;
    const write = kube.writeStatus.bind(kube);
    let writes = 0;
    kube.writeStatus = async (app, s) => {
      if (++writes >= 2) throw new KubeApiError(500, "InternalError", "etcd timeout");
      return write(app, s);
    };
    await reconcileApp(REF, ports, later(60));
    kube.writeStatus = write;
    expect(inventory(kube)).toEqual(["base", "extra"]);
    // The gates leave a render equal to the one applied alone; the tracking write cleared it.
    head.sha = D;
    const next = await reconcileApp(REF, ports, later(120));
    expect(next).toMatchObject({ outcome: "Reconciled", syncStatus: "Synced", revision: D });
    expect(live(kube)).toEqual(["base"]);
    expect(inventory(kube)).toEqual(["base"]);
  });

  it("when only the final write failed and the failure was recorded, the source going back still prunes", async () => {
    const { kube, head, ports } = setup();
    await reconcileApp(REF, ports, t0);
    const appliedA = status(kube).objectHash;
    head.sha = B;
    const write = kube.writeStatus.bind(kube);
    let writes = 0;
    kube.writeStatus = async (app, s) => {
      if (++writes === 2) throw new KubeApiError(500, "InternalError", "etcd timeout");
      return write(app, s);
    };
    const failed = await reconcileApp(REF, ports, later(60));
    kube.writeStatus = write;
    // Three writes: tracking, the final one (failed), the failure (stored).
    expect(writes).toBe(3);
    expect(failed).toMatchObject({ outcome: "Failed", error: "ApiFailed: etcd timeout" });
    expect(status(kube).failures).toBe(1);
    expect(inventory(kube)).toEqual(["base", "extra"]);
    // Not A's hash again: the cluster holds `extra`, which A's render does not.
    expect(appliedA).toBeDefined();
    expect(status(kube).objectHash).toBeUndefined();
    head.sha = D;
    const next = await reconcileApp(REF, ports, later(120));
    expect(next).toMatchObject({ outcome: "Reconciled", syncStatus: "Synced", revision: D });
    expect(live(kube)).toEqual(["base"]);
    expect(inventory(kube)).toEqual(["base"]);
  });

  it("an apply whose answer was lost keeps the object in the inventory, and a later prune removes it", async () => {
    const { kube, head, ports } = setup();
    await reconcileApp(REF, ports, t0);
    head.sha = B;
    const apply = kube.apply.bind(kube);
    kube.apply = async (obj, opts) => {
      const stored = await apply(obj, opts);
      if (obj.metadata.name === "extra") {
        throw new KubeApiError(503, "ServiceUnavailable", "PATCH extra: connection reset");
      }
      return stored;
    };
    const r = await reconcileApp(REF, ports, later(60));
    expect(r.outcome).toBe("Failed");
    expect(r.error).toContain("connection reset");
    expect(inventory(kube)).toEqual(["base", "extra"]);
    kube.apply = apply;
    head.sha = C;
    await reconcileApp(REF, ports, later(120));
    expect(live(kube)).toEqual(["base"]);
    expect(inventory(kube)).toEqual(["base"]);
  });

  it("a delete that failed for good is tried again by the next run, although the render is unchanged", async () => {
    const { kube, head, ports } = setup();
    head.sha = B;
    await reconcileApp(REF, ports, t0);
    head.sha = C;
    kube.fail.delete = new KubeApiError(500, "InternalError", "etcd timeout");
    const failed = await reconcileApp(REF, ports, later(60));
    expect(failed).toMatchObject({
      outcome: "Failed",
      error: "PruneFailed: ConfigMap team-a/extra: etcd timeout",
    });
    expect(live(kube)).toEqual(["base", "extra"]);
    expect(inventory(kube)).toEqual(["base", "extra"]);
    // Same commit, same render: still a sync, which prunes it; then steady.
    const next = await reconcileApp(REF, ports, later(120));
    expect(next).toMatchObject({ outcome: "Reconciled", syncStatus: "Synced", revision: C });
    expect(next.requests.delete).toBe(2); // extra, and the Lease released
    expect(live(kube)).toEqual(["base"]);
    expect(inventory(kube)).toEqual(["base"]);
    const steady = await reconcileApp(REF, ports, later(180));
    expect(steady.requests).toMatchObject({ patch: 0, delete: 0 });
  });

  it("an apply the server refused (a 4xx: surely not stored) is not tracked after the run", async () => {
    const { kube, head, ports } = setup();
    await reconcileApp(REF, ports, t0);
    head.sha = B;
    const apply = kube.apply.bind(kube);
    kube.apply = async (obj, opts) => {
      if (obj.metadata.name === "extra") throw new KubeApiError(422, "Invalid", "bad data");
      return apply(obj, opts);
    };
    await reconcileApp(REF, ports, later(60));
    expect(inventory(kube)).toEqual(["base"]);
  });

  it("costs one status write more only when the render adds objects", async () => {
    const { kube, head, ports } = setup();
    const first = await reconcileApp(REF, ports, t0);
    // create: the Lease and one Event (Applied); update: the tracking write and the final one.
    expect(first.requests).toMatchObject({ update: 2, patch: 2, create: 2, delete: 1 });
    const app = kube.apps.get("team-a/web")!;
    (app.spec as Record<string, unknown>)["interval"] = "10m";
    app.metadata.generation = 2;
    head.sha = C;
    const same = await reconcileApp(REF, ports, later(60));
    expect(same.requests).toMatchObject({ update: 1 });
  });
});

describe("a run that fails for good records it", () => {
  it("a request that still fails after the transport's retries is in status and an Event", async () => {
    const { kube, ports } = setup();
    kube.fail.listApps = new KubeApiError(
      500,
      "InternalError",
      "GET /apis/plumb.dev/v1alpha1/apps: HTTP 500",
    );
    const r = await reconcileApp(REF, ports, t0);
    expect(r).toMatchObject({ outcome: "Failed", error: expect.stringMatching(/^ApiFailed: GET/) });
    expect(r.retryable).toBeUndefined();
    expect(status(kube).conditions?.find((c) => c.type === "Ready")).toMatchObject({
      status: "False",
      reason: "ApiFailed",
      message: "GET /apis/plumb.dev/v1alpha1/apps: HTTP 500",
    });
    expect(status(kube).failures).toBe(1);
    expect(kube.events).toContainEqual({
      reason: "ApiFailed",
      message: "GET /apis/plumb.dev/v1alpha1/apps: HTTP 500",
    });
    // The next run applies (the failure is not a steady state).
    const again = await reconcileApp(REF, ports, later(60));
    expect(again).toMatchObject({ outcome: "Reconciled", syncStatus: "Synced" });
  });

  it("a failed status write is reported in a Warning Event and the run line", async () => {
    const { kube, ports } = setup();
    kube.fail.listApps = new KubeApiError(500, "InternalError", "list Apps: HTTP 500");
    const write = kube.writeStatus.bind(kube);
    kube.writeStatus = async () => {
      throw new KubeApiError(503, "ServiceUnavailable", "PUT status: HTTP 503");
    };
    const r = await reconcileApp(REF, ports, t0);
    expect(r).toMatchObject({ outcome: "Failed", retryable: true });
    expect(r.error).toBe("status not written: PUT status: HTTP 503");
    expect(kube.events).toContainEqual({
      reason: "ApiFailed",
      message: "list Apps: HTTP 500 (status not written: PUT status: HTTP 503)",
    });
    kube.writeStatus = write;
  });

  it("a 409 on a status write that changed nothing is written again, not run again", async () => {
    const { kube, ports } = setup();
    const write = kube.writeStatus.bind(kube);
    let conflicts = 1;
    kube.writeStatus = async (app, s) => {
      if (conflicts-- > 0) throw new KubeApiError(409, "Conflict", "injected");
      return write(app, s);
    };
    const r = await reconcileApp(REF, ports, t0);
    expect(r).toMatchObject({ outcome: "Reconciled", syncStatus: "Synced" });
    // The run and the 409's check: the tracking write that landed stands for a re-read.
    expect(kube.calls.getApp).toHaveLength(2);
    expect(kube.events.filter((e) => e.reason === "Applied")).toHaveLength(1);
  });

  it("a 409 after a status write that landed (its answer lost) is the write's success", async () => {
    const { kube, ports } = setup();
    const write = kube.writeStatus.bind(kube);
    let lost = 2; // the tracking write and the final one
    kube.writeStatus = async (app, s) => {
      await write(app, s);
      if (lost-- > 0) throw new KubeApiError(409, "Conflict", "resent after a reset");
      return write(app, s);
    };
    const r = await reconcileApp(REF, ports, t0);
    expect(r).toMatchObject({ outcome: "Reconciled", syncStatus: "Synced", revision: A });
    expect(kube.events.map((e) => e.reason)).toEqual(["Applied"]);
  });
});

describe("the Lease", () => {
  it("a Lease whose holder is gone delays a run by its remaining duration, polled with backoff", async () => {
    const { kube, ports, time } = setup();
    kube.setLease("team-a", "plumb-app-web", {
      holder: "gone",
      expiresAt: time.now + LEASE_SECONDS * 1000,
    });
    const acquire = kube.acquireLease.bind(kube);
    let attempts = 0;
    kube.acquireLease = (...a) => {
      attempts += 1;
      return acquire(...a);
    };
    const r = await reconcileApp(REF, ports, t0);
    expect(r).toMatchObject({ outcome: "Reconciled", syncStatus: "Synced" });
    expect(time.now).toBeGreaterThanOrEqual(LEASE_SECONDS * 1000);
    expect(time.now).toBeLessThan(LEASE_SECONDS * 1000 + 1_000);
    // Attempts: 200 ms doubling to 2 s within 5 s, jittered: a handful, not one per 500 ms
    // (a fixed 500 ms retry once made 121 creates in 60 s).
    expect(attempts).toBeGreaterThanOrEqual(3);
    expect(attempts).toBeLessThanOrEqual(8);
  });

  it("a release that fails is retried, so the next run finds the Lease free", async () => {
    const { kube, ports } = setup();
    kube.fail.releaseLease = new KubeApiError(500, "InternalError", "DELETE Lease: HTTP 500");
    await reconcileApp(REF, ports, t0);
    expect(kube.lease("team-a", leaseName(kube.apps.get("team-a/web")!))).toBeUndefined();
  });

  it("a live holder is waited for at most 30 s; the run then says who holds it and writes nothing", async () => {
    const { kube, ports, time } = setup();
    const sleep = ports.sleep!;
    ports.sleep = async (ms) => {
      await sleep(ms);
      kube.setLease("team-a", "plumb-app-web", { holder: "busy", expiresAt: time.now + 5_000 });
    };
    kube.setLease("team-a", "plumb-app-web", { holder: "busy", expiresAt: 5_000 });
    const r = await reconcileApp(REF, ports, t0);
    expect(r).toMatchObject({ outcome: "Failed", retryable: true });
    expect(r.error).toContain("another run (busy) holds the lease of App team-a/web");
    expect(kube.objects.size).toBe(0);
    expect(time.now).toBeLessThanOrEqual(3 * 30_000 + 2_000);
  });
});

describe("a stale run never applies over a newer one", () => {
  it("a run that resolved A and waited while another applied B starts over and applies nothing old", async () => {
    const { kube, head, ports, time } = setup();
    await reconcileApp(REF, ports, t0);
    head.sha = B; // A stale run resolves B...
    kube.setLease("team-a", "plumb-app-web", { holder: "other", expiresAt: time.now + 8_000 });
    const sleep = ports.sleep!;
    let other: Promise<unknown> | undefined;
    ports.sleep = async (ms) => {
      // ...while it waits, C lands and another run applies it.
      other ??= (async () => {
        head.sha = C;
        kube.setLease("team-a", "plumb-app-web", undefined);
        await reconcileApp(REF, { ...ports, sleep, holder: "other" }, later(61));
      })();
      await other;
      await sleep(ms);
    };
    const applied: string[] = [];
    const apply = kube.apply.bind(kube);
    kube.apply = async (obj, opts) => {
      applied.push(obj.metadata.name);
      return apply(obj, opts);
    };
    const stale = await reconcileApp(REF, ports, later(60));
    expect(stale).toMatchObject({ outcome: "Reconciled", revision: C, syncStatus: "Synced" });
    // Only the other run applied (base, of C): the stale run applied neither base nor extra.
    expect(applied).toEqual(["base"]);
    expect(live(kube)).toEqual(["base"]);
    expect(status(kube).revision).toBe(C);
  });
});

describe("the App known unchanged under the Lease", () => {
  it("a first sync reads the App once: its inventory tracking write, conditional, stands for the re-read", async () => {
    const { kube, ports } = setup();
    const r = await reconcileApp(REF, ports, t0);
    expect(r).toMatchObject({ outcome: "Reconciled", syncStatus: "Synced" });
    expect(kube.calls.getApp).toEqual(["team-a/web"]);
  });

  it("a run with nothing new to track re-reads the App before its first apply: changed meanwhile, it starts over and applies nothing old", async () => {
    const { kube, head, ports, time } = setup();
    await reconcileApp(REF, ports, t0);
    head.sha = C; // A stale run resolves C (base changed, nothing new)...
    kube.setLease("team-a", "plumb-app-web", { holder: "other", expiresAt: time.now + 8_000 });
    const sleep = ports.sleep!;
    let other: Promise<unknown> | undefined;
    ports.sleep = async (ms) => {
      // ...while it waits, B lands and another run applies it.
      other ??= (async () => {
        head.sha = B;
        kube.setLease("team-a", "plumb-app-web", undefined);
        await reconcileApp(REF, { ...ports, sleep, holder: "other" }, later(61));
      })();
      await other;
      await sleep(ms);
    };
    const applied: string[] = [];
    const apply = kube.apply.bind(kube);
    kube.apply = async (obj, opts) => {
      applied.push(`${obj.metadata.name}=${JSON.stringify(obj["data"])}`);
      return apply(obj, opts);
    };
    const stale = await reconcileApp(REF, ports, later(60));
    expect(stale).toMatchObject({ outcome: "Reconciled", revision: B, syncStatus: "Synced" });
    // C's base was never applied: the stale run's re-read found the App moved, and it started
    // over from B.
    expect(applied).toEqual(['extra={"k":"extra"}']);
    expect(live(kube)).toEqual(["base", "extra"]);
    expect(status(kube).revision).toBe(B);
  });
});

describe("a run that outlives its Lease writes nothing", () => {
  it("when a renewal finds the Lease taken, the run stops before its next write and starts over", async () => {
    const { kube, head, ports, time } = setup();
    await reconcileApp(REF, ports, t0);
    head.sha = B;
    const name = "plumb-app-web";
    const writesWhileStolen: string[] = [];
    const listApps = kube.listApps.bind(kube);
    let stolen = false;
    kube.listApps = async (ns) => {
      if (!stolen) {
        // The run stalls past a renewal; meanwhile another holder took the expired Lease.
        stolen = true;
        time.now += RENEW_MS + 10;
        kube.setLease("team-a", name, { holder: "thief", expiresAt: time.now + 1_000 });
      }
      return listApps(ns);
    };
    const guard =
      <A extends unknown[], R>(what: string, fn: (...a: A) => Promise<R>) =>
      async (...a: A): Promise<R> => {
        if (kube.lease("team-a", name)?.holder === "thief") writesWhileStolen.push(what);
        return fn(...a);
      };
    kube.apply = guard("apply", kube.apply.bind(kube));
    kube.delete = guard("delete", kube.delete.bind(kube));
    kube.writeStatus = guard("status", kube.writeStatus.bind(kube));
    const r = await reconcileApp(REF, ports, later(60));
    expect(writesWhileStolen).toEqual([]);
    expect(r).toMatchObject({ outcome: "Reconciled", revision: B });
    expect(inventory(kube)).toEqual(["base", "extra"]);
  });
});

describe("taking the Lease", () => {
  it("a Lease create that failed transiently (it may have landed) is tried again, not recorded as a failure", async () => {
    const { kube, ports } = setup();
    const acquire = kube.acquireLease.bind(kube);
    let fails = 1;
    kube.acquireLease = async (ns, name, holder, seconds) => {
      const claim = await acquire(ns, name, holder, seconds); // it landed...
      if (fails-- > 0) throw new KubeApiError(500, "InternalError", "POST Lease: reset"); // ...unheard
      return claim;
    };
    const r = await reconcileApp(REF, ports, t0);
    expect(r).toMatchObject({ outcome: "Reconciled", syncStatus: "Synced" });
    expect(kube.lease("team-a", "plumb-app-web")).toBeUndefined();
  });
});

describe("a write in flight when the Lease runs out", () => {
  it("carries a signal that aborts with LeaseLostError, so a transport does not send it again", async () => {
    const { kube, head, ports, time } = setup();
    await reconcileApp(REF, ports, t0);
    head.sha = B;
    const apply = kube.apply.bind(kube);
    const seen: Array<{ aborted: boolean; reason: string }> = [];
    kube.apply = async (obj, opts) => {
      if (seen.length === 0) {
        // The request hangs past the Lease (renewals failing too); a retry layer would then
        // look at the signal before sending it again.
        time.now += 10_000;
        // However late the Lease's timer fires on a loaded machine: wait for its abort.
        const signal = opts?.signal;
        if (signal && !signal.aborted) {
          await new Promise((r) => signal.addEventListener("abort", r, { once: true }));
        }
        seen.push({ aborted: signal?.aborted === true, reason: String(signal?.reason) });
        signal?.throwIfAborted();
      }
      return apply(obj, opts);
    };
    const r = await reconcileApp(REF, ports, later(60));
    expect(seen[0]).toEqual({
      aborted: true,
      reason:
        "LeaseLostError: the lease of App team-a/web was lost before writing; the run stopped",
    });
    // The run started over and applied B under a new Lease.
    expect(r).toMatchObject({ outcome: "Reconciled", revision: B });
  });
});
