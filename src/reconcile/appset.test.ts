import { describe, expect, it } from "vitest";
import { FakeKube } from "../../test/support/fake-kube.ts";
import type { AppSetObject } from "../app/appset.ts";
import type { App } from "../app/index.ts";
import { type KubeObject, Redactor } from "../core/index.ts";
import { type AppSetPorts, appsToRun, reconcileAppSet, reconcileAppSets } from "./appset.ts";
import type { GitPort } from "./ports.ts";

const NOW = new Date("2026-12-03T10:00:00Z");
const NS = "team";
const UID = "uid-appset-1";

function appSet(spec: Record<string, unknown>, extra: Partial<AppSetObject> = {}): AppSetObject {
  return {
    apiVersion: "plumb.dev/v1alpha1",
    kind: "AppSet",
    metadata: { name: "web", namespace: NS, uid: UID, generation: 1, resourceVersion: "1" },
    spec,
    ...extra,
  };
}

const template = {
  metadata: { name: "web-{{env}}" },
  spec: { source: { git: { url: "https://git.example/r.git", path: "envs/{{env}}" } } },
};
const listed = (...envs: string[]) => ({
  generators: [{ list: { elements: envs.map((env) => ({ env })) } }],
  template,
});

/**
 * The fake with the AppSet stored (its status is written there) and the Apps given (as the
 * App list and as objects, which deletes and patches act on); `set` is the AppSet as stored.
 */
async function setup(input: AppSetObject, apps: App[] = []) {
  const kube = new FakeKube(apps);
  const set = (await kube.apply(input as unknown as KubeObject)) as unknown as AppSetObject;
  for (const a of apps) await kube.apply(a as unknown as KubeObject);
  const redactor = new Redactor();
  const ports: AppSetPorts = { kube, git: {} as GitPort, redactor, log: () => {} };
  return { kube, ports, redactor, set };
}

/** An App as the AppSet made it earlier: its ownerReference and label. */
function owned(name: string, uid = UID): App {
  return {
    apiVersion: "plumb.dev/v1alpha1",
    kind: "App",
    metadata: {
      name,
      namespace: NS,
      resourceVersion: "7",
      generation: 1,
      labels: { "plumb.dev/appset": "web" },
      ownerReferences: [
        { apiVersion: "plumb.dev/v1alpha1", kind: "AppSet", name: "web", uid, controller: true },
      ],
    } as App["metadata"],
    spec: { source: { git: { url: "https://git.example/r.git", path: "envs/old" } } },
  } as App;
}

const appsApplied = (kube: FakeKube) =>
  [...kube.objects.values()].filter((o) => o.kind === "App").map((o) => o.metadata.name);
const stored = (kube: FakeKube) => {
  const o = [...kube.objects.values()].find((x) => x.kind === "AppSet");
  return o as unknown as AppSetObject;
};

