// A pull request's preview comment: the hidden marker that finds it again, its body cut at
// the forge's limit, and the GitHub REST requests that list, create and update it. Pure.
import type { DiffReport } from "./diff-report.ts";
import { diffSummary, formatDiff } from "./diff-report.ts";

/** GitHub's longest issue comment body: 65 536 characters. */
export const GITHUB_COMMENT_MAX = 65_536;

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
