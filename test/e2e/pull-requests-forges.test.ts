// Merge request (GitLab) and pull request (Gitea) previews on Node: each provider's documented
// delivery (test/fixtures/webhooks: GitLab's Merge Request Hook example, a Gitea
// PullRequestPayload), authenticated as the provider does, sent to `plumb serve`; a local
// receiver stands in for the GitLab notes / Gitea issue-comment and commit-status APIs.
import { type ChildProcess, spawn } from "node:child_process";
import { join, resolve } from "node:path";
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
import {
  api,
  createApp,
  createNamespace,
  deploymentImage,
  getApp,
  kubeconfig,
  kubePort,
  realPorts,
  waitFor,
} from "./support.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const GITLAB_TOKEN = "e2e-gitlab-webhook-token";
const GITEA_SECRET = "e2e-gitea-webhook-secret";
const FORGE_TOKEN = "e2e-forge-token-0123456789";
const NS = "pr-forges";
const PORT = 20000 + Math.floor(Math.random() * 1000);
const base = `http://127.0.0.1:${PORT}`;
const FILE = "guestbook-ui-deployment.yaml";

let git: GitServer;
let forge: Receiver;
let server: ChildProcess;
let output = "";
const repos: Record<string, TestRepo> = {};
const forgeApi = forgeComments("org/lab", "org/tea", 700);
const comments = forgeApi.comments;
const gitlabDelivery = (action: string, head: string, oldrev?: string) =>
  gitlabForgeDelivery(repos["lab"]!.url, action, head, oldrev);
const giteaDelivery = (action: string, head: string) =>
  giteaForgeDelivery(repos["tea"]!.url, action, head);
const send = (provider: "gitlab" | "gitea", body: string) =>
  sendForgeDelivery(base, provider, body, {
    gitlabToken: GITLAB_TOKEN,
    giteaSecret: GITEA_SECRET,
  });
/** Commits `content` on the feature branch and points the forge's head ref at it. */
const pushHead = (repo: TestRepo, headRef: string, content: string) =>
  pushForgeHead(repo, headRef, FILE, content);

const original = () => fixtureFiles(join(REAL_FIXTURES, "guestbook"))[FILE]!;
const withImage = (image: string) => original().replace("gb-frontend:v5", image);
const requests = (method: string, re: RegExp) =>
  forge.received.filter((r) => r.method === method && re.test(r.path.replace(/%2F/gi, "/")));

