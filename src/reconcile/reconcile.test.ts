import { describe, expect, it } from "vitest";
import { addApp, createFakeKube, type FakeKube } from "../../test/support/fake-kube.ts";
import type { SourceFile } from "../core/index.ts";
import { KubeApiError } from "../core/index.ts";
import type { GitPort, Ports } from "./index.ts";
import { reconcileApp } from "./index.ts";

const DEPLOY = (image: string) => `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: "${image}"}]}
`;
const SVC = "apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {ports: [{port: 80}]}\n";

function fakeGit(commits: Map<string, SourceFile[]>, head: { sha: string }): GitPort {
  return {
    async resolve() {
      return head.sha;
    },
    async fetch(_s, commit) {
      const files = commits.get(commit);
      if (!files) throw new Error(`no commit ${commit}`);
      return files;
    },
  };
}

function setup() {
  const kube = createFakeKube();
  const commits = new Map<string, SourceFile[]>([
    [
      "a".repeat(40),
      [
        { path: "deploy.yaml", content: DEPLOY("nginx:1") },
        { path: "svc.yaml", content: SVC },
      ],
    ],
    ["b".repeat(40), [{ path: "deploy.yaml", content: DEPLOY("nginx:2") }]],
    ["c".repeat(40), [{ path: "deploy.yaml", content: "kind: [unclosed\n" }]],
  ]);
  const head = { sha: "a".repeat(40) };
  const ports: Ports = { kube, git: fakeGit(commits, head), holder: "test", sleep: async () => {} };
  addApp(kube, "team-a", "web", { source: { git: { url: "https://git.example/org/repo.git" } } });
  return { kube, head, ports };
}

const status = (kube: FakeKube) => kube.apps.get("team-a/web")!.status!;
const t0 = new Date("2026-11-29T12:00:00Z");
const later = (s: number) => new Date(t0.getTime() + s * 1000);

