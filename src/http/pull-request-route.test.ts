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
