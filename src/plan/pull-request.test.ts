import { describe, expect, it } from "vitest";
import type { DiffReport } from "./diff-report.ts";
import {
  COMMENT_MAX,
  commentBody,
  diffMarker,
  findMarkedComment,
  forgeCommentApi,
  GITHUB_COMMENT_MAX,
  githubCommentUrls,
} from "./pull-request.ts";

function report(objects: DiffReport["objects"]): DiffReport {
  const counts = { create: 0, change: 0, prune: 0, fail: 0 };
  for (const o of objects) counts[o.action]++;
  return { app: "team/web", revision: "a".repeat(40), counts, objects };
}

const change = (name: string, diff: string): DiffReport["objects"][number] => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  namespace: "team",
  name,
  action: "change",
  diff,
});

describe("commentBody", () => {
  it("starts with the App's marker and says no change when there is none", () => {
    const body = commentBody({ ok: true, report: report([]) });
    expect(body).toBe(
      "<!-- plumb:diff team/web -->\n### plumb: team/web: no changes\n\nNo change.\n",
    );
  });

  it("carries each object's diff in a diff block", () => {
    const diff = "--- a/x\n+++ b/x\n-  image: web:v1\n+  image: web:v2\n";
    const body = commentBody({ ok: true, report: report([change("web", diff)]) });
    expect(body.startsWith(diffMarker("team/web"))).toBe(true);
    expect(body).toContain("0 to create, 1 to change, 0 to prune");
    expect(body).toContain(`\`\`\`diff\nteam/web at aaaaaaa`);
    expect(body).toContain("-  image: web:v1\n+  image: web:v2\n```\n");
  });

  it("stays within the limit and counts the objects it leaves out", () => {
    const big = `--- a/x\n+++ b/x\n${"+x\n".repeat(10_000)}`;
    const objects = [change("a", big), change("b", big), change("c", big)];
    const body = commentBody({ ok: true, report: report(objects) });
    expect(body.length).toBeLessThanOrEqual(GITHUB_COMMENT_MAX);
    expect(body).toContain("… 1 more object left out (plumb diff shows them all)\n```\n");
    const small = commentBody({ ok: true, report: report(objects) }, 1_000);
    expect(small.length).toBeLessThanOrEqual(1_000);
    expect(small).toContain("… 3 more objects left out");
  });

  it("names a failure's reason and message", () => {
    const body = commentBody({ ok: false, app: "team/web", reason: "RenderFailed", error: "bad" });
    expect(body).toBe(
      "<!-- plumb:diff team/web -->\n### plumb: team/web cannot be previewed\n\n**RenderFailed**: bad",
    );
  });
});

describe("findMarkedComment", () => {
  it("finds the comment that starts with the App's marker, not another App's", () => {
    const comments = [
      { id: 1, body: "looks good" },
      { id: 2, body: `${diffMarker("team/web-2")}\n…` },
      { id: 3, body: null },
      { id: 4, body: `${diffMarker("team/web")}\n…` },
    ];
    expect(findMarkedComment(comments, "team/web")?.id).toBe(4);
    expect(findMarkedComment(comments, "team/api")).toBeUndefined();
  });
});

describe("githubCommentUrls", () => {
  it("uses GitHub's issue-comment endpoints", () => {
    const u = githubCommentUrls("https://api.github.com", "org/repo", 7);
    expect(u.list(2)).toBe(
      "https://api.github.com/repos/org/repo/issues/7/comments?per_page=100&page=2",
    );
    expect(u.create).toBe("https://api.github.com/repos/org/repo/issues/7/comments");
    expect(u.update(42)).toBe("https://api.github.com/repos/org/repo/issues/comments/42");
  });
});

describe("forgeCommentApi", () => {
  it("uses GitLab's merge request notes, PUT to update, PRIVATE-TOKEN", () => {
    const a = forgeCommentApi("gitlab", "https://gitlab.example/api/v4", "group/sub/repo", 3);
    const base = "https://gitlab.example/api/v4/projects/group%2Fsub%2Frepo/merge_requests/3/notes";
    expect(a.list(1)).toBe(`${base}?per_page=100&page=1`);
    expect(a.create).toBe(base);
    expect(a.update(17)).toBe(`${base}/17`);
    expect(a.updateMethod).toBe("PUT");
    expect(a.headers("tok")["private-token"]).toBe("tok");
    expect(a.headers("tok")["authorization"]).toBeUndefined();
  });

  it("uses Gitea's issue comments, PATCH to update, Authorization: token", () => {
    const a = forgeCommentApi("gitea", "http://gitea.local/api/v1", "org/repo", 5);
    expect(a.list(2)).toBe(
      "http://gitea.local/api/v1/repos/org/repo/issues/5/comments?limit=50&page=2",
    );
    expect(a.create).toBe("http://gitea.local/api/v1/repos/org/repo/issues/5/comments");
    expect(a.update(9)).toBe("http://gitea.local/api/v1/repos/org/repo/issues/comments/9");
    expect([a.updateMethod, a.pageSize]).toEqual(["PATCH", 50]);
    expect(a.headers("tok")["authorization"]).toBe("token tok");
  });

  it("cuts a GitLab comment at a million characters, GitHub's and Gitea's at 65 536", () => {
    const big = `--- a/x\n+++ b/x\n${"+x\n".repeat(100_000)}`;
    const objects = [change("a", big), change("b", big), change("c", big), change("d", big)];
    const gitlab = commentBody({ ok: true, report: report(objects) }, COMMENT_MAX.gitlab);
    expect(gitlab.length).toBeGreaterThan(GITHUB_COMMENT_MAX);
    expect(gitlab.length).toBeLessThanOrEqual(1_000_000);
    expect(gitlab).toContain("… 1 more object left out");
    expect(COMMENT_MAX.gitea).toBe(GITHUB_COMMENT_MAX);
  });
});
