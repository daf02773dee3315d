// Pull (merge) request previews in the Worker (workerd via wrangler dev): GitLab's documented
// Merge Request Hook, a Gitea PullRequestPayload and GitHub's documented pull_request delivery,
// authenticated as each provider does, previewed in waitUntil, and over the local queue for
// the Apps past the first few; a local receiver stands in for the forges' comment and status
// APIs. No secret of the Worker reaches its logs, a comment or a status.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reconcileApp } from "../../src/reconcile/index.ts";
import {
  forgeComments,
  giteaDelivery as giteaForgeDelivery,
  githubDelivery as githubForgeDelivery,
  gitlabDelivery as gitlabForgeDelivery,
  pushHead as pushForgeHead,
  secretSpellings,
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
  kubePort,
  realPorts,
  waitFor,
} from "./support.ts";

// Secrets with characters that URL-encoding and base64 change, so each encoding is its own text.
const GITLAB_TOKEN = "worker-gitlab/webhook+token=1";
const GITEA_SECRET = "worker-gitea/webhook+secret=2";
const GITHUB_SECRET = "worker-github/webhook+secret=3";
const FORGE_TOKEN = "worker/forge+token=0123456789";
const NS = "plumb-system";
const FILE = "guestbook-ui-deployment.yaml";

let git: GitServer;
let forge: Receiver;
let workerd: Workerd;
const repos: Record<string, TestRepo> = {};
/** Apps on org/wmany: more than the Worker previews in the webhook's own invocation (3). */
const MANY = 5;
const forgeApi = forgeComments("org/wlab", "org/wtea", 500, ["org/wgh", "org/wmany"]);
const comments = forgeApi.comments;
const gitlabDelivery = (action: string, head: string, oldrev?: string) =>
  gitlabForgeDelivery(repos["wlab"]!.url, action, head, oldrev);
const giteaDelivery = (action: string, head: string) =>
  giteaForgeDelivery(repos["wtea"]!.url, action, head);
const githubDelivery = (repo: string, action: string, head: string) =>
  githubForgeDelivery(repos[repo]!.url, action, head);
