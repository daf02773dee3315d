import { createHmac } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { FakeKube, testApp } from "../../test/support/fake-kube.ts";
import { createHttpApp } from "./app.ts";
import type { PullRequestTarget } from "./types.ts";
import type { PullRequestEvent } from "./webhooks.ts";

const SECRET = "gh-secret-of-the-test";
const FIXTURE = path.resolve(
  import.meta.dirname,
  "../../test/fixtures/webhooks/github-pull-request-opened.json",
);
const URL = "https://github.com/Codertocat/Hello-World.git";
const APPS = [
  testApp("team-a", "base", { url: URL, ref: "master" }),
  testApp("team-a", "head", { url: URL, ref: "HEAD" }),
  testApp("team-a", "branch", { url: URL, ref: "changes" }),
  testApp("team-b", "other", { url: "https://github.com/Codertocat/Other.git", ref: "master" }),
];

function setup() {
  const kube = new FakeKube(APPS);
  const previews: Array<{ apps: PullRequestTarget[]; pr: PullRequestEvent }> = [];
  const deferred: Array<Promise<unknown>> = [];
  const app = createHttpApp({
    apps: kube,
    config: { apiTokens: [], githubWebhookSecret: SECRET },
    trigger: kube.trigger,
    now: () => new Date("2026-03-04T05:06:07Z"),
    defer: (t) => deferred.push(t),
    async previewPullRequest(apps, pr) {
      previews.push({ apps, pr });
    },
  });
  const send = (body: string, secret = SECRET) =>
    app.request("/webhooks/github", {
      method: "POST",
      body,
      headers: {
        "content-type": "application/json",
        "X-GitHub-Event": "pull_request",
        "X-Hub-Signature-256": `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`,
      },
    });
  return { kube, send, previews, deferred };
}

const payload = (action: string) => {
  const p = JSON.parse(readFileSync(FIXTURE, "utf8"));
  p.action = action;
  return JSON.stringify(p);
};

describe("POST /webhooks/github pull_request", () => {
  it("answers 202 with the Apps on the base branch and previews them after the answer", async () => {
    const { send, previews, deferred, kube } = setup();
    const res = await send(payload("opened"));
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({
      apps: ["team-a/base", "team-a/head"],
      number: 2,
      head: "ec26c3e57ca3a959ca5aad62de7213c562f8c821",
    });
    expect(deferred).toHaveLength(1);
    expect(previews[0]?.apps.map((a) => a.url)).toEqual([URL, URL]);
    expect(previews[0]?.pr.headRef).toBe("refs/pull/2/head");
    expect(kube.calls.trigger).toEqual([]);
  });

  it("a closed pull request previews nothing", async () => {
    const { send, previews } = setup();
    const res = await send(payload("closed"));
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({
      ignored: true,
      event: "pull_request",
      reason: "action closed",
    });
    expect(previews).toEqual([]);
  });

  it("a wrong signature is 401 and previews nothing", async () => {
    const { send, previews } = setup();
    expect((await send(payload("opened"), "wrong")).status).toBe(401);
    expect(previews).toEqual([]);
  });
});

describe("POST /webhooks/gitlab Merge Request Hook and /webhooks/gitea pull_request", () => {
  const GL_URL = "http://example.com/awesome_space/awesome_project.git";
  const GT_URL = "http://localhost:3000/gitea/webhooks.git";
  const fixture = (name: string) =>
    JSON.parse(
      readFileSync(path.resolve(import.meta.dirname, "../../test/fixtures/webhooks", name), "utf8"),
    );

  function forges() {
    const kube = new FakeKube([
      testApp("team-a", "gl", { url: GL_URL, ref: "master" }),
      testApp("team-a", "gt", { url: GT_URL, ref: "main" }),
    ]);
    const previews: Array<{ apps: PullRequestTarget[]; pr: PullRequestEvent }> = [];
    const app = createHttpApp({
      apps: kube,
      config: { apiTokens: [], gitlabWebhookToken: "gl-token", giteaWebhookSecret: "gt-secret" },
      trigger: kube.trigger,
      now: () => new Date("2026-03-04T05:06:07Z"),
      defer: () => {},
      async previewPullRequest(apps, pr) {
        previews.push({ apps, pr });
      },
    });
    return { app, previews, kube };
  }

  it("a GitLab merge request opened previews the Apps on its target branch", async () => {
    const { app, previews, kube } = forges();
    const res = await app.request("/webhooks/gitlab", {
      method: "POST",
      body: JSON.stringify(fixture("gitlab-merge-request-1.json")),
      headers: {
        "content-type": "application/json",
        "X-Gitlab-Event": "Merge Request Hook",
        "X-Gitlab-Token": "gl-token",
      },
    });
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({
      apps: ["team-a/gl"],
      number: 1,
      head: "da1560886d4f094c3e6c9ef40349f7d38b5d27d7",
    });
    expect(previews[0]?.pr).toMatchObject({
      provider: "gitlab",
      headRef: "refs/merge-requests/1/head",
    });
    expect(kube.calls.trigger).toEqual([]);
  });

  it("a GitLab merge request with a wrong token is 401; a merged one previews nothing", async () => {
    const { app, previews } = forges();
    const send = (body: unknown, token: string) =>
      app.request("/webhooks/gitlab", {
        method: "POST",
        body: JSON.stringify(body),
        headers: {
          "content-type": "application/json",
          "X-Gitlab-Event": "Merge Request Hook",
          "X-Gitlab-Token": token,
        },
      });
    const mr = fixture("gitlab-merge-request-1.json");
    expect((await send(mr, "wrong")).status).toBe(401);
    mr.object_attributes.action = "merge";
    mr.object_attributes.state = "merged";
    const res = await send(mr, "gl-token");
    expect(await res.json()).toEqual({
      ignored: true,
      event: "Merge Request Hook",
      reason: "action closed",
    });
    expect(previews).toEqual([]);
  });

  it("a Gitea (or Forgejo) pull request is verified by its HMAC and previews the base branch's Apps", async () => {
    const { app, previews } = forges();
    const send = (body: string, prefix: "Gitea" | "Forgejo", secret = "gt-secret") =>
      app.request("/webhooks/gitea", {
        method: "POST",
        body,
        headers: {
          "content-type": "application/json",
          [`X-${prefix}-Event`]: "pull_request",
          [`X-${prefix}-Signature`]: createHmac("sha256", secret).update(body).digest("hex"),
        },
      });
    const body = JSON.stringify(fixture("gitea-pull-request-opened.json"));
    expect((await send(body, "Gitea", "wrong")).status).toBe(401);
    const res = await send(body, "Gitea");
    expect(res.status).toBe(202);
    expect(await res.json()).toMatchObject({ apps: ["team-a/gt"], number: 2 });
    expect((await send(body, "Forgejo")).status).toBe(202);
    expect(previews.map((p) => [p.pr.provider, p.pr.headRef])).toEqual([
      ["gitea", "refs/pull/2/head"],
      ["gitea", "refs/pull/2/head"],
    ]);
  });
});
