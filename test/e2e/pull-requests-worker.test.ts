// Pull (merge) request previews in the Worker (workerd via wrangler dev): GitLab's documented
// Merge Request Hook and a Gitea PullRequestPayload, authenticated as each provider does,
// previewed in waitUntil; a local receiver stands in for the forges' comment and status APIs.
import { createHmac } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reconcileApp } from "../../src/reconcile/index.ts";
import {
  fixtureFiles,
  type GitServer,
  REAL_FIXTURES,
  startGitServer,
  type TestRepo,
} from "../support/git-server.ts";
import { type Received, type Receiver, startReceiver } from "../support/receiver.ts";
import { startWorkerd, type Workerd } from "../support/workerd.ts";
import {
  api,
  createApp,
  createNamespace,
  deploymentImage,
  getApp,
  kubeconfig,
  realPorts,
  waitFor,
} from "./support.ts";

const FIXTURES = join(resolve(import.meta.dirname, "../.."), "test/fixtures/webhooks");
const GITLAB_TOKEN = "worker-gitlab-webhook-token";
const GITEA_SECRET = "worker-gitea-webhook-secret";
const FORGE_TOKEN = "worker-forge-token-0123456789";
const NS = "plumb-system";
const FILE = "guestbook-ui-deployment.yaml";

let git: GitServer;
let forge: Receiver;
let workerd: Workerd;
const repos: Record<string, TestRepo> = {};
const comments: Array<{ id: number; body: string; at: string }> = [];

function forgeApi(r: Received) {
  const body = (r.body as { body?: string }).body ?? "";
  const path = r.path.replace(/%2F/gi, "/");
  const notes = /^\/projects\/org\/wlab\/merge_requests\/1\/notes(?:\/(\d+))?(\?.*)?$/.exec(path);
  const issue = /^\/repos\/org\/wtea\/issues\/1\/comments(\?.*)?$/.exec(path);
  const edit = /^\/repos\/org\/wtea\/issues\/comments\/(\d+)$/.exec(path);
  const at = notes ? "gitlab" : "gitea";
  if (r.method === "GET" && (notes || issue)) {
    return { status: 200, json: comments.filter((c) => c.at === at) };
  }
  if (r.method === "POST" && ((notes && !notes[1]) || issue)) {
    const c = { id: 500 + comments.length, body, at };
    comments.push(c);
    return { status: 201, json: c };
  }
  const id = r.method === "PUT" && notes?.[1] ? notes[1] : r.method === "PATCH" && edit?.[1];
  if (id) {
    const c = comments.find((x) => x.id === Number(id) && x.at === at);
    if (!c) return { status: 404, json: { message: "404 Not found" } };
    c.body = body;
    return { status: 200, json: c };
  }
  return undefined;
}

function gitlabDelivery(action: string, head: string, oldrev?: string): string {
  const p = JSON.parse(readFileSync(join(FIXTURES, "gitlab-merge-request-1.json"), "utf8"));
  const url = repos["wlab"]!.url;
  const web = url.replace(/\.git$/, "");
  const project = { git_http_url: url, web_url: web, http_url: url, url, homepage: web };
  Object.assign(p.project, project, { git_ssh_url: null, ssh_url: null, default_branch: "main" });
  const mr = p.object_attributes;
  Object.assign(mr.target, project, { git_ssh_url: null, ssh_url: null, default_branch: "main" });
  Object.assign(mr, { iid: 1, action, target_branch: "main", source_branch: "feature" });
  mr.state = action === "close" ? "closed" : action === "merge" ? "merged" : "opened";
  mr.last_commit.id = head;
  if (oldrev) mr.oldrev = oldrev;
  return JSON.stringify(p);
}

