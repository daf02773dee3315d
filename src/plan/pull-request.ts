// A pull request's preview comment: the hidden marker that finds it again, its body cut at
// the forge's limit, and the REST requests (GitHub, GitLab, Gitea) that list, create and
// update it. Pure.
import type { CommitStatusProvider } from "./commit-status.ts";
import type { DiffReport } from "./diff-report.ts";
import { diffSummary, formatDiff } from "./diff-report.ts";

/** GitHub's longest issue comment body: 65 536 characters. */
export const GITHUB_COMMENT_MAX = 65_536;

/**
 * The longest comment body per forge: GitHub 65 536 characters; GitLab 1 000 000 (the Notes
 * API's `body`, "Limited to 1,000,000 characters", https://docs.gitlab.com/api/notes/);
 * Gitea documents none, so GitHub's is kept there.
 */
export const COMMENT_MAX: Record<CommitStatusProvider, number> = {
  github: GITHUB_COMMENT_MAX,
  gitlab: 1_000_000,
  gitea: GITHUB_COMMENT_MAX,
};

/** `<!-- plumb:diff NAMESPACE/NAME -->`: the first line of an App's comment, invisible. */
export function diffMarker(app: string): string {
  return `<!-- plumb:diff ${app} -->`;
}

/** What a pull request's preview of one App found: a report, or the failing step's reason. */
export type PreviewResult =
  | { ok: true; report: DiffReport }
  | { ok: false; app: string; reason: string; error: string };

/**
 * The comment body for one App: the marker, a heading, then formatDiff's text in a ```diff
 * block ("No change." when nothing would change), or the failure's reason and message. The
 * whole body stays within `maxChars` (default GitHub's 65 536): formatDiff leaves whole
 * objects out and counts them in its last line.
 */
export function commentBody(result: PreviewResult, maxChars = GITHUB_COMMENT_MAX): string {
  if (!result.ok) {
    const head = `${diffMarker(result.app)}\n### plumb: ${result.app} cannot be previewed\n\n`;
    const text = `**${result.reason}**: ${result.error}`;
    return (head + text).slice(0, maxChars);
  }
  const { report } = result;
  const head = `${diffMarker(report.app)}\n### plumb: ${report.app}: ${diffSummary(report)}\n\n`;
  if (report.objects.length === 0) return `${head}No change.\n`;
  const open = "```diff\n";
  const close = "```\n";
  const room = maxChars - head.length - open.length - close.length;
  return `${head}${open}${formatDiff(report, { maxChars: room }).text}${close}`;
}

/** A comment as the forge's list-comments API gives it (the fields read here). */
export interface ForgeComment {
  id: number;
  body?: string | null;
}

/** The first comment whose body starts with the App's marker, or undefined. */
export function findMarkedComment(
  comments: readonly ForgeComment[],
  app: string,
): ForgeComment | undefined {
  const marker = diffMarker(app);
  return comments.find((c) => typeof c.body === "string" && c.body.startsWith(marker));
}

/**
 * GitHub's issue-comment endpoints of pull request `number` in `owner/repo`
 * (https://docs.github.com/en/rest/issues/comments): list (GET, 100 per page), create
 * (POST), and update of comment `id` (PATCH).
 */
export function githubCommentUrls(apiUrl: string, path: string, number: number) {
  const [owner, repo] = path.split("/").slice(-2).map(encodeURIComponent);
  const base = `${apiUrl}/repos/${owner}/${repo}/issues`;
  return {
    list: (page: number) => `${base}/${number}/comments?per_page=100&page=${page}`,
    create: `${base}/${number}/comments`,
    update: (id: number) => `${base}/comments/${id}`,
  };
}

/**
 * How a forge's API lists, creates and updates the comments of pull (merge) request `number`
 * of the repository at `path` ("org/repo"; GitLab: the whole "group/sub/repo"):
 * - GitHub issue comments (https://docs.github.com/en/rest/issues/comments): GET
 *   .../issues/{n}/comments, POST the same, PATCH .../issues/comments/{id};
 * - GitLab merge request notes (https://docs.gitlab.com/api/notes/#merge-requests): GET/POST
 *   /projects/{URL-encoded path}/merge_requests/{iid}/notes, PUT .../notes/{id};
 * - Gitea issue comments (Gitea API /api/swagger, issueGetComments, issueCreateComment,
 *   issueEditComment): GET/POST /repos/{owner}/{repo}/issues/{index}/comments, PATCH
 *   /repos/{owner}/{repo}/issues/comments/{id}.
 * Each takes `{"body": text}`. `pageSize` is the list's page size (GitHub and GitLab allow 100;
 * Gitea's `limit` is capped by its MAX_RESPONSE_ITEMS, 50 by default); a shorter page is the last.
 * `headers(token)` authenticates as the provider documents: `Authorization: Bearer`,
 * `PRIVATE-TOKEN`, `Authorization: token`.
 */
export function forgeCommentApi(
  provider: CommitStatusProvider,
  apiUrl: string,
  path: string,
  number: number,
) {
  const json = { "content-type": "application/json", "user-agent": "plumb" };
  if (provider === "github") {
    const urls = githubCommentUrls(apiUrl, path, number);
    return {
      ...urls,
      pageSize: 100,
      updateMethod: "PATCH",
      headers: (token: string): Record<string, string> => ({
        ...json,
        accept: "application/vnd.github+json",
        authorization: `Bearer ${token}`,
        "x-github-api-version": "2022-11-28",
      }),
    };
  }
  if (provider === "gitlab") {
    const base = `${apiUrl}/projects/${encodeURIComponent(path)}/merge_requests/${number}/notes`;
    return {
      list: (page: number) => `${base}?per_page=100&page=${page}`,
      create: base,
      update: (id: number) => `${base}/${id}`,
      pageSize: 100,
      updateMethod: "PUT",
      headers: (token: string): Record<string, string> => ({ ...json, "private-token": token }),
    };
  }
  const [owner, repo] = path.split("/").slice(-2).map(encodeURIComponent);
  const base = `${apiUrl}/repos/${owner}/${repo}/issues`;
  return {
    list: (page: number) => `${base}/${number}/comments?limit=50&page=${page}`,
    create: `${base}/${number}/comments`,
    update: (id: number) => `${base}/comments/${id}`,
    pageSize: 50,
    updateMethod: "PATCH",
    headers: (token: string): Record<string, string> => ({
      ...json,
      authorization: `token ${token}`,
    }),
  };
}
