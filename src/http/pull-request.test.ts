import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { appMatchesPush } from "./match.ts";
import { parsePullRequest, previewsPullRequest } from "./webhooks.ts";

const FIXTURE = join(
  import.meta.dirname,
  "../../test/fixtures/webhooks/github-pull-request-opened.json",
);
const payload = JSON.parse(readFileSync(FIXTURE, "utf8"));

describe("parsePullRequest", () => {
  it("reads GitHub's documented pull_request payload", () => {
    const r = parsePullRequest(payload);
    expect(r.ok && r.value).toEqual({
      provider: "github",
      action: "opened",
      state: "open",
      number: 2,
      repoUrls: [
        "https://github.com/Codertocat/Hello-World.git",
        "git@github.com:Codertocat/Hello-World.git",
        "git://github.com/Codertocat/Hello-World.git",
        "https://github.com/Codertocat/Hello-World",
        "https://api.github.com/repos/Codertocat/Hello-World",
      ],
      ref: "refs/heads/master",
      defaultBranch: "master",
      headSha: "ec26c3e57ca3a959ca5aad62de7213c562f8c821",
      headBranch: "changes",
      headRef: "refs/pull/2/head",
    });
  });

  it("matches Apps on the base branch or HEAD, not on other branches or repositories", () => {
    const r = parsePullRequest(payload);
    if (!r.ok) throw new Error("not parsed");
    const url = "https://github.com/codertocat/hello-world";
    expect(appMatchesPush({ url, ref: "master" }, r.value)).toBe(true);
    expect(appMatchesPush({ url }, r.value)).toBe(true);
    expect(appMatchesPush({ url, ref: "changes" }, r.value)).toBe(false);
    expect(appMatchesPush({ url: `${url}-copy`, ref: "master" }, r.value)).toBe(false);
  });

  it("refuses a payload without a head SHA, naming the field", () => {
    const bad = structuredClone(payload);
    delete bad.pull_request.head.sha;
    const r = parsePullRequest(bad);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error.map((i) => i.path)).toContain("body.pull_request.head.sha");
  });
});

const fixture = (name: string) =>
  JSON.parse(readFileSync(join(import.meta.dirname, "../../test/fixtures/webhooks", name), "utf8"));

describe("parsePullRequest: GitLab merge requests", () => {
  const mr = fixture("gitlab-merge-request-1.json");

  it("reads GitLab's documented Merge Request Hook payload", () => {
    const r = parsePullRequest(mr, "gitlab");
    expect(r.ok && r.value).toEqual({
      provider: "gitlab",
      action: "opened",
      state: "open",
      number: 1,
      repoUrls: [
        "http://example.com/gitlabhq/gitlab-test.git",
        "git@example.com:gitlabhq/gitlab-test.git",
        "http://example.com/gitlabhq/gitlab-test",
        "http://example.com/awesome_space/awesome_project.git",
        "git@example.com:awesome_space/awesome_project.git",
        "http://example.com/awesome_space/awesome_project",
      ],
      ref: "refs/heads/master",
      defaultBranch: "master",
      headSha: "da1560886d4f094c3e6c9ef40349f7d38b5d27d7",
      headBranch: "ms-viewport",
      headRef: "refs/merge-requests/1/head",
    });
  });

  it("reads update with oldrev as synchronize, update without as update, merge and close as closed", () => {
    const as = (action: string, extra: Record<string, unknown> = {}) => {
      const p = structuredClone(mr);
      Object.assign(p.object_attributes, { action, ...extra });
      const r = parsePullRequest(p, "gitlab");
      return r.ok ? [r.value.action, r.value.state] : r.error;
    };
    expect(as("update", { oldrev: "0123456789abcdef0123456789abcdef01234567" })).toEqual([
      "synchronize",
      "open",
    ]);
    expect(as("update")).toEqual(["update", "open"]);
    expect(as("reopen")).toEqual(["reopened", "open"]);
    expect(as("close", { state: "closed" })).toEqual(["closed", "closed"]);
    expect(as("merge", { state: "merged" })).toEqual(["closed", "merged"]);
    expect(["synchronize", "update", "closed"].map(previewsPullRequest)).toEqual([
      true,
      false,
      false,
    ]);
  });

  it("matches Apps on the target project's target branch", () => {
    const r = parsePullRequest(mr, "gitlab");
    if (!r.ok) throw new Error("not parsed");
    const url = "http://example.com/awesome_space/awesome_project.git";
    expect(appMatchesPush({ url, ref: "master" }, r.value)).toBe(true);
    expect(appMatchesPush({ url, ref: "ms-viewport" }, r.value)).toBe(false);
  });

  it("refuses a payload without last_commit, naming the field", () => {
    const bad = structuredClone(mr);
    delete bad.object_attributes.last_commit;
    const r = parsePullRequest(bad, "gitlab");
    expect(!r.ok && r.error.map((i) => i.path)).toContain("body.object_attributes.last_commit");
  });
});

describe("parsePullRequest: Gitea pull requests", () => {
  const pr = fixture("gitea-pull-request-opened.json");

  it("reads a PullRequestPayload", () => {
    const r = parsePullRequest(pr, "gitea");
    expect(r.ok && r.value).toEqual({
      provider: "gitea",
      action: "opened",
      state: "open",
      number: 2,
      repoUrls: [
        "http://localhost:3000/gitea/webhooks.git",
        "ssh://gitea@localhost:2222/gitea/webhooks.git",
        "http://localhost:3000/gitea/webhooks",
      ],
      ref: "refs/heads/main",
      defaultBranch: "main",
      headSha: "bffeb74224043ba2feb48d137756c8a9331c449a",
      headBranch: "develop",
      headRef: "refs/pull/2/head",
    });
  });

  it("reads synchronized as synchronize and a merged close as merged", () => {
    const as = (action: string, extra: Record<string, unknown> = {}) => {
      const p = structuredClone(pr);
      p.action = action;
      Object.assign(p.pull_request, extra);
      const r = parsePullRequest(p, "gitea");
      return r.ok ? [r.value.action, r.value.state] : r.error;
    };
    expect(as("synchronized")).toEqual(["synchronize", "open"]);
    expect(as("closed", { state: "closed", merged: true })).toEqual(["closed", "merged"]);
    expect(as("closed", { state: "closed" })).toEqual(["closed", "closed"]);
  });
});

describe("previewsPullRequest", () => {
  it("previews opened, synchronize and reopened; not closed or labeled", () => {
    expect(
      ["opened", "synchronize", "reopened", "closed", "labeled"].map(previewsPullRequest),
    ).toEqual([true, true, true, false, false]);
  });
});