describe("reconcileAppSet", () => {
  it("applies one owned App per parameter set, then writes Ready, the Apps and observedGeneration", async () => {
    const input = appSet(listed("dev", "prod"));
    const { kube, ports, set } = await setup(input);
    const r = await reconcileAppSet(set, ports, NOW);
    expect(r).toMatchObject({
      appset: "team/web",
      outcome: "Synced",
      created: ["web-dev", "web-prod"],
    });
    expect(appsApplied(kube)).toEqual(["web-dev", "web-prod"]);
    const app = [...kube.objects.values()].find((o) => o.metadata.name === "web-dev");
    expect(app?.metadata.labels).toEqual({ "plumb.dev/appset": "web" });
    expect(app?.metadata.ownerReferences).toEqual([
      expect.objectContaining({ kind: "AppSet", name: "web", uid: UID, controller: true }),
    ]);
    expect((app as { spec?: { source?: unknown } }).spec?.source).toEqual({
      git: { url: "https://git.example/r.git", path: "envs/dev" },
    });
    const status = stored(kube).status;
    expect(status?.observedGeneration).toBe(1);
    expect(status?.apps).toEqual([{ name: "web-dev" }, { name: "web-prod" }]);
    expect(status?.conditions?.find((c) => c.type === "Ready")).toMatchObject({
      status: "True",
      reason: "AppsUpToDate",
    });
    expect(kube.calls.emitEvent.map((e) => [e.app, e.reason, e.message])).toEqual([
      ["team/web", "AppCreated", "App web-dev created"],
      ["team/web", "AppCreated", "App web-prod created"],
    ]);
  });

  it("deletes an App it made whose parameters vanished, and leaves a foreign App of a generated name alone", async () => {
    const foreign = owned("web-prod", "uid-someone-else");
    const input = appSet(listed("prod"));
    const { kube, ports, set } = await setup(input, [owned("web-gone"), foreign]);
    const rv = [...kube.objects.values()].find((o) => o.metadata.name === "web-prod")?.metadata
      .resourceVersion;
    const r = await reconcileAppSet(set, ports, NOW);
    expect(r).toMatchObject({ outcome: "Synced", deleted: ["web-gone"], conflicts: ["web-prod"] });
    expect(r.created).toEqual([]);
    expect(appsApplied(kube)).toEqual(["web-prod"]);
    // The foreign App is as it was: the AppSet wrote nothing to it.
    const live = [...kube.objects.values()].find((o) => o.metadata.name === "web-prod");
    expect(live?.metadata.resourceVersion).toBe(rv);
    const ready = stored(kube).status?.conditions?.find((c) => c.type === "Ready");
    expect(ready).toMatchObject({ status: "False", reason: "ApplicationConflict" });
    expect(kube.calls.emitEvent.map((e) => e.reason)).toEqual([
      "AppDeleted",
      "ApplicationConflict",
    ]);
  });

  it("releases an App under deletePolicy keep: ownerReference, label and digest removed, not deleted", async () => {
    const input = appSet({ ...listed(), deletePolicy: "keep" });
    const { kube, ports, set } = await setup(input, [owned("web-old")]);
    const r = await reconcileAppSet(set, ports, NOW);
    expect(r).toMatchObject({ released: ["web-old"], deleted: [] });
    const live = [...kube.objects.values()].find((o) => o.metadata.name === "web-old");
    expect(live?.metadata.ownerReferences).toBeUndefined();
    expect(live?.metadata.labels).toEqual({});
  });

  it("a spec error changes no App, is reported once, and a run finding it again writes nothing", async () => {
    const input = appSet({
      generators: [{ list: { elements: [{ env: "dev" }] }, git: {} }],
      template,
    });
    const { kube, ports, set } = await setup(input, [owned("web-dev")]);
    const r = await reconcileAppSet(set, ports, NOW);
    expect(r.outcome).toBe("Failed");
    expect(r.error).toContain("spec.generators.0");
    expect(r.deleted).toEqual([]);
    const after = stored(kube);
    expect(after.status?.conditions?.find((c) => c.type === "ErrorOccurred")).toMatchObject({
      status: "True",
      reason: "ApplicationGenerationFailed",
    });
    expect(kube.calls.emitEvent.map((e) => e.type)).toEqual(["Warning"]);
    const writes = kube.requestCounts().update;
    await reconcileAppSet(after, ports, NOW);
    expect(kube.requestCounts().update).toBe(writes);
    expect(kube.calls.emitEvent).toHaveLength(1);
  });

  it("reads the clusters generator from the labelled kubeconfig Secrets: name, cluster and server", async () => {
    const kubeconfig = [
      "apiVersion: v1",
      "kind: Config",
      "current-context: edge",
      "contexts: [{name: edge, context: {cluster: c1, user: u}}]",
      "clusters: [{name: c1, cluster: {server: 'https://edge.example:6443'}}]",
      "users: [{name: u, user: {token: t}}]",
    ].join("\n");
    const input = appSet({
      generators: [{ clusters: { selector: { matchLabels: { env: "edge" } } } }],
      template: {
        metadata: { name: "web-{{name}}", annotations: { server: "{{server}}" } },
        spec: {
          source: { git: { url: "https://git.example/r.git" } },
          destination: { cluster: { secretRef: { name: "{{cluster}}" } }, namespace: "web" },
        },
      },
    });
    const { kube, ports, set } = await setup(input);
    for (const [name, labels] of [
      ["edge-1", { env: "edge" }],
      ["lab-1", { env: "lab" }],
    ] as const) {
      kube.objects.set(`v1/Secret/${NS}/${name}`, {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name, namespace: NS, labels },
        data: { value: btoa(kubeconfig) },
      } as never);
    }
    const r = await reconcileAppSet(set, ports, NOW);
    expect(r).toMatchObject({ outcome: "Synced", created: ["web-edge-1"] });
    const app = [...kube.objects.values()].find((o) => o.metadata.name === "web-edge-1");
    expect(app?.metadata.annotations?.["server"]).toBe("https://edge.example:6443");
    expect((app as unknown as { spec: { destination: unknown } }).spec.destination).toEqual({
      cluster: { secretRef: { name: "edge-1" } },
      namespace: "web",
    });
  });
});

