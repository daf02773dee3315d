// AppSets triggered by webhooks on `plumb serve` (no schedule: nothing runs unless a delivery
// asks): a pullRequest generator against a local stand-in for GitHub's pulls API (its documented
// list response, test/fixtures/forges), driven by GitHub's signed pull_request deliveries: opened
// makes a preview App synced at the head commit; closed deletes it and its objects are pruned.
// A signed push that adds a directory makes a git generator's new App at once. And the tick
// (`plumb reconcile --all`) evaluates a new AppSet before the Apps, so its App syncs in that tick.
import { execFile } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GitServer, startGitServer, type TestRepo } from "../support/git-server.ts";
import { githubHeaders, githubPush } from "../support/github.ts";
import { type Received, type Receiver, startReceiver } from "../support/receiver.ts";
import { type Served, startServe } from "../support/serve.ts";
import { api, createNamespace, getObject, kubeconfig, waitFor } from "./support.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const PR_DELIVERY = join(ROOT, "test/fixtures/webhooks/github-pull-request-opened.json");
const PULLS = join(ROOT, "test/fixtures/forges/github-list-pulls.json");
const SECRET = "e2e-appset-webhook-secret";
const TOKEN = "ghp_e2e-appset-token-0123456789";
const NS = "e2e-appset-hooks";
const APPSETS = `/apis/plumb.dev/v1alpha1/namespaces/${NS}/appsets`;
const APPS = `/apis/plumb.dev/v1alpha1/namespaces/${NS}/apps`;