describe("reconcileApp decisions (fake API server)", () => {
  it("applies the render, records inventory and revision, then a steady run writes nothing", async () => {
    const { kube, ports } = setup();
    const first = await reconcileApp({ namespace: "team-a", name: "web" }, ports, t0);
    expect(first).toMatchObject({
      outcome: "Reconciled",
      syncStatus: "Synced",
      revision: "a".repeat(40),
    });
    expect(status(kube).inventory?.map((r) => `${r.kind}/${r.namespace}/${r.name}`)).toEqual([
      "Service/team-a/web",
      "Deployment/team-a/web",
    ]);
    expect(kube.objects.get("apps/Deployment/team-a/web")?.metadata.labels).toMatchObject({
      "plumb.dev/app": "web",
      "plumb.dev/app-namespace": "team-a",
      "app.kubernetes.io/managed-by": "plumb",
    });
    const second = await reconcileApp({ namespace: "team-a", name: "web" }, ports, later(10));
    // No writes. The fake has no Deployment controller, so the Deployment stays Progressing and
    // its Pods are listed to explain it: one list more than a healthy App's run. One list of
    // the cluster's AppPolicies (a process lists them once per few seconds; the fake each time).
    expect(second.requests).toEqual({ get: 1, list: 4, create: 0, update: 0, patch: 0, delete: 0 });
  });

  it("prunes what the new commit no longer renders and keeps the old revision for rollback", async () => {
    const { kube, head, ports } = setup();
    await reconcileApp({ namespace: "team-a", name: "web" }, ports, t0);
    head.sha = "b".repeat(40);
    const r = await reconcileApp({ namespace: "team-a", name: "web" }, ports, later(60));
    expect(r.revision).toBe("b".repeat(40));
    expect(kube.objects.has("/Service/team-a/web")).toBe(false);
    expect(status(kube).previousRevisions?.[0]?.revision).toBe("a".repeat(40));
    expect(kube.events.map((e) => e.reason)).toContain("Pruned");
  });

  it("a broken commit fails the render with file and line, prunes nothing and keeps the inventory", async () => {
    const { kube, head, ports } = setup();
    await reconcileApp({ namespace: "team-a", name: "web" }, ports, t0);
    head.sha = "c".repeat(40);
    const r = await reconcileApp({ namespace: "team-a", name: "web" }, ports, later(60));
    expect(r.outcome).toBe("Failed");
    expect(r.error).toMatch(/^RenderFailed: deploy\.yaml:2: Flow sequence/);
    expect(kube.objects.has("/Service/team-a/web")).toBe(true);
    expect(status(kube).inventory).toHaveLength(2);
    expect(status(kube).revision).toBe("a".repeat(40));
    const ready = status(kube).conditions?.find((c) => c.type === "Ready");
    expect(ready).toMatchObject({ status: "False", reason: "RenderFailed" });
  });

  it("a destination namespace the App may not use is InvalidSpec, said before the source is read", async () => {
    const { kube, ports } = setup();
    let lookups = 0;
    const git: GitPort = {
      resolve: async () => {
        lookups++;
        return "a".repeat(40);
      },
      fetch: async () => [],
    };
    addApp(kube, "team-a", "web", {
      source: { git: { url: "https://git.example/org/repo.git" } },
      destination: { namespace: "kube-system" },
    });
    const r = await reconcileApp({ namespace: "team-a", name: "web" }, { ...ports, git }, t0);
    const message =
      'spec.destination.namespace: namespace "kube-system" is not allowed for Apps in "team-a": an App deploys to its own namespace unless the cluster setting PLUMB_ALLOWED_DESTINATIONS lists this one (or "*")';
    expect(r).toMatchObject({ outcome: "Failed", error: `InvalidSpec: ${message}` });
    expect(lookups).toBe(0);
    const stalled = status(kube).conditions?.find((c) => c.type === "Stalled");
    expect(stalled).toMatchObject({
      status: "True",
      reason: "InvalidSpec",
      message: `${message} (fix the spec to retry)`,
    });
    // Allowed by the cluster setting: it goes on to the source.
    const allowed = { ...ports, git, allowedDestinations: ["kube-system"] };
    await reconcileApp({ namespace: "team-a", name: "web" }, allowed, later(60));
    expect(lookups).toBe(1);
  });

  it("an invalid spec is Stalled with the field path", async () => {
    const { kube, ports } = setup();
    addApp(kube, "team-a", "web", { source: { git: { url: "ftp://x" } }, interval: "soon" });
    const r = await reconcileApp({ namespace: "team-a", name: "web" }, ports, t0);
    expect(r.outcome).toBe("Failed");
    const stalled = status(kube).conditions?.find((c) => c.type === "Stalled");
    expect(stalled?.status).toBe("True");
    expect(stalled?.message).toContain("spec.source.git.url");
    expect(stalled?.message).toContain("spec.interval");
  });

  it("requiresApproval holds a new revision; Approve applies exactly that one", async () => {
    const { kube, head, ports } = setup();
    await reconcileApp({ namespace: "team-a", name: "web" }, ports, t0);
    const app = kube.apps.get("team-a/web")!;
    (app.spec as Record<string, unknown>)["syncPolicy"] = { requiresApproval: true };
    app.metadata.generation = 2;
    head.sha = "b".repeat(40);
    const held = await reconcileApp({ namespace: "team-a", name: "web" }, ports, later(60));
    expect(held.syncStatus).toBe("Held");
    expect(status(kube).heldRevision).toBe("b".repeat(40));
    expect(kube.objects.get("apps/Deployment/team-a/web")?.["spec"]).toMatchObject({
      template: { spec: { containers: [{ image: "nginx:1" }] } },
    });
    (app.spec as Record<string, unknown>)["operation"] = {
      id: "op-1",
      type: "Approve",
      revision: "b".repeat(40),
    };
    const approved = await reconcileApp({ namespace: "team-a", name: "web" }, ports, later(120));
    expect(approved).toMatchObject({ syncStatus: "Synced", revision: "b".repeat(40) });
    expect(status(kube).operationState).toMatchObject({ id: "op-1", phase: "Succeeded" });
    expect(status(kube).heldRevision).toBeUndefined();
  });

  it("a deny window holds a new commit back, then applies it when the window has closed", async () => {
    const { kube, head, ports } = setup();
    const web = { namespace: "team-a", name: "web" };
    await reconcileApp(web, ports, t0); // 12:00
    const app = kube.apps.get("team-a/web")!;
    // Deny from 12:00 for 1h, every day (UTC).
    (app.spec as Record<string, unknown>)["syncWindows"] = [
      { kind: "deny", schedule: "0 12 * * *", duration: "1h" },
    ];
    app.metadata.generation = 2;
    head.sha = "b".repeat(40);
    const held = await reconcileApp(web, ports, later(60));
    expect(held).toMatchObject({ syncStatus: "OutOfSync", revision: "a".repeat(40) });
    expect(status(kube)).toMatchObject({
      nextSyncWindow: "2026-11-29T13:00:00.000Z",
      // Health is still observed (the fake's Deployment has no status yet: Progressing).
      healthStatus: "Progressing",
    });
    // Nothing about the schedule is stored: the tick reads nextSyncWindow.
    expect(status(kube).nextReconcileAt).toBeUndefined();
    // The window is Ready's reason whatever the health; the message says both.
    expect(status(kube).conditions?.[0]).toMatchObject({
      status: "False",
      reason: "OutsideSyncWindow",
      message: expect.stringContaining(
        `; revision ${"b".repeat(40)} is not applied: automated sync is blocked by the open deny window spec.syncWindows[0] ("0 12 * * *" UTC, 1h); next allowed at 2026-11-29T13:00:00.000Z`,
      ),
    });
    expect(kube.objects.get("apps/Deployment/team-a/web")?.["spec"]).toMatchObject({
      template: { spec: { containers: [{ image: "nginx:1" }] } },
    });
    const opened = await reconcileApp(web, ports, new Date("2026-11-29T13:00:00Z"));
    expect(opened).toMatchObject({ syncStatus: "Synced", revision: "b".repeat(40) });
    expect(status(kube).nextSyncWindow).toBeUndefined();
  });

  it("a run that owes no full comparison (fast path) keeps what the last full run found", async () => {
    const { kube, head, ports } = setup();
    const fetched: string[] = [];
    const git = ports.git as GitPort;
    const fetch = git.fetch;
    git.fetch = async (s, c, a) => {
      fetched.push(c);
      return fetch(s, c, a);
    };
    await reconcileApp({ namespace: "team-a", name: "web" }, ports, t0);
    const app = kube.apps.get("team-a/web")!;
    (app.spec as Record<string, unknown>)["syncPolicy"] = { requiresApproval: true };
    app.metadata.generation = 2;
    head.sha = "b".repeat(40);
    await reconcileApp({ namespace: "team-a", name: "web" }, ports, later(60));
    const held = structuredClone(status(kube));
    expect(held.syncStatus).toBe("Held");
    fetched.length = 0;
    const again = await reconcileApp({ namespace: "team-a", name: "web" }, ports, later(70));
    expect(fetched).toEqual([]);
    expect(again).toMatchObject({ syncStatus: "Held", revision: "a".repeat(40) });
    expect(status(kube).resources).toEqual(held.resources);
    expect(status(kube).resources?.map((r) => [r.kind, r.status, r.message])).toEqual([
      ["Service", "OutOfSync", "will be pruned"],
      ["Deployment", "OutOfSync", "will change: spec.template.spec.containers[name=web].image"],
    ]);

    (app.spec as Record<string, unknown>)["syncPolicy"] = {};
    (app.spec as Record<string, unknown>)["freeze"] = true;
    app.metadata.generation = 3;
    await reconcileApp({ namespace: "team-a", name: "web" }, ports, later(80));
    fetched.length = 0;
    const frozen = await reconcileApp({ namespace: "team-a", name: "web" }, ports, later(90));
    expect(fetched).toEqual([]);
    expect(frozen).toMatchObject({ syncStatus: "OutOfSync", revision: "a".repeat(40) });
    expect(status(kube).observedRevision).toBe("b".repeat(40));
  });

  it("a custom resource whose kind is not served fails alone; the rest apply", async () => {
    const { kube, ports, head } = setup();
    kube.unknownKinds.add("Widget");
    head.sha = "d".repeat(40);
    const git = ports.git as GitPort;
    const orig = git.fetch;
    git.fetch = async (s, c, a) =>
      c === "d".repeat(40)
        ? [
            {
              path: "w.yaml",
              content: "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n",
            },
            { path: "svc.yaml", content: SVC },
          ]
        : orig(s, c, a);
    const r = await reconcileApp({ namespace: "team-a", name: "web" }, ports, t0);
    expect(r.outcome).toBe("Failed");
    expect(r.error).toContain("Widget team-a/w");
    expect(kube.objects.has("/Service/team-a/web")).toBe(true);
    expect(status(kube).resources?.find((x) => x.kind === "Widget")).toMatchObject({
      status: "Failed",
    });
    // Its CRD arrives: the next run applies the same revision again, and it is Synced.
    kube.unknownKinds.delete("Widget");
    const again = await reconcileApp({ namespace: "team-a", name: "web" }, ports, later(60));
    expect(again).toMatchObject({
      outcome: "Reconciled",
      syncStatus: "Synced",
      revision: "d".repeat(40),
    });
    expect(kube.objects.has("example.com/Widget/team-a/w")).toBe(true);
  });
});