beforeAll(async () => {
  git = await startGitServer();
  forge = await startReceiver(200, forgeApi.handle);
  await createNamespace(NS);
  await api("POST", `/api/v1/namespaces/${NS}/secrets`, {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "plumb-forge-tokens" },
    stringData: { [new URL(git.url).hostname]: FORGE_TOKEN },
  });
  for (const name of ["lab", "tea"]) {
    const repo = await git.createRepo(
      `org/${name}`,
      fixtureFiles(join(REAL_FIXTURES, "guestbook")),
    );
    repos[name] = repo;
    // Each App in a namespace of its own (the two repositories deploy the same objects); the
    // token Secret stays in plumb's namespace.
    await createNamespace(`${NS}-${name}`);
    await createApp(`${NS}-${name}`, name, { source: { git: { url: repo.url, ref: "main" } } });
    const key = { namespace: `${NS}-${name}`, name };
    const applied = await reconcileApp(key, realPorts(), new Date());
    expect(applied).toMatchObject({ outcome: "Reconciled", syncStatus: "Synced" });
    await repo.git("checkout", "--quiet", "-b", "feature");
  }
  const forgeHost = new URL(git.url).hostname.toUpperCase().replace(/[^A-Z0-9]/g, "_");
  server = spawn(
    process.execPath,
    [
      join(ROOT, "functions/plumb.mjs"),
      "serve",
      "--port",
      String(PORT),
      "--kubeconfig",
      kubeconfig(),
    ],
    {
      env: {
        ...process.env,
        GITLAB_WEBHOOK_TOKEN: GITLAB_TOKEN,
        GITEA_WEBHOOK_SECRET: GITEA_SECRET,
        PLUMB_NAMESPACE: NS,
        [`PLUMB_FORGE_API_URL_${forgeHost}`]: forge.url,
      },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  server.stdout?.on("data", (d) => (output += d));
  server.stderr?.on("data", (d) => (output += d));
  await waitFor(
    "server up",
    async () => (await fetch(`${base}/healthz`).catch(() => undefined))?.ok,
  );
});

afterAll(async () => {
  server?.kill();
  await forge?.stop();
  await git?.stop();
});

const statusOn = (path: RegExp) => () => requests("POST", path).length > 0;
const fail = (e: unknown) => {
  throw new Error(`${e}\n${output.slice(-4000)}`);
};

describe("GitLab merge request previews", () => {
  const notes = /^\/projects\/org\/lab\/merge_requests\/1\/notes/;
  const status = (sha: string) => new RegExp(`^/projects/org/lab/statuses/${sha}$`);

  it("notes the change, edits the same note on update with new commits, sets the status, leaves merged alone", async () => {
    const repo = repos["lab"]!;
    const ref = "refs/merge-requests/1/head";
    const before = (await getApp(`${NS}-lab`, "lab")).metadata.resourceVersion;
    const first = await pushHead(repo, ref, withImage("gb-frontend:v9"));
    const res = await send("gitlab", gitlabDelivery("open", first));
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ apps: [`${NS}-lab/lab`], number: 1, head: first });
    await waitFor("status on the head", async () => statusOn(status(first))()).catch(fail);
    const posts = () => requests("POST", new RegExp(`${notes.source}$`));
    expect(posts()).toHaveLength(1);
    expect(posts()[0]!.headers["private-token"]).toBe(FORGE_TOKEN);
    expect(posts()[0]!.headers.authorization).toBeUndefined();
    const note = comments.find((c) => c.at === "gitlab")!;
    expect(note.body.startsWith(`<!-- plumb:diff ${NS}-lab/lab -->`)).toBe(true);
    expect(note.body).toContain("-        - image: gcr.io/google-samples/gb-frontend:v5");
    expect(note.body).toContain("+        - image: gcr.io/google-samples/gb-frontend:v9");
    const st = requests("POST", status(first))[0]!;
    expect(st.headers["private-token"]).toBe(FORGE_TOKEN);
    expect(st.body).toEqual({
      state: "success",
      name: `plumb/${NS}-lab/lab`,
      description: "previewed",
    });

    const second = await pushHead(repo, ref, withImage("gb-frontend:v10"));
    expect((await send("gitlab", gitlabDelivery("update", second, first))).status).toBe(202);
    await waitFor("status on the second head", async () => statusOn(status(second))());
    expect(posts()).toHaveLength(1);
    expect(requests("PUT", notes).map((r) => r.path.replace(/%2F/gi, "/"))).toEqual([
      `/projects/org/lab/merge_requests/1/notes/${note.id}`,
    ]);
    expect(comments.filter((c) => c.at === "gitlab")).toHaveLength(1);
    expect(note.body).toContain("+        - image: gcr.io/google-samples/gb-frontend:v10");

    const seen = forge.received.length;
    for (const action of ["merge", "close"]) {
      const r = await send("gitlab", gitlabDelivery(action, second));
      expect(r.status).toBe(202);
      expect(await r.json()).toMatchObject({ ignored: true, reason: "action closed" });
    }
    // An update without oldrev (a title edit) brings no new code: nothing sent either.
    const edited = await send("gitlab", gitlabDelivery("update", second));
    expect(await edited.json()).toMatchObject({ ignored: true, reason: "action update" });
    expect(forge.received.length).toBe(seen);

    expect(await deploymentImage(`${NS}-lab`, "guestbook-ui")).toBe(
      "gcr.io/google-samples/gb-frontend:v5",
    );
    const app = await getApp(`${NS}-lab`, "lab");
    expect(app.metadata.resourceVersion).toBe(before);
    const events = await kubePort().listEvents(app, 20);
    const previewed = events.filter((e) => e.reason === "PullRequestPreviewed");
    expect(previewed.map((e) => e.type)).toContain("Normal");
    expect(previewed.some((e) => e.message.startsWith("merge request !1 at "))).toBe(true);
  });

  it("a head that does not render gets a failed status with the reason, in the same note", async () => {
    const repo = repos["lab"]!;
    const broken = await pushHead(
      repo,
      "refs/merge-requests/1/head",
      "kind: Deployment\nmetadata: [not, a, map\n",
    );
    expect((await send("gitlab", gitlabDelivery("update", broken, broken))).status).toBe(202);
    await waitFor("status on the broken head", async () => statusOn(status(broken))());
    const st = requests("POST", status(broken))[0]!.body as Record<string, string>;
    expect(st.state).toBe("failed");
    expect(st.name).toBe(`plumb/${NS}-lab/lab`);
    expect(st.description).toMatch(/^RenderFailed: /);
    expect(comments.filter((c) => c.at === "gitlab")).toHaveLength(1);
    expect(comments.find((c) => c.at === "gitlab")!.body).toContain(
      `### plumb: ${NS}-lab/lab cannot be previewed\n\n**RenderFailed**`,
    );
  });
});