const configMap = (name: string, from: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  from: ${from}\n`;

let git: GitServer;
let repo: TestRepo;
let forge: Receiver;
let served: Served;
/** The open pull requests GitHub's list API answers with (items of GitHub's documented list). */
let open: unknown[] = [];

/** GitHub's `GET /repos/org/shop/pulls` as the stand-in answers it: `open`, one page. */
function github(r: Received) {
  if (r.method === "GET" && r.path.startsWith("/repos/org/shop/pulls?")) {
    return { status: 200, json: open };
  }
  return undefined;
}

/** GitHub's documented list item, pointed at pull request #1 of the test repository. */
function listed(head: string): unknown {
  type Item = { number: number; labels: unknown[]; head: Ref; base: Ref };
  type Ref = { ref: string; sha: string };
  const [item] = JSON.parse(readFileSync(PULLS, "utf8")) as Item[];
  if (!item) throw new Error("the fixture lists no pull request");
  item.number = 1;
  item.labels = [];
  item.head.ref = "feature";
  item.head.sha = head;
  item.base.ref = "main";
  return item;
}

/** GitHub's documented pull_request delivery for #1 of the test repository, with `action`. */
async function deliver(action: string, head: string): Promise<Response> {
  const p = JSON.parse(readFileSync(PR_DELIVERY, "utf8"));
  p.action = action;
  p.number = 1;
  p.pull_request.number = 1;
  p.pull_request.state = action === "closed" ? "closed" : "open";
  p.pull_request.head.sha = head;
  p.pull_request.base.ref = "main";
  const r = p.pull_request.base.repo;
  Object.assign(r, { clone_url: repo.url, html_url: repo.url.replace(/\.git$/, "") });
  for (const k of ["ssh_url", "git_url", "svn_url", "url"]) r[k] = null;
  const body = JSON.stringify(p);
  return fetch(`${served.base}/webhooks/github`, {
    method: "POST",
    headers: githubHeaders(body, SECRET, "pull_request"),
    body,
  });
}

beforeAll(async () => {
  await createNamespace(NS);
  git = await startGitServer();
  forge = await startReceiver(200, github);
  repo = await git.createRepo("org/shop", {
    "preview/cm.yaml": configMap("preview", "main"),
    "apps/alpha/cm.yaml": configMap("cm-alpha", "alpha"),
  });
  await api("POST", `/api/v1/namespaces/${NS}/secrets`, {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "github-token" },
    stringData: { token: TOKEN },
  });
  served = await startServe(kubeconfig(), { GITHUB_WEBHOOK_SECRET: SECRET });
});
afterAll(async () => {
  await served?.stop();
  await forge?.stop();
  await git?.stop();
});

type AppObject = {
  metadata: { ownerReferences?: Array<{ kind: string; name: string }> };
  spec: { source: { git: { ref: string; path: string } } };
  status?: { revision?: string; conditions?: Array<{ type: string; status: string }> };
};
const readApp = async (name: string) =>
  (await getObject(`${APPS}/${name}`)) as unknown as AppObject | undefined;
const data = async (name: string) =>
  ((await getObject(`/api/v1/namespaces/${NS}/configmaps/${name}`)) as { data?: unknown })?.data;

describe("pullRequest generator driven by GitHub pull_request webhooks", () => {
  it("opened: a preview App synced at the head commit; closed: the App deleted, its objects pruned", async () => {
    await api("POST", APPSETS, {
      apiVersion: "plumb.dev/v1alpha1",
      kind: "AppSet",
      metadata: { name: "previews", namespace: NS },
      spec: {
        generators: [
          {
            pullRequest: {
              github: {
                owner: "org",
                repo: "shop",
                api: forge.url,
                tokenRef: { secretName: "github-token", key: "token" },
              },
            },
          },
        ],
        template: {
          metadata: { name: "shop-pr-{{number}}" },
          spec: { source: { git: { url: repo.url, ref: "{{head_sha}}", path: "preview" } } },
        },
      },
    });
    // The pull request's head: a commit on its branch, served as refs/pull/1/head.
    await repo.git("checkout", "--quiet", "-b", "feature");
    writeFileSync(join(repo.workDir, "preview/cm.yaml"), configMap("preview", "feature"));
    await repo.git("commit", "--quiet", "-am", "preview change");
    await repo.git("push", "--quiet", "origin", "HEAD:refs/pull/1/head");
    const head = await repo.head();
    await repo.git("checkout", "--quiet", "main");
    open = [listed(head)];

    const res = await deliver("opened", head);
    expect(res.status).toBe(202);
    // No App of plumb's follows org/shop: previews have nothing to do; the AppSet does.
    expect(await res.json()).toEqual({ apps: [], number: 1, head });

    const app = await waitFor("the preview App synced at the head", async () => {
      const a = await readApp("shop-pr-1");
      return a?.status?.revision === head && a;
    });
    expect(app.spec.source.git).toMatchObject({ ref: head, path: "preview" });
    expect(app.metadata.ownerReferences).toEqual([
      expect.objectContaining({ kind: "AppSet", name: "previews" }),
    ]);
    expect(await data("preview")).toEqual({ from: "feature" });
    // The list was asked for as GitHub documents it, with the token from the Secret.
    const lists = forge.received.filter((r) => r.path.startsWith("/repos/org/shop/pulls?"));
    expect(lists[0]?.path).toBe("/repos/org/shop/pulls?state=open&per_page=100&page=1");
    expect(lists[0]?.headers["authorization"]).toBe(`Bearer ${TOKEN}`);
    // The token is in no log line.
    expect(served.output()).not.toContain(TOKEN);

    open = [];
    const closed = await deliver("closed", head);
    expect(closed.status).toBe(202);
    expect(await closed.json()).toMatchObject({ ignored: true, appSets: true });
    await waitFor(
      "the preview App deleted",
      async () => (await readApp("shop-pr-1")) === undefined,
    );
    expect(await data("preview")).toBeUndefined();
    const appset = (await api("GET", `${APPSETS}/previews`)) as { status?: { apps?: unknown[] } };
    expect(appset.status?.apps).toEqual([]);
  });
});

describe("git generator driven by a push webhook", () => {
  it("a pushed directory gets its App at once, without waiting for the interval", async () => {
    await api("POST", APPSETS, {
      apiVersion: "plumb.dev/v1alpha1",
      kind: "AppSet",
      metadata: { name: "envs", namespace: NS },
      spec: {
        generators: [
          { git: { repoURL: repo.url, revision: "main", directories: [{ path: "apps/*" }] } },
        ],
        template: {
          metadata: { name: "env-{{path.basename}}" },
          spec: { source: { git: { url: repo.url, ref: "main", path: "{{path}}" } } },
        },
      },
    });
    const after = await repo.commit({ "apps/beta/cm.yaml": configMap("cm-beta", "beta") }, "beta");

    const body = githubPush(repo.url, "refs/heads/main", after);
    const res = await fetch(`${served.base}/webhooks/github`, {
      method: "POST",
      headers: githubHeaders(body, SECRET),
      body,
    });
    expect(res.status).toBe(202);
    await waitFor("the new directory's App synced", async () => {
      const a = await readApp("env-beta");
      return a?.status?.revision === after;
    });
    expect((await readApp("env-beta"))?.spec.source.git.path).toBe("apps/beta");
    expect(await data("cm-beta")).toEqual({ from: "beta" });
    expect(await data("cm-alpha")).toEqual({ from: "alpha" });
  });
});

describe("the tick: plumb reconcile --all", () => {
  it("evaluates a new AppSet before the Apps: the App it makes is synced in the same tick", async () => {
    const ns = "e2e-appset-tick";
    await createNamespace(ns);
    await api("POST", `/apis/plumb.dev/v1alpha1/namespaces/${ns}/appsets`, {
      apiVersion: "plumb.dev/v1alpha1",
      kind: "AppSet",
      metadata: { name: "listed", namespace: ns },
      spec: {
        generators: [{ list: { elements: [{ dir: "alpha" }] } }],
        template: {
          metadata: { name: "from-{{dir}}" },
          spec: { source: { git: { url: repo.url, ref: "main", path: "apps/{{dir}}" } } },
        },
      },
    });
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [join(ROOT, "functions/plumb.mjs"), "reconcile", "--all", "--namespace", ns],
      { env: { ...process.env, KUBECONFIG: kubeconfig() } },
    );
    const lines = stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toEqual([
      expect.objectContaining({
        appset: `${ns}/listed`,
        outcome: "Synced",
        created: ["from-alpha"],
      }),
      expect.objectContaining({ app: `${ns}/from-alpha`, outcome: "Reconciled" }),
    ]);
    const cm = (await getObject(`/api/v1/namespaces/${ns}/configmaps/cm-alpha`)) as {
      data?: unknown;
    };
    expect(cm?.data).toEqual({ from: "alpha" });
  });
});