const send = (provider: "gitlab" | "gitea" | "github", body: string) =>
  sendForgeDelivery(workerd.base, provider, body, {
    gitlabToken: GITLAB_TOKEN,
    giteaSecret: GITEA_SECRET,
    githubSecret: GITHUB_SECRET,
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
  for (const name of ["wlab", "wtea", "wgh"]) {
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
  // Not applied first: each App's preview creates everything.
  const many = await git.createRepo("org/wmany", fixtureFiles(join(REAL_FIXTURES, "guestbook")), {
    allowSha1InWant: true,
  });
  repos["wmany"] = many;
  for (let i = 1; i <= MANY; i++) {
    await createNamespace(`pr-wmany-${i}`);
    await createApp(`pr-wmany-${i}`, "many", { source: { git: { url: many.url, ref: "main" } } });
  }
  await many.git("checkout", "--quiet", "-b", "feature");
  const host = new URL(git.url).hostname.toUpperCase().replace(/[^A-Z0-9]/g, "_");
  workerd = await startWorkerd(
    kubeconfig(),
    {
      PLUMB_NAMESPACE: NS,
      PLUMB_FORGE_TOKENS: "plumb-forge-tokens-worker",
      [`PLUMB_FORGE_API_URL_${host}`]: forge.url,
    },
    {
      secrets: {
        GITLAB_WEBHOOK_TOKEN: GITLAB_TOKEN,
        GITEA_WEBHOOK_SECRET: GITEA_SECRET,
        GITHUB_WEBHOOK_SECRET: GITHUB_SECRET,
      },
    },
  );
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

  it("a GitHub pull request gets one comment, edited in place on synchronize, and a status; closed sends nothing", async () => {
    const repo = repos["wgh"]!;
    const status = (sha: string) =>
      requests("POST", new RegExp(`^/repos/org/wgh/statuses/${sha}$`));
    const posts = () => requests("POST", /^\/repos\/org\/wgh\/issues\/1\/comments$/);
    const before = (await getApp("pr-wgh", "wgh")).metadata.resourceVersion;
    const first = await pushHead(repo, "refs/pull/1/head", "gb-frontend:v9");
    const res = await send("github", githubDelivery("wgh", "opened", first));
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ apps: ["pr-wgh/wgh"], number: 1, head: first });
    await waitFor("status on the head", async () => status(first).length > 0).catch(diagnostics);
    expect(posts()).toHaveLength(1);
    const comment = comments.find((c) => c.repo === "org/wgh")!;
    expect(comment.body.startsWith("<!-- plumb:diff pr-wgh/wgh -->")).toBe(true);
    expect(comment.body).toContain("-        - image: gcr.io/google-samples/gb-frontend:v5");
    expect(comment.body).toContain("+        - image: gcr.io/google-samples/gb-frontend:v9");
    expect(posts()[0]!.headers.authorization).toBe(`Bearer ${FORGE_TOKEN}`);
    expect(status(first)[0]!.body).toEqual({
      state: "success",
      description: "previewed",
      context: "plumb/pr-wgh/wgh",
    });

    const second = await pushHead(repo, "refs/pull/1/head", "gb-frontend:v10");
    expect((await send("github", githubDelivery("wgh", "synchronize", second))).status).toBe(202);
    await waitFor("status on the second head", async () => status(second).length > 0).catch(
      diagnostics,
    );
    expect(posts()).toHaveLength(1);
    expect(requests("PATCH", /^\/repos\/org\/wgh\//).map((r) => r.path)).toEqual([
      `/repos/org/wgh/issues/comments/${comment.id}`,
    ]);
    expect(comments.filter((c) => c.repo === "org/wgh")).toHaveLength(1);
    expect(comment.body).toContain("+        - image: gcr.io/google-samples/gb-frontend:v10");

    const seen = forge.received.length;
    const closed = await send("github", githubDelivery("wgh", "closed", second));
    expect(closed.status).toBe(202);
    expect(await closed.json()).toMatchObject({ ignored: true, reason: "action closed" });
    expect(forge.received.length).toBe(seen);

    // Nothing applied: the live image is main's; the App got only Events.
    expect(await deploymentImage("pr-wgh", "guestbook-ui")).toBe(
      "gcr.io/google-samples/gb-frontend:v5",
    );
    const app = await getApp("pr-wgh", "wgh");
    expect(app.metadata.resourceVersion).toBe(before);
    const events = await kubePort().listEvents(app, 20);
    expect(events.filter((e) => e.reason === "PullRequestPreviewed").map((e) => e.type)).toContain(
      "Normal",
    );
  });

  it("a pull request of more Apps than one invocation previews sends the rest over the queue: one comment and status per App, edited in place", async () => {
    const repo = repos["wmany"]!;
    const ids = Array.from({ length: MANY }, (_, i) => `pr-wmany-${i + 1}/many`);
    const status = (sha: string) =>
      requests("POST", new RegExp(`^/repos/org/wmany/statuses/${sha}$`));
    const contexts = (sha: string) =>
      status(sha)
        .map((r) => (r.body as { context: string }).context)
        .sort();
    const posts = () => requests("POST", /^\/repos\/org\/wmany\/issues\/1\/comments$/);
    const mine = () => comments.filter((c) => c.repo === "org/wmany");
    const first = await pushHead(repo, "refs/pull/1/head", "gb-frontend:v9");
    const res = await send("github", githubDelivery("wmany", "opened", first));
    expect(res.status).toBe(202);
    expect(((await res.json()) as { apps: string[] }).apps.sort()).toEqual(ids);
    await waitFor("a status per App on the head", async () => contexts(first).length >= MANY).catch(
      diagnostics,
    );
    expect(contexts(first)).toEqual(ids.map((id) => `plumb/${id}`));
    expect(status(first).map((r) => (r.body as { state: string }).state)).toEqual(
      Array(MANY).fill("success"),
    );
    // Three in the webhook's invocation, two in one queue message, read by the consumer.
    // wrangler prefixes each line of a Worker with its name when it runs two.
    const lines = workerd
      .output()
      .split("\n")
      .map((l) => l.replace(/^\[plumb\] /, ""))
      .flatMap((l): Array<Record<string, unknown>> => {
        try {
          return l.startsWith("{") ? [JSON.parse(l)] : [];
        } catch {
          return [];
        }
      });
    expect(workerd.output()).toMatch(/QUEUE plumb-reconcile 1\/1/);
    expect(lines.filter((l) => l["msg"] === "previews queued")).toEqual([
      { msg: "previews queued", number: 1, apps: MANY - 3, messages: 1 },
    ]);
    expect(
      lines
        .filter((l) => l["msg"] === "pull request previewed" && ids.includes(String(l["app"])))
        .map((l) => l["app"])
        .sort(),
    ).toEqual(ids);
    expect(posts()).toHaveLength(MANY);
    expect(
      mine()
        .map((c) => c.body.split("\n")[0])
        .sort(),
    ).toEqual(ids.map((id) => `<!-- plumb:diff ${id} -->`));
    for (const c of mine()) expect(c.body).toContain("gb-frontend:v9");

    const second = await pushHead(repo, "refs/pull/1/head", "gb-frontend:v10");
    expect((await send("github", githubDelivery("wmany", "synchronize", second))).status).toBe(202);
    await waitFor(
      "a status per App on the second head",
      async () => contexts(second).length >= MANY,
    ).catch(diagnostics);
    expect(posts()).toHaveLength(MANY);
    expect(mine()).toHaveLength(MANY);
    expect(
      requests("PATCH", /^\/repos\/org\/wmany\//)
        .map((r) => r.path)
        .sort(),
    ).toEqual(
      mine()
        .map((c) => `/repos/org/wmany/issues/comments/${c.id}`)
        .sort(),
    );
    for (const c of mine()) expect(c.body).toContain("gb-frontend:v10");
  });

  it("no secret reaches the Worker's output, a comment or a status, in any encoding", async () => {
    const repo = repos["wgh"]!;
    const secrets = [
      FORGE_TOKEN,
      GITHUB_SECRET,
      GITLAB_TOKEN,
      GITEA_SECRET,
      readFileSync(join(kubeconfig(), "../token"), "utf8").trim(),
    ];
    // A head whose manifests quote the secrets, as they are and encoded: the diff would show them.
    const leaky = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "leaky" },
      data: Object.fromEntries(
        secrets.slice(0, 4).flatMap((v, i) => [
          [`plain-${i}`, v],
          [`base64-${i}`, Buffer.from(v).toString("base64")],
          [`url-${i}`, encodeURIComponent(v)],
        ]),
      ),
    };
    writeFileSync(join(repo.workDir, "leaky.yaml"), JSON.stringify(leaky));
    await repo.git("add", "leaky.yaml");
    await repo.git("commit", "--quiet", "-m", "leaky");
    await repo.git("push", "--quiet", "--force", "origin", "HEAD:refs/pull/1/head");
    const head = await repo.head();
    expect((await send("github", githubDelivery("wgh", "synchronize", head))).status).toBe(202);
    const status = () => requests("POST", new RegExp(`^/repos/org/wgh/statuses/${head}$`));
    await waitFor("status on the head", async () => status().length > 0).catch(diagnostics);
    const comment = comments.find((c) => c.repo === "org/wgh")!;
    expect(comment.body).toContain("+++ b/v1/ConfigMap/pr-wgh/leaky");
    for (const key of Object.keys(leaky.data)) {
      expect(comment.body).toContain(`+  ${key}: [redacted]\n`);
    }

    const statuses = forge.received.filter((r) => /\/statuses\//.test(r.path));
    expect(statuses.length).toBeGreaterThan(MANY * 2);
    const texts = {
      output: workerd.output(),
      comments: comments.map((c) => c.body).join("\n"),
      statuses: statuses.map((r) => JSON.stringify(r.body)).join("\n"),
    };
    // The Worker's log lines are there (a test of an empty output could not fail).
    expect(texts.output).toContain('"msg":"pull request previewed"');
    for (const [where, text] of Object.entries(texts)) {
      for (const secret of secrets) {
        for (const form of secretSpellings(secret)) {
          expect({ where, form, found: text.includes(form) }).toEqual({
            where,
            form,
            found: false,
          });
        }
      }
    }
  });
});
