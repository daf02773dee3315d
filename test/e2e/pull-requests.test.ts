// Pull request previews on Node: GitHub's documented pull_request delivery, signed, sent to
// `plumb serve`; a local receiver stands in for the GitHub API (comments and statuses).
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reconcileApp } from "../../src/reconcile/index.ts";
import { secretSpellings } from "../support/forges.ts";
import {
  fixtureFiles,
  type GitServer,
  REAL_FIXTURES,
  startGitServer,
  type TestRepo,
} from "../support/git-server.ts";
import { githubHeaders } from "../support/github.ts";
import { type Received, type Receiver, startReceiver } from "../support/receiver.ts";
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
const FIXTURE = join(ROOT, "test/fixtures/webhooks/github-pull-request-opened.json");
const SECRET = "e2e-pr-webhook-secret";
const TOKEN = "ghp_e2e-forge-token-0123456789";
const NS = "pr-preview";
const PORT = 19000 + Math.floor(Math.random() * 1000);
const base = `http://127.0.0.1:${PORT}`;
const FILE = "guestbook-ui-deployment.yaml";

let git: GitServer;
let forge: Receiver;
let server: ChildProcess;
let repo: TestRepo;
let output = "";
const comments: Array<{ id: number; body: string }> = [];

/** The forge's comment API, as GitHub answers it: list, create (201 with an id), update. */
function github(r: Received) {
  const list = /^\/repos\/org\/shop\/issues\/1\/comments\?/.exec(r.path);
  if (r.method === "GET" && list) return { status: 200, json: comments };
  const body = (r.body as { body?: string }).body ?? "";
  if (r.method === "POST" && r.path === "/repos/org/shop/issues/1/comments") {
    const c = { id: 900 + comments.length, body };
    comments.push(c);
    return { status: 201, json: c };
  }
  const patch = /^\/repos\/org\/shop\/issues\/comments\/(\d+)$/.exec(r.path);
  if (r.method === "PATCH" && patch) {
    const c = comments.find((x) => x.id === Number(patch[1]));
    if (!c) return { status: 404, json: { message: "Not Found" } };
    c.body = body;
    return { status: 200, json: c };
  }
  return undefined;
}

/** GitHub's documented delivery, adapted to the test repository, PR #1 and `action`. */
function delivery(action: string, head: string): string {
  const p = JSON.parse(readFileSync(FIXTURE, "utf8"));
  p.action = action;
  p.number = 1;
  p.pull_request.number = 1;
  p.pull_request.head.sha = head;
  p.pull_request.base.ref = "main";
  const r = p.pull_request.base.repo;
  Object.assign(r, {
    clone_url: repo.url,
    html_url: repo.url.replace(/\.git$/, ""),
    default_branch: "main",
  });
  for (const k of ["ssh_url", "git_url", "svn_url", "url"]) r[k] = null;
  return JSON.stringify(p);
}

async function send(action: string, head: string): Promise<Response> {
  const body = delivery(action, head);
  return fetch(`${base}/webhooks/github`, {
    method: "POST",
    headers: githubHeaders(body, SECRET, "pull_request"),
    body,
  });
}

/** Commits `image` on the PR branch and points refs/pull/1/head at it, as GitHub does. */
async function pushHead(image: string): Promise<string> {
  const original = fixtureFiles(join(REAL_FIXTURES, "guestbook"))[FILE]!;
  const { writeFileSync } = await import("node:fs");
  writeFileSync(join(repo.workDir, FILE), original.replace("gb-frontend:v5", image));
  await repo.git("commit", "--quiet", "-am", `image ${image}`);
  await repo.git("push", "--quiet", "--force", "origin", "HEAD:refs/pull/1/head");
  return repo.head();
}

const posts = () =>
  forge.received.filter((r) => r.method === "POST" && r.path.endsWith("/comments"));
const patches = () => forge.received.filter((r) => r.method === "PATCH");
const statuses = (sha: string) =>
  forge.received.filter((r) => r.path === `/repos/org/shop/statuses/${sha}`);