describe("pullRequest generator", () => {
  const prSet = (labels?: string[]) =>
    appSet({
      generators: [
        {
          pullRequest: {
            github: {
              owner: "org",
              repo: "shop",
              api: "https://ghe.example/api/v3/",
              tokenRef: { secretName: "gh", key: "token" },
              ...(labels ? { labels } : {}),
            },
          },
        },
      ],
      template: {
        metadata: { name: "shop-pr-{{number}}" },
        spec: { source: { git: { url: "https://git.example/r.git", ref: "{{head_sha}}" } } },
      },
    });
  const pr = (number: number, sha: string, labels: string[] = []) => ({
    number,
    head: { ref: `feature-${number}`, sha },
    labels: labels.map((name) => ({ name })),
  });

  it("lists the open pull requests with the token and makes one App per pull request with its labels", async () => {
    const input = prSet(["preview"]);
    const { kube, ports, set } = await setup(input);
    kube.secrets.set(`${NS}/gh`, { token: "ghp_secret-token-of-the-test" });
    const asked: Array<{ url: string; auth: string | null }> = [];
    ports.fetch = async (url, init) => {
      asked.push({ url: String(url), auth: new Headers(init?.headers).get("authorization") });
      const list = [pr(3, "a".repeat(40), ["preview"]), pr(4, "b".repeat(40))];
      return new Response(JSON.stringify(list), { status: 200 });
    };
    const r = await reconcileAppSet(set, ports, NOW);
    expect(r).toMatchObject({ outcome: "Synced", created: ["shop-pr-3"] });
    expect(asked).toEqual([
      {
        url: "https://ghe.example/api/v3/repos/org/shop/pulls?state=open&per_page=100&page=1",
        auth: "Bearer ghp_secret-token-of-the-test",
      },
    ]);
    const app = [...kube.objects.values()].find(
      (o) => o.metadata.name === "shop-pr-3",
    ) as unknown as { spec: { source: unknown } };
    expect(app.spec.source).toEqual({
      git: { url: "https://git.example/r.git", ref: "a".repeat(40) },
    });
  });

  it("an API error changes no App (an open pull request's App is not deleted) and never shows the token", async () => {
    const input = prSet();
    const { kube, ports, set } = await setup(input, [owned("shop-pr-3")]);
    kube.secrets.set(`${NS}/gh`, { token: "ghp_secret-token-of-the-test" });
    ports.fetch = async () =>
      new Response("token ghp_secret-token-of-the-test refused", { status: 502 });
    const r = await reconcileAppSet(set, ports, NOW);
    expect(r.outcome).toBe("Failed");
    expect(r.error).toContain("HTTP 502 from the github API");
    expect(r.deleted).toEqual([]);
    expect(appsApplied(kube)).toEqual(["shop-pr-3"]);
    expect(JSON.stringify(stored(kube).status)).not.toContain("ghp_secret");
  });

  it("GitLab: the project's opened merge requests with PRIVATE-TOKEN; Gitea: its pulls with token auth", async () => {
    const forge = (provider: "gitlab" | "gitea", p: Record<string, unknown>) =>
      appSet({
        generators: [
          { pullRequest: { [provider]: { ...p, tokenRef: { secretName: "t", key: "k" } } } },
        ],
        template: {
          metadata: { name: `${provider}-{{number}}-{{branch_slug}}` },
          spec: { source: { git: { url: "https://git.example/r.git", ref: "{{head_sha}}" } } },
        },
      });
    const gl = await setup(
      forge("gitlab", { project: "group/app", api: "https://gl.example/api/v4" }),
    );
    gl.kube.secrets.set(`${NS}/t`, { k: "glpat-secret-of-the-test" });
    const glAsked: Array<[string, string | null]> = [];
    gl.ports.fetch = async (url, init) => {
      glAsked.push([String(url), new Headers(init?.headers).get("private-token")]);
      const mr = { iid: 5, source_branch: "Fix/Login", sha: "c".repeat(40), labels: ["x"] };
      return new Response(JSON.stringify([mr]), { status: 200 });
    };
    expect(await reconcileAppSet(gl.set, gl.ports, NOW)).toMatchObject({
      outcome: "Synced",
      created: ["gitlab-5-fix-login"],
    });
    expect(glAsked).toEqual([
      [
        "https://gl.example/api/v4/projects/group%2Fapp/merge_requests?state=opened&per_page=100&page=1",
        "glpat-secret-of-the-test",
      ],
    ]);

    const gt = await setup(
      forge("gitea", { owner: "org", repo: "app", api: "https://gitea.example/api/v1" }),
    );
    gt.kube.secrets.set(`${NS}/t`, { k: "gitea-secret-of-the-test" });
    const gtAsked: Array<[string, string | null]> = [];
    gt.ports.fetch = async (url, init) => {
      gtAsked.push([String(url), new Headers(init?.headers).get("authorization")]);
      const pr = { number: 9, head: { ref: "feature", sha: "d".repeat(40) }, labels: [] };
      return new Response(JSON.stringify([pr]), { status: 200 });
    };
    expect(await reconcileAppSet(gt.set, gt.ports, NOW)).toMatchObject({
      outcome: "Synced",
      created: ["gitea-9-feature"],
    });
    expect(gtAsked).toEqual([
      [
        "https://gitea.example/api/v1/repos/org/app/pulls?state=open&limit=100&page=1",
        "token gitea-secret-of-the-test",
      ],
    ]);
  });

  it("a missing token key is the AppSet's error, naming the Secret and key", async () => {
    const input = prSet();
    const { ports, set } = await setup(input);
    const r = await reconcileAppSet(set, ports, NOW);
    expect(r.error).toContain("Secret team/gh has no key token");
  });
});