function giteaDelivery(action: string, head: string): string {
  const p = JSON.parse(readFileSync(join(FIXTURES, "gitea-pull-request-opened.json"), "utf8"));
  const url = repos["wtea"]!.url;
  Object.assign(p.repository, { clone_url: url, html_url: url.replace(/\.git$/, "") });
  Object.assign(p.repository, { ssh_url: null, default_branch: "main" });
  Object.assign(p, { action, number: 1 });
  Object.assign(p.pull_request, { number: 1, state: action === "closed" ? "closed" : "open" });
  p.pull_request.head.sha = head;
  p.pull_request.base.ref = "main";
  return JSON.stringify(p);
}

function send(provider: "gitlab" | "gitea", body: string): Promise<Response> {
  const headers: Record<string, string> =
    provider === "gitlab"
      ? { "X-Gitlab-Event": "Merge Request Hook", "X-Gitlab-Token": GITLAB_TOKEN }
      : {
          "X-Gitea-Event": "pull_request",
          "X-Gitea-Signature": createHmac("sha256", GITEA_SECRET).update(body).digest("hex"),
        };
  return fetch(`${workerd.base}/webhooks/${provider}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body,
  });
}

async function pushHead(repo: TestRepo, headRef: string, image: string): Promise<string> {
  const original = fixtureFiles(join(REAL_FIXTURES, "guestbook"))[FILE]!;
  writeFileSync(join(repo.workDir, FILE), original.replace("gb-frontend:v5", image));
  await repo.git("commit", "--quiet", "-am", `image ${image}`);
  await repo.git("push", "--quiet", "--force", "origin", `HEAD:${headRef}`);
  return repo.head();
}

const requests = (method: string, re: RegExp) =>
  forge.received.filter((r) => r.method === method && re.test(r.path.replace(/%2F/gi, "/")));
const diagnostics = (e: unknown) => {
  throw new Error(`${e}\n${workerd.output().slice(-6000)}`);
};

beforeAll(async () => {
  git = await startGitServer();
  forge = await startReceiver(200, forgeApi);
  await createNamespace(NS).catch(() => undefined);
  await api("POST", `/api/v1/namespaces/${NS}/secrets`, {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "plumb-forge-tokens-worker" },
    stringData: { [new URL(git.url).hostname]: FORGE_TOKEN },
  });
  for (const name of ["wlab", "wtea"]) {
    const repo = await git.createRepo(
      `org/${name}`,
      fixtureFiles(join(REAL_FIXTURES, "guestbook")),
      {
        allowSha1InWant: true,
      },
    );
    repos[name] = repo;
    await createNamespace(`pr-${name}`);
    await createApp(`pr-${name}`, name, { source: { git: { url: repo.url, ref: "main" } } });
    const applied = await reconcileApp({ namespace: `pr-${name}`, name }, realPorts(), new Date());
    expect(applied).toMatchObject({ outcome: "Reconciled", syncStatus: "Synced" });
    await repo.git("checkout", "--quiet", "-b", "feature");
  }
  const host = new URL(git.url).hostname.toUpperCase().replace(/[^A-Z0-9]/g, "_");
  workerd = await startWorkerd(kubeconfig(), {
    GITLAB_WEBHOOK_TOKEN: GITLAB_TOKEN,
    GITEA_WEBHOOK_SECRET: GITEA_SECRET,
    PLUMB_NAMESPACE: NS,
    PLUMB_FORGE_TOKENS: "plumb-forge-tokens-worker",
    [`PLUMB_FORGE_API_URL_${host}`]: forge.url,
  });
});

afterAll(async () => {
  await workerd?.stop();
  await forge?.stop();
  await git?.stop();
});

describe("pull request previews in workerd", () => {
  it("a GitLab merge request gets one note, edited on update with new commits, and statuses; merged sends nothing", async () => {
    const repo = repos["wlab"]!;
    const status = (sha: string) => new RegExp(`^/projects/org/wlab/statuses/${sha}$`);
    const first = await pushHead(repo, "refs/merge-requests/1/head", "gb-frontend:v9");
    const res = await send("gitlab", gitlabDelivery("open", first));
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ apps: ["pr-wlab/wlab"], number: 1, head: first });
    await waitFor(
      "status on the head",
      async () => requests("POST", status(first)).length > 0,
    ).catch(diagnostics);
    const note = comments.find((c) => c.at === "gitlab")!;
    expect(note.body).toContain("-        - image: gcr.io/google-samples/gb-frontend:v5");
    expect(note.body).toContain("+        - image: gcr.io/google-samples/gb-frontend:v9");
    expect(requests("POST", status(first))[0]!.body).toEqual({
      state: "success",
      name: "plumb/pr-wlab/wlab",
      description: "previewed",
    });
    expect(requests("POST", status(first))[0]!.headers["private-token"]).toBe(FORGE_TOKEN);

    const second = await pushHead(repo, "refs/merge-requests/1/head", "gb-frontend:v10");
    expect((await send("gitlab", gitlabDelivery("update", second, first))).status).toBe(202);
    await waitFor(
      "status on the second head",
      async () => requests("POST", status(second)).length > 0,
    ).catch(diagnostics);
    expect(requests("POST", /^\/projects\/org\/wlab\/merge_requests\/1\/notes$/)).toHaveLength(1);
    expect(requests("PUT", /notes\/\d+$/).map((r) => r.path.replace(/%2F/gi, "/"))).toEqual([
      `/projects/org/wlab/merge_requests/1/notes/${note.id}`,
    ]);
    expect(note.body).toContain("+        - image: gcr.io/google-samples/gb-frontend:v10");

    const seen = forge.received.length;
    const merged = await send("gitlab", gitlabDelivery("merge", second));
    expect(await merged.json()).toMatchObject({ ignored: true, reason: "action closed" });
    expect(forge.received.length).toBe(seen);
    expect(await deploymentImage("pr-wlab", "guestbook-ui")).toBe(
      "gcr.io/google-samples/gb-frontend:v5",
    );
    expect((await getApp("pr-wlab", "wlab")).status?.revision).not.toBe(second);
  });

  it("a Gitea pull request gets a comment and a status; a head that does not render gets failure", async () => {
    const repo = repos["wtea"]!;
    const status = (sha: string) => new RegExp(`^/repos/org/wtea/statuses/${sha}$`);
    const first = await pushHead(repo, "refs/pull/1/head", "gb-frontend:v9");
    expect((await send("gitea", giteaDelivery("opened", first))).status).toBe(202);
    await waitFor(
      "status on the head",
      async () => requests("POST", status(first)).length > 0,
    ).catch(diagnostics);
    const comment = comments.find((c) => c.at === "gitea")!;
    expect(comment.body).toContain("+        - image: gcr.io/google-samples/gb-frontend:v9");
    expect(
      requests("POST", /^\/repos\/org\/wtea\/issues\/1\/comments$/)[0]!.headers.authorization,
    ).toBe(`token ${FORGE_TOKEN}`);

    writeFileSync(join(repo.workDir, FILE), "kind: Deployment\nmetadata: [not, a, map\n");
    await repo.git("commit", "--quiet", "-am", "broken");
    await repo.git("push", "--quiet", "--force", "origin", "HEAD:refs/pull/1/head");
    const broken = await repo.head();
    expect((await send("gitea", giteaDelivery("synchronized", broken))).status).toBe(202);
    await waitFor(
      "status on the broken head",
      async () => requests("POST", status(broken)).length > 0,
    ).catch(diagnostics);
    const st = requests("POST", status(broken))[0]!.body as Record<string, string>;
    expect(st).toMatchObject({ state: "failure", context: "plumb/pr-wtea/wtea" });
    expect(st.description).toMatch(/^RenderFailed: /);
    expect(requests("PATCH", /^\/repos\/org\/wtea\/issues\/comments\//).map((r) => r.path)).toEqual(
      [`/repos/org/wtea/issues/comments/${comment.id}`],
    );
  });
});