beforeAll(async () => {
  git = await startGitServer();
  forge = await startReceiver(200, github);
  repo = await git.createRepo("org/shop", fixtureFiles(join(REAL_FIXTURES, "guestbook")));
  await createNamespace(NS);
  await api("POST", `/api/v1/namespaces/${NS}/secrets`, {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "plumb-forge-tokens" },
    stringData: { [new URL(git.url).hostname]: TOKEN },
  });
  await createApp(NS, "shop", { source: { git: { url: repo.url, ref: "main" } } });
  const applied = await reconcileApp({ namespace: NS, name: "shop" }, realPorts(), new Date());
  expect(applied).toMatchObject({ outcome: "Reconciled", syncStatus: "Synced" });
  expect(await deploymentImage(NS, "guestbook-ui")).toBe("gcr.io/google-samples/gb-frontend:v5");
  await repo.git("checkout", "--quiet", "-b", "feature");
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
        GITHUB_WEBHOOK_SECRET: SECRET,
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

describe("pull request previews", () => {
  it("comments the change, edits the same comment on synchronize, sets the status, leaves closed alone", async () => {
    const before = (await getApp(NS, "shop")).metadata.resourceVersion;
    const first = await pushHead("gb-frontend:v9");
    const res = await send("opened", first);
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ apps: [`${NS}/shop`], number: 1, head: first });
    await waitFor("status on the head", async () => statuses(first).length > 0).catch((e) => {
      throw new Error(`${e}
${output.slice(-4000)}`);
    });
    expect(posts()).toHaveLength(1);
    const body = comments[0]!.body;
    expect(body.startsWith(`<!-- plumb:diff ${NS}/shop -->`)).toBe(true);
    expect(body).toContain("-        - image: gcr.io/google-samples/gb-frontend:v5");
    expect(body).toContain("+        - image: gcr.io/google-samples/gb-frontend:v9");
    expect(posts()[0]!.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(statuses(first)[0]!.body).toEqual({
      state: "success",
      description: "previewed",
      context: `plumb/${NS}/shop`,
    });

    const second = await pushHead("gb-frontend:v10");
    expect((await send("synchronize", second)).status).toBe(202);
    await waitFor("status on the second head", async () => statuses(second).length > 0);
    expect(posts()).toHaveLength(1);
    expect(patches().map((r) => r.path)).toEqual([
      `/repos/org/shop/issues/comments/${comments[0]!.id}`,
    ]);
    expect(comments).toHaveLength(1);
    expect(comments[0]!.body).toContain("+        - image: gcr.io/google-samples/gb-frontend:v10");

    const seen = forge.received.length;
    const closed = await send("closed", second);
    expect(closed.status).toBe(202);
    expect(await closed.json()).toMatchObject({ ignored: true });
    expect(forge.received.length).toBe(seen);

    // Nothing applied: the live image is main's; the App got only Events.
    expect(await deploymentImage(NS, "guestbook-ui")).toBe("gcr.io/google-samples/gb-frontend:v5");
    const app = await getApp(NS, "shop");
    expect(app.metadata.resourceVersion).toBe(before);
    const events = await kubePort().listEvents(app, 20);
    expect(events.filter((e) => e.reason === "PullRequestPreviewed").map((e) => e.type)).toContain(
      "Normal",
    );
  });
  it("a head that does not render gets a failure status with the reason, in the same comment", async () => {
    const { writeFileSync } = await import("node:fs");
    writeFileSync(join(repo.workDir, FILE), "kind: Deployment\nmetadata: [not, a, map\n");
    await repo.git("commit", "--quiet", "-am", "broken manifest");
    await repo.git("push", "--quiet", "--force", "origin", "HEAD:refs/pull/1/head");
    const broken = await repo.head();
    expect((await send("synchronize", broken)).status).toBe(202);
    await waitFor("status on the broken head", async () => statuses(broken).length > 0);
    const status = statuses(broken)[0]!.body as Record<string, string>;
    expect(status.state).toBe("failure");
    expect(status.context).toBe(`plumb/${NS}/shop`);
    expect(status.description).toMatch(/^RenderFailed: /);
    expect(posts()).toHaveLength(1);
    expect(comments).toHaveLength(1);
    expect(comments[0]!.body).toContain(
      `### plumb: ${NS}/shop cannot be previewed\n\n**RenderFailed**`,
    );
  });

  it("the webhook secret and the forge token are masked in the comment, absent from statuses and the output", async () => {
    const { writeFileSync } = await import("node:fs");
    const secrets = [SECRET, TOKEN];
    const leaky = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "leaky" },
      data: Object.fromEntries(
        secrets.flatMap((v, i) => [
          [`plain-${i}`, v],
          [`base64-${i}`, Buffer.from(v).toString("base64")],
          [`url-${i}`, encodeURIComponent(v)],
        ]),
      ),
    };
    // The previous test left a manifest that does not render: main's again, and the ConfigMap.
    writeFileSync(join(repo.workDir, FILE), fixtureFiles(join(REAL_FIXTURES, "guestbook"))[FILE]!);
    writeFileSync(join(repo.workDir, "leaky.yaml"), JSON.stringify(leaky));
    await repo.git("add", FILE, "leaky.yaml");
    await repo.git("commit", "--quiet", "-m", "leaky");
    await repo.git("push", "--quiet", "--force", "origin", "HEAD:refs/pull/1/head");
    const head = await repo.head();
    expect((await send("synchronize", head)).status).toBe(202);
    await waitFor("status on the head", async () => statuses(head).length > 0);
    const body = comments[0]!.body;
    expect(body).toContain("+++ b/v1/ConfigMap/pr-preview/leaky");
    for (const key of Object.keys(leaky.data)) expect(body).toContain(`+  ${key}: [redacted]\n`);
    const texts = {
      output,
      comments: comments.map((c) => c.body).join("\n"),
      statuses: forge.received
        .filter((r) => r.path.includes("/statuses/"))
        .map((r) => JSON.stringify(r.body))
        .join("\n"),
    };
    expect(texts.output).toContain("pull request previewed");
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