describe("reconcileAppSets and appsToRun", () => {
  it("reconciles the AppSets given (a tick's due ones); one failing does not stop the next", async () => {
    const good = appSet(listed("dev"));
    const bad = appSet(listed("x"), {
      metadata: { ...good.metadata, name: "bad", uid: "uid-bad" },
    });
    const { kube, ports, set } = await setup(good);
    kube.fail.listApps = new Error("boom");
    const lines: string[] = [];
    const results = await reconcileAppSets(ports, NOW, {
      sets: [bad, set],
      onResult: (r) => lines.push(`${r.appset} ${r.outcome}`),
    });
    expect(lines).toEqual(["team/bad Failed", "team/web Synced"]);
    expect(results[0]?.error).toContain("boom");
    expect(appsToRun(results)).toEqual([{ namespace: NS, name: "web-dev" }]);
  });

  it("appsToRun takes created, updated and deleted Apps once each", () => {
    const base = { outcome: "Synced" as const, released: ["kept"], conflicts: ["theirs"] };
    expect(
      appsToRun([
        { ...base, appset: "a/s1", created: ["x"], updated: ["y"], deleted: ["z"] },
        { ...base, appset: "a/s2", created: ["x"], updated: [], deleted: [] },
        { ...base, appset: "b/s3", created: ["x"], updated: [], deleted: [] },
      ]),
    ).toEqual([
      { namespace: "a", name: "x" },
      { namespace: "a", name: "y" },
      { namespace: "a", name: "z" },
      { namespace: "b", name: "x" },
    ]);
  });
});
