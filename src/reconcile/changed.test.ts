// Apply only what changed: the loop's decisions against the fake API server.
import { describe, expect, it } from "vitest";
import { addApp, createFakeKube } from "../../test/support/fake-kube.ts";
import type { KubeObject, SourceFile } from "../core/index.ts";
import type { GitPort, Ports } from "./index.ts";
import { reconcileApp } from "./index.ts";

const N = 50;
const cm = (i: number, value = "v1") =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-${i}}\ndata: {value: ${value}}\n`;
/** 50 ConfigMaps, one file each (`reversed`: the same objects, files named the other way). */
function files(values: Record<number, string> = {}, reversed = false): SourceFile[] {
  return Array.from({ length: N }, (_, i) => ({
    path: `${reversed ? String(N - i).padStart(3, "0") : String(i).padStart(3, "0")}.yaml`,
    content: cm(i, values[i] ?? "v1"),
  }));
}

function setup() {
  const kube = createFakeKube();
  const commits = new Map<string, SourceFile[]>();
  const head = { sha: "" };
  const commit = (c: string, f: SourceFile[]) => {
    const sha = c.repeat(40);
    commits.set(sha, f);
    head.sha = sha;
  };
  const git: GitPort = {
    resolve: async () => head.sha,
    fetch: async (_s, c) => commits.get(c) ?? [],
  };
  const applied: string[] = [];
  const apply = kube.apply.bind(kube);
  kube.apply = async (obj: KubeObject, opts) => {
    if (!opts?.dryRun) applied.push(obj.metadata.name);
    return apply(obj, opts);
  };
  const ports: Ports = { kube, git, holder: "test", sleep: async () => {} };
  addApp(kube, "team-a", "many", { source: { git: { url: "https://git.example/o/r.git" } } });
  const ref = { namespace: "team-a", name: "many" };
  let t = Date.parse("2026-11-29T12:00:00Z");
  const run = (compare = false) => {
    t += 60_000;
    return reconcileApp(ref, ports, new Date(t), { compare });
  };
  const status = () => kube.apps.get("team-a/many")!.status!;
  return { kube, commit, applied, run, status };
}

describe("a sync applies only what changed", () => {
  it("one changed object of 50 is one apply, with no list of the other Apps", async () => {
    const { kube, commit, applied, run, status } = setup();
    commit("a", files());
    expect((await run()).outcome).toBe("Reconciled");
    expect(applied).toHaveLength(N);
    await run(true);

    commit("b", files({ 7: "v2" }));
    applied.length = 0;
    const before = kube.requestCounts();
    const listsBefore = kube.calls.listApps.length;
    const r = await run();
    expect(r).toMatchObject({
      outcome: "Reconciled",
      syncStatus: "Synced",
      revision: "b".repeat(40),
    });
    expect(applied).toEqual(["cm-7"]);
    expect(kube.calls.listApps.length - listsBefore).toBe(0);
    const after = kube.requestCounts();
    // App read and its re-read under the Lease, the cluster's AppPolicies (one list, which a
    // process reuses for a few seconds), the apply, Lease acquire and release, the status
    // write, the Applied Event: 1 apply + 7 other.
    expect(after.get - before.get).toBe(2);
    expect(after.list - before.list).toBe(1);
    expect(kube.objects.get("/ConfigMap/team-a/cm-7")?.["data"]).toEqual({ value: "v2" });
    expect(status().inventory?.find((e) => e.name === "cm-7")?.hash).toMatch(/^[0-9a-f]{16}$/);
    expect(kube.events.filter((e) => e.reason === "Applied").at(-1)?.message).toBe(
      `applied revision ${"b".repeat(40)}: 1 object(s)`,
    );
    expect(status().resources).toHaveLength(N);
    expect(status().resources?.every((l) => l.status === "Synced" && l.health === "Healthy")).toBe(
      true,
    );
  });

  it("also applies what a full comparison found deleted or changed live", async () => {
    const { kube, commit, applied, run, status } = setup();
    commit("a", files());
    await run();
    kube.objects.delete("/ConfigMap/team-a/cm-3");
    const live = kube.objects.get("/ConfigMap/team-a/cm-4")!;
    kube.objects.set("/ConfigMap/team-a/cm-4", { ...live, data: { value: "edited" } });
    await run(true);
    expect(status().resources?.find((l) => l.name === "cm-3")?.health).toBe("Missing");
    expect(status().drift?.map((d) => d.name)).toEqual(["cm-3", "cm-4"]);

    commit("b", files({ 9: "v2" }));
    applied.length = 0;
    await run();
    expect(applied.sort()).toEqual(["cm-3", "cm-4", "cm-9"]);
    expect(kube.objects.get("/ConfigMap/team-a/cm-4")?.["data"]).toEqual({ value: "v1" });
    expect(status().syncStatus).toBe("Synced");
  });

  it("an object whose apply failed is applied again by the next run, the others not", async () => {
    const { kube, commit, applied, run, status } = setup();
    commit("a", files());
    await run();
    commit("b", files({ 11: "v2", 12: "v2" }));
    kube.fail.apply = new Error("connection reset");
    applied.length = 0;
    const failed = await run();
    expect(failed.outcome).toBe("Failed");
    expect(applied.sort()).toEqual(["cm-11", "cm-12"]);
    applied.length = 0;
    const again = await run();
    expect(again).toMatchObject({ outcome: "Reconciled", syncStatus: "Synced" });
    expect(applied).toHaveLength(1);
    expect(["cm-11", "cm-12"]).toContain(applied[0]);
    expect(status().objectHash).toBe(status().observedObjectHash);
  });

  it("the same objects in another order are not a change: nothing applied, nothing written", async () => {
    const { kube, commit, applied, run, status } = setup();
    commit("a", files());
    await run();
    await run(true);
    const hash = status().objectHash;
    commit("b", files({}, true));
    applied.length = 0;
    const before = kube.requestCounts();
    const r = await run(true);
    expect(r.outcome).toBe("Reconciled");
    expect(applied).toEqual([]);
    expect(status().objectHash).toBe(hash);
    const after = kube.requestCounts();
    expect(after.patch - before.patch).toBe(0);
    expect(after.create - before.create).toBe(0);
  });

  it("a Sync operation (a person asked) applies every object again", async () => {
    const { kube, commit, applied, run, status } = setup();
    commit("a", files());
    await run();
    await run(true);
    const app = kube.apps.get("team-a/many")!;
    app.spec = {
      ...(app.spec as Record<string, unknown>),
      operation: { id: "op-1", type: "Sync", requestedBy: "api:ops" },
    };
    app.metadata.generation = (app.metadata.generation ?? 1) + 1;
    applied.length = 0;
    expect(await run()).toMatchObject({ outcome: "Reconciled", syncStatus: "Synced" });
    expect(applied).toHaveLength(N);
    expect(status().operationState).toMatchObject({ type: "Sync", phase: "Succeeded" });
  });
});
