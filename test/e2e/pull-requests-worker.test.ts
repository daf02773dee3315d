// Pull (merge) request previews in the Worker (workerd via wrangler dev): GitLab's documented
// Merge Request Hook and a Gitea PullRequestPayload, authenticated as each provider does,
// previewed in waitUntil; a local receiver stands in for the forges' comment and status APIs.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reconcileApp } from "../../src/reconcile/index.ts";
import {
  forgeComments,
  giteaDelivery as giteaForgeDelivery,
  gitlabDelivery as gitlabForgeDelivery,
  pushHead as pushForgeHead,
  sendForgeDelivery,
} from "../support/forges.ts";
import {
  fixtureFiles,
  type GitServer,
  REAL_FIXTURES,
  startGitServer,
  type TestRepo,
} from "../support/git-server.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
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

const GITLAB_TOKEN = "worker-gitlab-webhook-token";
const GITEA_SECRET = "worker-gitea-webhook-secret";
const FORGE_TOKEN = "worker-forge-token-0123456789";
const NS = "plumb-system";
const FILE = "guestbook-ui-deployment.yaml";

let git: GitServer;
let forge: Receiver;
let workerd: Workerd;
const repos: Record<string, TestRepo> = {};
const forgeApi = forgeComments("org/wlab", "org/wtea", 500);
const comments = forgeApi.comments;
const gitlabDelivery = (action: string, head: string, oldrev?: string) =>
  gitlabForgeDelivery(repos["wlab"]!.url, action, head, oldrev);
const giteaDelivery = (action: string, head: string) =>
  giteaForgeDelivery(repos["wtea"]!.url, action, head);
const send = (provider: "gitlab" | "gitea", body: string) =>
  sendForgeDelivery(workerd.base, provider, body, {
    gitlabToken: GITLAB_TOKEN,
    giteaSecret: GITEA_SECRET,
  });
/** Commits guestbook with `image` on the feature branch and points the forge's head ref at it. */
const pushHead = (repo: TestRepo, headRef: string, image: string) =>
  pushForgeHead(
    repo,
    headRef,
    FILE,
    fixtureFiles(join(REAL_FIXTURES, "guestbook"))[FILE]!.replace("gb-frontend:v5", image),
  );

const requests = (method: string, re: RegExp) =>
  forge.received.filter((r) => r.method === method && re.test(r.path.replace(/%2F/gi, "/")));
const diagnostics = (e: unknown) => {
  throw new Error(`${e}\n${workerd.output().slice(-6000)}`);
};

beforeAll(async () => {
  git = await startGitServer();
  forge = await startReceiver(200, forgeApi.handle);
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