describe("Gitea pull request previews", () => {
  const status = (sha: string) => new RegExp(`^/repos/org/tea/statuses/${sha}$`);

  it("comments the change, edits the same comment on synchronized, sets the status, leaves closed alone", async () => {
    const repo = repos["tea"]!;
    const ref = "refs/pull/1/head";
    const before = (await getApp(`${NS}-tea`, "tea")).metadata.resourceVersion;
    const first = await pushHead(repo, ref, withImage("gb-frontend:v9"));
    const res = await send("gitea", giteaDelivery("opened", first));
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ apps: [`${NS}-tea/tea`], number: 1, head: first });
    await waitFor("status on the head", async () => statusOn(status(first))()).catch(fail);
    const posts = () => requests("POST", /^\/repos\/org\/tea\/issues\/1\/comments$/);
    expect(posts()).toHaveLength(1);
    expect(posts()[0]!.headers.authorization).toBe(`token ${FORGE_TOKEN}`);
    const comment = comments.find((c) => c.at === "gitea")!;
    expect(comment.body.startsWith(`<!-- plumb:diff ${NS}-tea/tea -->`)).toBe(true);
    expect(comment.body).toContain("-        - image: gcr.io/google-samples/gb-frontend:v5");
    expect(comment.body).toContain("+        - image: gcr.io/google-samples/gb-frontend:v9");
    expect(requests("POST", status(first))[0]!.body).toEqual({
      state: "success",
      context: `plumb/${NS}-tea/tea`,
      description: "previewed",
    });

    const second = await pushHead(repo, ref, withImage("gb-frontend:v10"));
    expect((await send("gitea", giteaDelivery("synchronized", second))).status).toBe(202);
    await waitFor("status on the second head", async () => statusOn(status(second))());
    expect(posts()).toHaveLength(1);
    expect(requests("PATCH", /^\/repos\/org\/tea\//).map((r) => r.path)).toEqual([
      `/repos/org/tea/issues/comments/${comment.id}`,
    ]);
    expect(comment.body).toContain("+        - image: gcr.io/google-samples/gb-frontend:v10");

    const seen = forge.received.length;
    const closed = await send("gitea", giteaDelivery("closed", second));
    expect(closed.status).toBe(202);
    expect(await closed.json()).toMatchObject({ ignored: true, reason: "action closed" });
    expect(forge.received.length).toBe(seen);

    expect(await deploymentImage(`${NS}-tea`, "guestbook-ui")).toBe(
      "gcr.io/google-samples/gb-frontend:v5",
    );
    const app = await getApp(`${NS}-tea`, "tea");
    expect(app.metadata.resourceVersion).toBe(before);
    const events = await kubePort().listEvents(app, 20);
    expect(events.filter((e) => e.reason === "PullRequestPreviewed").map((e) => e.type)).toContain(
      "Normal",
    );
  });

  it("a head that does not render gets a failure status with the reason", async () => {
    const broken = await pushHead(
      repos["tea"]!,
      "refs/pull/1/head",
      "kind: Deployment\nmetadata: [not, a, map\n",
    );
    expect((await send("gitea", giteaDelivery("synchronized", broken))).status).toBe(202);
    await waitFor("status on the broken head", async () => statusOn(status(broken))());
    const st = requests("POST", status(broken))[0]!.body as Record<string, string>;
    expect(st.state).toBe("failure");
    expect(st.context).toBe(`plumb/${NS}-tea/tea`);
    expect(st.description).toMatch(/^RenderFailed: /);
    expect(comments.filter((c) => c.at === "gitea")).toHaveLength(1);
  });
});