describe("reconcileApp on a steady App", () => {
  const ref = { namespace: "team-a", name: "web" };

  it("a full comparison of an unchanged App fetches, compares and writes nothing, however late", async () => {
    const { kube, ports } = setup();
    const fetched: string[] = [];
    const git = ports.git as GitPort;
    const fetch = git.fetch;
    git.fetch = async (s, c, a) => {
      fetched.push(c);
      return fetch(s, c, a);
    };
    await reconcileApp(ref, ports, t0);
    await reconcileApp(ref, ports, later(1)); // health settles
    const before = structuredClone(kube.apps.get("team-a/web"));
    for (const s of [300, 600, 86_400, 864_000]) {
      fetched.length = 0;
      const counts = kube.requestCounts();
      const r = await reconcileApp(ref, ports, later(s), { compare: true });
      expect(r.outcome).toBe("Reconciled");
      expect(fetched).toEqual(["a".repeat(40)]);
      const after = kube.requestCounts();
      expect(after.update - counts.update + after.patch - counts.patch).toBe(0);
      expect(after.create - counts.create).toBe(0);
    }
    expect(kube.apps.get("team-a/web")).toEqual(before);
  });

  it("uses the revision a trigger resolved for its own source, and resolves any other itself", async () => {
    const { ports, head } = setup();
    const resolved: string[] = [];
    const git = ports.git as GitPort;
    git.resolve = async (s) => {
      resolved.push(s.url);
      return head.sha;
    };
    const url = "https://git.example/org/repo.git";
    const hint = { url, ref: "HEAD", revision: "b".repeat(40) };
    const r = await reconcileApp(ref, ports, t0, { source: hint });
    expect(resolved).toEqual([]);
    expect(r).toMatchObject({ outcome: "Reconciled", revision: "b".repeat(40) });

    // Another ref, URL or a Secret the App does not use: not this App's source.
    for (const other of [
      { ...hint, ref: "main" },
      { ...hint, url: `${url}/` },
      { ...hint, secret: "team-a/git" },
    ]) {
      resolved.length = 0;
      const again = await reconcileApp(ref, ports, later(60), { source: other });
      expect(resolved).toEqual([url]);
      expect(again).toMatchObject({ revision: "a".repeat(40) });
    }
  });
});

describe("reconcileApp when the API server fails", () => {
  it("marks a run that could not record its outcome as retryable", async () => {
    const { kube, ports } = setup();
    kube.getApp = async () => {
      throw new KubeApiError(503, "ServiceUnavailable", "get App team-a/web: unavailable");
    };
    const r = await reconcileApp({ namespace: "team-a", name: "web" }, ports, t0);
    expect(r).toMatchObject({
      outcome: "Failed",
      retryable: true,
      error: "get App team-a/web: unavailable",
    });
  });

  it("a run whose failure is in status is not retryable (the schedule retries it)", async () => {
    const { head, ports } = setup();
    head.sha = "c".repeat(40);
    const r = await reconcileApp({ namespace: "team-a", name: "web" }, ports, t0);
    expect(r.outcome).toBe("Failed");
    expect(r.retryable).toBeUndefined();
  });
});
