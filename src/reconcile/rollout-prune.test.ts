import { describe, expect, it } from "vitest";
import { addApp, createFakeKube, type FakeKube } from "../../test/support/fake-kube.ts";
import type { KubeObject, SourceFile } from "../core/index.ts";
import type { GitPort, Ports } from "./index.ts";
import { reconcileApp } from "./index.ts";

const render = (config: string): SourceFile[] => [
  {
    path: "deploy.yaml",
    content: `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: "nginx:1", envFrom: [{configMapRef: {name: ${config}}}]}]
`,
  },
  { path: "cm.yaml", content: `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${config}}\n` },
];

const A = "a".repeat(40);
const B = "b".repeat(40);

function setup() {
  const kube = createFakeKube();
  const commits = new Map([
    [A, render("web-config-1")],
    [B, render("web-config-2")],
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
  const ports: Ports = { kube, git, holder: "test", sleep: async () => {} };
  addApp(kube, "team-a", "web", { source: { git: { url: "https://git.example/org/repo.git" } } });
  return { kube, head, ports };
}

/** A running Pod of the old ReplicaSet that reads web-config-1 (the fake has no controllers). */
const oldPod: KubeObject = {
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: "web-5d8f-x2", namespace: "team-a" },
  spec: { containers: [{ name: "web", envFrom: [{ configMapRef: { name: "web-config-1" } }] }] },
  status: { phase: "Running" },
};

const t0 = new Date("2026-11-29T12:00:00Z");
const later = (s: number) => new Date(t0.getTime() + s * 1000);
const status = (kube: FakeKube) => kube.apps.get("team-a/web")!.status!;
const run = (ports: Ports, at: Date) =>
  reconcileApp({ namespace: "team-a", name: "web" }, ports, at);

describe("a prune held by a rollout (fake API server)", () => {
  it("keeps the old ConfigMap while a Pod reads it, then prunes it on a later run", async () => {
    const { kube, head, ports } = setup();
    await run(ports, t0);
    kube.objects.set("/Pod/team-a/web-5d8f-x2", oldPod);
    head.sha = B;
    const moved = await run(ports, later(60));
    expect(moved).toMatchObject({ outcome: "Reconciled", syncStatus: "Synced", revision: B });
    expect(kube.objects.has("/ConfigMap/team-a/web-config-1")).toBe(true);
    const since = later(60).toISOString();
    expect(status(kube).inventory?.find((e) => e.name === "web-config-1")).toMatchObject({
      apiVersion: "v1",
      kind: "ConfigMap",
      namespace: "team-a",
      name: "web-config-1",
      prunePending: since,
    });
    const reason = `pending prune since ${since}: ConfigMap team-a/web-config-1 is still used by Pod web-5d8f-x2; pruned once the rollout that moved away from it has finished`;
    expect(status(kube).resources).toContainEqual({
      apiVersion: "v1",
      kind: "ConfigMap",
      namespace: "team-a",
      name: "web-config-1",
      status: "PrunePending",
      message: reason,
    });
    expect(status(kube).healthStatus).toBe("Progressing");

    // Still read: kept, with the time it was first held.
    await run(ports, later(90));
    expect(kube.objects.has("/ConfigMap/team-a/web-config-1")).toBe(true);
    expect(status(kube).resources?.find((r) => r.name === "web-config-1")?.message).toBe(reason);

    // The rollout finished: the old Pod is gone; the next run prunes it (no fast path meanwhile).
    kube.objects.delete("/Pod/team-a/web-5d8f-x2");
    await run(ports, later(120));
    expect(kube.objects.has("/ConfigMap/team-a/web-config-1")).toBe(false);
    expect(kube.objects.has("/ConfigMap/team-a/web-config-2")).toBe(true);
    expect(
      status(kube)
        .inventory?.map((e) => `${e.kind}/${e.name}`)
        .sort(),
    ).toEqual(["ConfigMap/web-config-2", "Deployment/web"]);
    expect(status(kube).inventory?.some((e) => e.prunePending !== undefined)).toBe(false);
    expect(kube.events.map((e) => e.message)).toContain("pruned ConfigMap team-a/web-config-1");
  });

  it("prunes in the same run what no Pod or ReplicaSet uses", async () => {
    const { kube, head, ports } = setup();
    await run(ports, t0);
    head.sha = B;
    const moved = await run(ports, later(60));
    expect(kube.objects.has("/ConfigMap/team-a/web-config-1")).toBe(false);
    // Without a Pod or ReplicaSet using it, the ConfigMap goes in the same run.
    // Five lists: the AppPolicies, the two kinds, and team-a's Pods and ReplicaSets, read
    // because a ConfigMap is about to be deleted (deletes: the ConfigMap and the Lease).
    expect(moved.requests).toMatchObject({ list: 5, delete: 2 });
    expect(
      status(kube)
        .inventory?.map((e) => e.name)
        .sort(),
    ).toEqual(["web", "web-config-2"]);
  });
});
