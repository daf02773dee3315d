// The loop's decisions for remote destinations over fake clusters: where objects
// go, what the inventory records, and what an unreachable or refused destination does. What
// users see on real clusters is proven in test/e2e/remote-cluster.test.ts.
import { describe, expect, it } from "vitest";
import { addApp, createFakeKube, type FakeKube } from "../../test/support/fake-kube.ts";
import { DestinationError, KubeApiError, type SourceFile } from "../core/index.ts";
import type { DestinationPort, GitPort, Ports } from "./index.ts";
import { reconcileApp } from "./index.ts";

const CM = (name: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}}\ndata: {a: "1"}\n`;
const A = "a".repeat(40);
const B = "b".repeat(40);
const web = { namespace: "team-a", name: "web" };
const t0 = new Date("2026-11-29T12:00:00Z");
const at = (s: number) => new Date(t0.getTime() + s * 1000);

/** Remote clusters by server URL; a kubeconfig here is just "server: URL" (or "exec"). */
function fakeDestinations(clusters: Map<string, FakeKube>, down: Set<string>): DestinationPort {
  return {
    async connect(kubeconfig, source) {
      if (kubeconfig.includes("exec")) {
        throw new DestinationError(
          "invalid",
          `kubeconfig ${source}: user "u": exec is not allowed for this kubeconfig (credential plugins run local commands)`,
        );
      }
      const server = kubeconfig.replace("server: ", "").trim();
      if (down.has(server)) {
        throw new DestinationError(
          "unreachable",
          `GET ${server}/version: connection refused (ECONNREFUSED)`,
        );
      }
      const cluster = clusters.get(server);
      if (!cluster) throw new Error(`no fake cluster ${server}`);
      return { server, cluster, credentials: [], requestCounts: () => cluster.requestCounts() };
    },
  };
}

function setup() {
  const home = createFakeKube();
  const b = createFakeKube();
  const c = createFakeKube();
  const clusters = new Map([
    ["https://b.example:6443", b],
    ["https://c.example:6443", c],
  ]);
  const down = new Set<string>();
  const commits = new Map<string, SourceFile[]>([
    [
      A,
      [
        { path: "one.yaml", content: CM("one") },
        { path: "two.yaml", content: CM("two") },
      ],
    ],
    [B, [{ path: "one.yaml", content: CM("one") }]],
  ]);
  const head = { sha: A };
  const git: GitPort = {
    resolve: async () => head.sha,
    fetch: async (_s, commit) => commits.get(commit) ?? [],
  };
  const ports: Ports = {
    kube: home,
    git,
    holder: "test",
    sleep: async () => {},
    destinations: fakeDestinations(clusters, down),
  };
  home.secrets.set("team-a/to-b", { value: "server: https://b.example:6443" });
  home.secrets.set("team-a/to-c", { "value.yaml": "server: https://c.example:6443" });
  addApp(home, "team-a", "web", {
    source: { git: { url: "https://git.example/org/repo.git" } },
    destination: { cluster: { secretRef: { name: "to-b" } } },
  });
  const app = () => home.apps.get("team-a/web")!;
  const setSpec = (patch: Record<string, unknown>) => {
    app().spec = { ...(app().spec as Record<string, unknown>), ...patch };
    app().metadata.generation = (app().metadata.generation ?? 1) + 1;
  };
  return { home, b, c, down, head, ports, app, setSpec };
}

const names = (k: FakeKube) =>
  [...k.objects.values()].filter((o) => o.kind === "ConfigMap").map((o) => o.metadata.name);

describe("remote destination", () => {
  it("applies to the cluster the Secret names; App, status and Events stay home", async () => {
    const { home, b, ports, app } = setup();
    const run = await reconcileApp(web, ports, t0);
    expect(run).toMatchObject({ outcome: "Reconciled", syncStatus: "Synced", revision: A });
    expect(names(b).sort()).toEqual(["one", "two"]);
    expect(names(home)).toEqual([]);
    expect(
      app().status?.inventory?.map(({ hash: _hash, owned: _owned, ...entry }) => entry),
    ).toEqual([
      {
        apiVersion: "v1",
        kind: "ConfigMap",
        namespace: "team-a",
        name: "one",
        cluster: "https://b.example:6443",
      },
      {
        apiVersion: "v1",
        kind: "ConfigMap",
        namespace: "team-a",
        name: "two",
        cluster: "https://b.example:6443",
      },
    ]);
    expect(app().status?.clusters).toEqual([
      { server: "https://b.example:6443", secretRef: { name: "to-b" } },
    ]);
    expect(b.apps.size).toBe(0);
    expect(b.events).toEqual([]);
    expect(home.events.map((e) => e.reason)).toContain("Applied");
  });

  it("a run's request counts add the destination's to the App's cluster's", async () => {
    const { home, b, ports } = setup();
    const run = await reconcileApp(web, ports, t0);
    const sum = { ...home.requestCounts() };
    for (const [verb, n] of Object.entries(b.requestCounts())) sum[verb as keyof typeof sum] += n;
    expect(run.requests).toEqual(sum);
    expect(b.requestCounts().patch).toBe(2); // the two ConfigMaps, applied on B
  });

  it("prunes on the destination what the next commit drops", async () => {
    const { b, head, ports } = setup();
    await reconcileApp(web, ports, t0);
    head.sha = B;
    await reconcileApp(web, ports, at(60));
    expect(names(b)).toEqual(["one"]);
  });

  it("a refused kubeconfig (exec plugin): DestinationInvalid, nothing runs anywhere", async () => {
    const { home, b, ports, app } = setup();
    home.secrets.set("team-a/to-b", { value: "users: [{user: {exec: {command: sh}}}]" });
    const run = await reconcileApp(web, ports, t0);
    expect(run.outcome).toBe("Failed");
    expect(run.error).toBe(
      'DestinationInvalid: destination: kubeconfig Secret team-a/to-b key value: user "u": exec is not allowed for this kubeconfig (credential plugins run local commands)',
    );
    expect(names(b)).toEqual([]);
    expect(names(home)).toEqual([]);
    expect(app().status?.conditions?.find((c) => c.type === "Stalled")).toMatchObject({
      status: "False",
      reason: "Retrying",
      message:
        "retrying with backoff; the destination's kubeconfig Secret must change for it to succeed",
    });
  });

  it("a missing Secret or key says which", async () => {
    const { home, ports } = setup();
    home.secrets.delete("team-a/to-b");
    expect((await reconcileApp(web, ports, t0)).error).toBe(
      "DestinationInvalid: destination: Secret team-a/to-b not found",
    );
    home.secrets.set("team-a/to-b", { other: "x" });
    expect((await reconcileApp(web, ports, at(60))).error).toBe(
      "DestinationInvalid: destination: Secret team-a/to-b has no kubeconfig under value or value.yaml",
    );
  });

  it("unreachable: DestinationUnreachable, inventory kept, backoff, recovers by itself", async () => {
    const { b, down, head, ports, app } = setup();
    await reconcileApp(web, ports, t0);
    const inventory = app().status?.inventory;
    down.add("https://b.example:6443");
    head.sha = B;
    const failed = await reconcileApp(web, ports, at(60));
    expect(failed.error).toBe(
      "DestinationUnreachable: destination unreachable: GET https://b.example:6443/version: connection refused (ECONNREFUSED)",
    );
    expect(app().status?.inventory).toEqual(inventory);
    expect(app().status?.conditions?.find((c) => c.type === "Ready")).toMatchObject({
      status: "False",
      reason: "DestinationUnreachable",
    });
    expect(app().status?.failures).toBe(1);
    // The backoff counts from the failed run (nothing about the next run is stored).
    expect(app().status?.lastReconciledAt).toBe(at(60).toISOString());
    expect(app().status?.nextReconcileAt).toBeUndefined();
    expect(names(b).sort()).toEqual(["one", "two"]);
    down.clear();
    const back = await reconcileApp(web, ports, at(120));
    expect(back).toMatchObject({ outcome: "Reconciled", syncStatus: "Synced", revision: B });
    expect(names(b)).toEqual(["one"]);
    expect(app().status?.failures).toBeUndefined();
  });

  it("a new destination: prunes the former one, then applies to the new one", async () => {
    const { b, c, ports, app, setSpec } = setup();
    await reconcileApp(web, ports, t0);
    setSpec({ destination: { cluster: { secretRef: { name: "to-c" } } } });
    const moved = await reconcileApp(web, ports, at(60));
    expect(moved).toMatchObject({ outcome: "Reconciled", syncStatus: "Synced" });
    expect(names(b)).toEqual([]);
    expect(names(c).sort()).toEqual(["one", "two"]);
    expect(app().status?.inventory?.map((e) => e.cluster)).toEqual([
      "https://c.example:6443",
      "https://c.example:6443",
    ]);
    expect(app().status?.clusters).toEqual([
      { server: "https://c.example:6443", secretRef: { name: "to-c" } },
    ]);
  });

  it("back to the App's own cluster prunes the remote one", async () => {
    const { home, b, ports, app, setSpec } = setup();
    await reconcileApp(web, ports, t0);
    setSpec({ destination: { cluster: "" } });
    await reconcileApp(web, ports, at(60));
    expect(names(b)).toEqual([]);
    expect(names(home).sort()).toEqual(["one", "two"]);
    expect(app().status?.inventory?.every((e) => e.cluster === undefined)).toBe(true);
    expect(app().status?.clusters).toBeUndefined();
  });

  it("a former destination that cannot be reached: refused, nothing applied to the new one", async () => {
    const { b, c, down, ports, app, setSpec } = setup();
    await reconcileApp(web, ports, t0);
    const inventory = app().status?.inventory;
    down.add("https://b.example:6443");
    setSpec({ destination: { cluster: { secretRef: { name: "to-c" } } } });
    const refused = await reconcileApp(web, ports, at(60));
    expect(refused.error).toMatch(
      /^DestinationUnreachable: cannot reach a former destination to prune what the App left there: https:\/\/b\.example:6443 \(2 object\(s\)\): .*connection refused.* \(annotate the App plumb\.dev\/orphan-unreachable: "true" to leave those objects\)$/,
    );
    expect(names(c)).toEqual([]);
    expect(app().status?.inventory).toEqual(inventory);
    // The way out: leave them there.
    app().metadata.annotations = { "plumb.dev/orphan-unreachable": "true" };
    const moved = await reconcileApp(web, ports, at(120));
    expect(moved).toMatchObject({ outcome: "Reconciled", syncStatus: "Synced" });
    expect(names(c).sort()).toEqual(["one", "two"]);
    expect(names(b).sort()).toEqual(["one", "two"]);
    expect(app().status?.inventory?.map((e) => e.cluster)).toEqual([
      "https://c.example:6443",
      "https://c.example:6443",
    ]);
  });

  it("another App owns a name only on its own cluster", async () => {
    const claimedOn = (server: string) => {
      const { home, c, ports } = setup();
      addApp(home, "team-a", "other", { source: { git: { url: "https://git.example/o.git" } } });
      home.apps.get("team-a/other")!.status = {
        inventory: [
          {
            apiVersion: "v1",
            kind: "ConfigMap",
            namespace: "team-a",
            name: "one",
            cluster: server,
          },
        ],
      };
      const app = home.apps.get("team-a/web")!;
      app.spec = {
        ...(app.spec as Record<string, unknown>),
        destination: { cluster: { secretRef: { name: "to-c" } } },
      };
      return { c, ports };
    };
    // An App deploying ConfigMap team-a/one to cluster B does not block this App on cluster C.
    const onB = claimedOn("https://b.example:6443");
    expect(await reconcileApp(web, onB.ports, t0)).toMatchObject({ syncStatus: "Synced" });
    expect(names(onB.c).sort()).toEqual(["one", "two"]);
    // ... but one on cluster C does.
    const onC = claimedOn("https://c.example:6443");
    const contested = await reconcileApp(web, onC.ports, t0);
    expect(contested.error).toContain("belongs to App team-a/other");
    expect(names(onC.c)).not.toContain("one");
  });

  it("deleting the App prunes on the destination; unreachable keeps the finalizer unless annotated", async () => {
    const { b, down, ports, app } = setup();
    await reconcileApp(web, ports, t0);
    down.add("https://b.example:6443");
    app().metadata.deletionTimestamp = at(30).toISOString();
    const stuck = await reconcileApp(web, ports, at(60));
    expect(stuck.error).toMatch(
      /^DestinationUnreachable: finalizer: cannot reach a former destination/,
    );
    expect(app().metadata.finalizers).toContain("plumb.dev/finalizer");
    expect(names(b).sort()).toEqual(["one", "two"]);
    down.clear();
    expect(await reconcileApp(web, ports, at(120))).toMatchObject({ outcome: "Finalized" });
    expect(names(b)).toEqual([]);
  });

  it("plumb.dev/orphan-unreachable lets the finalizer release an App whose cluster is gone", async () => {
    const { b, down, ports, app } = setup();
    await reconcileApp(web, ports, t0);
    down.add("https://b.example:6443");
    app().metadata.deletionTimestamp = at(30).toISOString();
    app().metadata.annotations = { "plumb.dev/orphan-unreachable": "true" };
    expect(await reconcileApp(web, ports, at(60))).toMatchObject({ outcome: "Finalized" });
    expect(names(b).sort()).toEqual(["one", "two"]);
  });

  it("what a run may apply there is tracked on that cluster before it is applied", async () => {
    const { home, b, head, ports, app } = setup();
    head.sha = B;
    await reconcileApp(web, ports, t0);
    expect(names(b)).toEqual(["one"]);
    // Commit A adds ConfigMap two; the run's final status write fails.
    head.sha = A;
    const tracked: Array<Array<string | undefined>> = [];
    const write = home.writeStatus.bind(home);
    home.writeStatus = async (a, s) => {
      tracked.push((s.inventory ?? []).map((e) => `${e.name}@${e.cluster}`));
      if (tracked.length === 2) throw new KubeApiError(500, "InternalError", "etcd timeout");
      return write(a, s);
    };
    const failed = await reconcileApp(web, ports, at(60));
    expect(failed).toMatchObject({ outcome: "Failed", error: "ApiFailed: etcd timeout" });
    expect(tracked[0]).toEqual(["one@https://b.example:6443", "two@https://b.example:6443"]);
    expect(names(b).sort()).toEqual(["one", "two"]);
    expect(app().status?.inventory?.map((e) => `${e.name}@${e.cluster}`)).toEqual([
      "one@https://b.example:6443",
      "two@https://b.example:6443",
    ]);
    expect(app().status?.clusters).toEqual([
      { server: "https://b.example:6443", secretRef: { name: "to-b" } },
    ]);
    // The failure recorded after the final write failed does not call B's render applied.
    expect(app().status?.objectHash).toBeUndefined();
    home.writeStatus = write;
    // The source drops it again: the next run prunes it on B (it was never in a final status).
    head.sha = B;
    expect(await reconcileApp(web, ports, at(120))).toMatchObject({ syncStatus: "Synced" });
    expect(names(b)).toEqual(["one"]);
    expect(names(home)).toEqual([]);
  });

  describe("a former destination's Namespace", () => {
    const NS = `apiVersion: v1\nkind: Namespace\nmetadata: {name: team-a, annotations: {plumb.dev/prune: "true"}}\n`;
    const B_SERVER = "https://b.example:6443";
    /** The App renders its Namespace on B; someone else put ConfigMap team-a/theirs in it. */
    async function deployedWithNeighbour(ports: Partial<Ports>) {
      const s = setup();
      const commits = new Map<string, SourceFile[]>([
        [
          A,
          [
            { path: "ns.yaml", content: NS },
            { path: "one.yaml", content: CM("one") },
          ],
        ],
      ]);
      const withNs: Ports = {
        ...s.ports,
        ...ports,
        git: { resolve: async () => A, fetch: async (_s, c) => commits.get(c) ?? [] },
      };
      expect(await reconcileApp(web, withNs, t0)).toMatchObject({ syncStatus: "Synced" });
      expect(s.b.objects.has("/Namespace//team-a")).toBe(true);
      s.b.objects.set("/ConfigMap/team-a/theirs", {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "theirs", namespace: "team-a" },
      });
      return { ...s, ports: withNs };
    }
    const nsOnB = (b: FakeKube) => [...b.objects.values()].some((o) => o.kind === "Namespace");
    const warnings = (home: FakeKube) =>
      home.calls.emitEvent
        .filter((e) => e.type === "Warning" && e.reason === "PruneSkipped")
        .map((e) => e.message);

    it("moving away keeps a Namespace holding others' objects, with a Warning; the App's own go", async () => {
      const { home, b, c, ports, app, setSpec } = await deployedWithNeighbour({});
      setSpec({ destination: { cluster: { secretRef: { name: "to-c" } } } });
      const moved = await reconcileApp(web, ports, at(60));
      expect(moved).toMatchObject({ outcome: "Reconciled", syncStatus: "Synced" });
      expect(nsOnB(b)).toBe(true);
      expect(names(b).sort()).toEqual(["theirs"]);
      expect(names(c)).toEqual(["one"]);
      expect(warnings(home)).toEqual([
        `on ${B_SERVER}: Namespace team-a is not pruned: deleting it would delete 1 object that is not this App's: ConfigMap team-a/theirs`,
      ]);
      // Kept for others' sake, and still the App's: tracked on B until it can be pruned.
      expect(
        app()
          .status?.inventory?.filter((e) => e.cluster === B_SERVER)
          .map((e) => `${e.kind}/${e.name}`),
      ).toEqual(["Namespace/team-a"]);
      // Once the last object not the App's is gone, the next run prunes it.
      b.objects.delete("/ConfigMap/team-a/theirs");
      await reconcileApp(web, ports, at(120));
      expect(nsOnB(b)).toBe(false);
      expect(app().status?.inventory?.filter((e) => e.cluster === B_SERVER)).toEqual([]);
    });

    it("PLUMB_ALLOW_CASCADING_PRUNE lets it go, with what was in it", async () => {
      const { home, b, ports, setSpec } = await deployedWithNeighbour({
        allowCascadingPrune: true,
      });
      setSpec({ destination: { cluster: { secretRef: { name: "to-c" } } } });
      await reconcileApp(web, ports, at(60));
      expect(nsOnB(b)).toBe(false);
      expect(warnings(home)).toEqual([]);
    });

    it("what would go cannot be listed: kept in the inventory on B, pruned by the next run", async () => {
      const { home, b, ports, app, setSpec } = await deployedWithNeighbour({});
      b.objects.delete("/ConfigMap/team-a/theirs");
      b.fail.listNamespaceContents = new KubeApiError(403, "Forbidden", "namespaces is forbidden");
      setSpec({ destination: { cluster: { secretRef: { name: "to-c" } } } });
      await reconcileApp(web, ports, at(60));
      expect(nsOnB(b)).toBe(true);
      expect(warnings(home)).toEqual([
        `on ${B_SERVER}: Namespace team-a is not pruned: what deleting it would delete could not be listed (namespaces is forbidden)`,
      ]);
      expect(
        app()
          .status?.inventory?.filter((e) => e.cluster === B_SERVER)
          .map((e) => `${e.kind}/${e.name}`),
      ).toEqual(["Namespace/team-a"]);
      // The render has not changed; the next run still syncs, and prunes it now it can check.
      await reconcileApp(web, ports, at(120));
      expect(nsOnB(b)).toBe(false);
      expect(app().status?.inventory?.filter((e) => e.cluster === B_SERVER)).toEqual([]);
    });

    it("deleting the App: the finalizer keeps it too, says so, and waits for it", async () => {
      const { home, b, ports, app } = await deployedWithNeighbour({});
      app().metadata.deletionTimestamp = at(30).toISOString();
      const reason = `on ${B_SERVER}: Namespace team-a is not pruned: deleting it would delete 1 object that is not this App's: ConfigMap team-a/theirs`;
      expect(await reconcileApp(web, ports, at(60))).toMatchObject({
        outcome: "Failed",
        error: `PruneFailed: finalizer waits to prune: ${reason} (tried again on every run; remove its plumb.dev/prune annotation, or set syncPolicy.prune: false, to leave it and let the App go)`,
      });
      expect(nsOnB(b)).toBe(true);
      expect(names(b)).toEqual(["theirs"]);
      expect(warnings(home)).toEqual([reason]);
      expect(app().metadata.finalizers).toContain("plumb.dev/finalizer");
      expect(
        app()
          .status?.inventory?.filter((e) => e.cluster === B_SERVER)
          .map((e) => `${e.kind}/${e.name}`),
      ).toEqual(["Namespace/team-a"]);
      // The neighbour leaves: the next run prunes the Namespace and lets the App go.
      b.objects.delete("/ConfigMap/team-a/theirs");
      expect(await reconcileApp(web, ports, at(120))).toMatchObject({ outcome: "Finalized" });
      expect(nsOnB(b)).toBe(false);
    });
  });
});
