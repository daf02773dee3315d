// The finalizer's delete hooks over a fake cluster whose Jobs finish at once: the order of
// pre-delete, prune and post-delete, and what a failing hook keeps. On the real control plane:
// test/e2e/hooks.test.ts.
import { describe, expect, it } from "vitest";
import { addApp, createFakeKube } from "../../test/support/fake-kube.ts";
import type { SourceFile } from "../core/index.ts";
import { type GitPort, type Ports, reconcileApp } from "./index.ts";

const A = "a".repeat(40);
const web = { namespace: "team-a", name: "web" };
const t0 = new Date("2026-11-29T12:00:00Z");
const at = (s: number) => new Date(t0.getTime() + s * 1000);
const hookJob = (name: string, hook: string) =>
  `apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: ${name}\n  annotations: {helm.sh/hook: ${hook}}\nspec: {template: {spec: {restartPolicy: Never}}}\n`;

function setup(failing: ReadonlySet<string>) {
  const kube = createFakeKube();
  const writes: string[] = [];
  const apply = kube.apply.bind(kube);
  kube.apply = async (obj, opts) => {
    const stored = await apply(obj, opts);
    if (opts?.dryRun) return stored;
    writes.push(`apply ${obj.kind}/${obj.metadata.name}`);
    if (obj.kind !== "Job") return stored;
    const type = failing.has(obj.metadata.name) ? "Failed" : "Complete";
    const done = { ...stored, status: { conditions: [{ type, status: "True", reason: "X" }] } };
    kube.objects.set(`batch/Job/team-a/${obj.metadata.name}`, done);
    return done;
  };
  const del = kube.delete.bind(kube);
  kube.delete = async (ref) => {
    const done = await del(ref);
    if (done === "deleted") writes.push(`delete ${ref.kind}/${ref.name}`);
    return done;
  };
  const files: SourceFile[] = [
    { path: "cm.yaml", content: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\n" },
    { path: "backup.yaml", content: hookJob("backup", "pre-delete") },
    { path: "cleanup.yaml", content: hookJob("cleanup", "post-delete") },
  ];
  const git: GitPort = { resolve: async () => A, fetch: async () => files };
  const ports: Ports = { kube, git, holder: "test", sleep: async () => {} };
  addApp(kube, "team-a", "web", { source: { git: { url: "https://git.example/org/repo.git" } } });
  const app = () => kube.apps.get("team-a/web")!;
  return { kube, ports, app, writes };
}

describe("delete hooks from the finalizer", () => {
  it("runs pre-delete, prunes, runs post-delete, then lets the App go", async () => {
    const { ports, app, writes } = setup(new Set());
    expect(await reconcileApp(web, ports, t0)).toMatchObject({ syncStatus: "Synced" });
    expect(writes).toEqual(["apply ConfigMap/web"]);
    expect(app().status?.deleteHooks?.map((r) => r.name)).toEqual(["backup", "cleanup"]);
    app().metadata.deletionTimestamp = at(30).toISOString();
    writes.length = 0;
    expect(await reconcileApp(web, ports, at(60))).toMatchObject({ outcome: "Finalized" });
    expect(writes).toEqual(["apply Job/backup", "delete ConfigMap/web", "apply Job/cleanup"]);
  });

  it("a failing post-delete hook keeps the finalizer after the prune (HookFailed)", async () => {
    const { ports, app, writes } = setup(new Set(["cleanup"]));
    await reconcileApp(web, ports, t0);
    app().metadata.deletionTimestamp = at(30).toISOString();
    writes.length = 0;
    const run = await reconcileApp(web, ports, at(60));
    expect(run.error).toBe(
      "HookFailed: finalizer: post-delete hook Job team-a/cleanup failed: Job failed: X; the App is kept until it succeeds",
    );
    expect(writes).toEqual(["apply Job/backup", "delete ConfigMap/web", "apply Job/cleanup"]);
    expect(app().metadata.finalizers).toContain("plumb.dev/finalizer");
    expect(app().status?.inventory).toEqual([]);
  });

  it("without prune no delete hook runs", async () => {
    const { ports, app, writes } = setup(new Set(["backup"]));
    await reconcileApp(web, ports, t0);
    app().spec = { ...(app().spec as object), syncPolicy: { prune: false } };
    app().metadata.deletionTimestamp = at(30).toISOString();
    writes.length = 0;
    expect(await reconcileApp(web, ports, at(60))).toMatchObject({ outcome: "Finalized" });
    expect(writes).toEqual([]);
  });
});
