// What the pull-request e2e files share: the comment APIs of GitLab (merge request notes) and
// Gitea (issue comments) as a local receiver answers them, the forges' documented webhook
// payloads (test/fixtures/webhooks, sources in SOURCES.md) pointed at a test repository, their
// authentication headers, and a push of a pull request's head.
import { createHmac } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { TestRepo } from "./git-server.ts";
import type { Received } from "./receiver.ts";

const FIXTURES = join(resolve(import.meta.dirname, "../.."), "test/fixtures/webhooks");

/** A comment as the fake forge keeps it; `at` is the forge that holds it. */
export type ForgeComment = { id: number; body: string; at: "gitlab" | "gitea" };

/**
 * The comment APIs of GitLab project `gitlab` (notes of merge request !1) and Gitea repository
 * `gitea` (comments of pull request #1), both `owner/name`, kept in `comments`; ids from
 * `firstId`. `handle` is a receiver's responder: undefined for any other request.
 */
export function forgeComments(gitlab: string, gitea: string, firstId: number) {
  const comments: ForgeComment[] = [];
  const notesRe = new RegExp(`^/projects/${gitlab}/merge_requests/1/notes(?:/(\\d+))?(\\?.*)?$`);
  const issueRe = new RegExp(`^/repos/${gitea}/issues/1/comments(\\?.*)?$`);
  const editRe = new RegExp(`^/repos/${gitea}/issues/comments/(\\d+)$`);
  function handle(r: Received) {
    const body = (r.body as { body?: string }).body ?? "";
    const path = r.path.replace(/%2F/gi, "/");
    const notes = notesRe.exec(path);
    const issue = issueRe.exec(path);
    const edit = editRe.exec(path);
    const at = notes ? "gitlab" : "gitea";
    if (r.method === "GET" && (notes || issue)) {
      return { status: 200, json: comments.filter((c) => c.at === at) };
    }
    if (r.method === "POST" && ((notes && !notes[1]) || issue)) {
      const c: ForgeComment = { id: firstId + comments.length, body, at };
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
  return { comments, handle };
}

/** GitLab's documented Merge Request Hook for !1 of the repository at `url`, with `action`. */
export function gitlabDelivery(url: string, action: string, head: string, oldrev?: string): string {
  const p = JSON.parse(readFileSync(join(FIXTURES, "gitlab-merge-request-1.json"), "utf8"));
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

/** Gitea's PullRequestPayload fixture for #1 of the repository at `url`, with `action`. */
export function giteaDelivery(url: string, action: string, head: string): string {
  const p = JSON.parse(readFileSync(join(FIXTURES, "gitea-pull-request-opened.json"), "utf8"));
  const repo = { clone_url: url, html_url: url.replace(/\.git$/, ""), ssh_url: null };
  Object.assign(p.repository, repo, { default_branch: "main" });
  Object.assign(p, { action, number: 1 });
  Object.assign(p.pull_request, { number: 1, state: action === "closed" ? "closed" : "open" });
  p.pull_request.head.sha = head;
  p.pull_request.head.ref = "feature";
  p.pull_request.base.ref = "main";
  return JSON.stringify(p);
}

/**
 * POSTs `body` to `${base}/webhooks/${provider}` authenticated as the forge does: GitLab's
 * X-Gitlab-Token, Gitea's X-Gitea-Signature (HMAC-SHA256 of the body, hex).
 */
export function sendForgeDelivery(
  base: string,
  provider: "gitlab" | "gitea",
  body: string,
  secrets: { gitlabToken: string; giteaSecret: string },
): Promise<Response> {
  const headers: Record<string, string> =
    provider === "gitlab"
      ? { "X-Gitlab-Event": "Merge Request Hook", "X-Gitlab-Token": secrets.gitlabToken }
      : {
          "X-Gitea-Event": "pull_request",
          "X-Gitea-Signature": createHmac("sha256", secrets.giteaSecret).update(body).digest("hex"),
        };
  return fetch(`${base}/webhooks/${provider}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body,
  });
}

/** Writes `content` to `file`, commits it and force-pushes it as `headRef`; returns the commit. */
export async function pushHead(
  repo: TestRepo,
  headRef: string,
  file: string,
  content: string,
): Promise<string> {
  writeFileSync(join(repo.workDir, file), content);
  await repo.git("commit", "--quiet", "-am", "change");
  await repo.git("push", "--quiet", "--force", "origin", `HEAD:${headRef}`);
  return repo.head();
}
