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

describe("previewsPullRequest", () => {
  it("previews opened, synchronize and reopened; not closed or labeled", () => {
    expect(
      ["opened", "synchronize", "reopened", "closed", "labeled"].map(previewsPullRequest),
    ).toEqual([true, true, true, false, false]);
  });
});
