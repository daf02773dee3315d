// Push webhook payloads of GitHub, GitLab and Gitea, reduced to what matching needs.
import { z } from "zod";
import { toIssues } from "../app/index.ts";
import { err, type Issue, type Result } from "../core/index.ts";

export const PROVIDERS = ["github", "gitlab", "gitea"] as const;
export type Provider = (typeof PROVIDERS)[number];

/** A push, whatever the provider. */
export interface PushEvent {
  provider: Provider;
  /** Every URL the payload gives for the repository (clone, ssh, git, web). */
  repoUrls: string[];
  /** Full ref pushed: "refs/heads/main", "refs/tags/v1.2.0". */
  ref: string;
  /** Commit the ref points to after the push; all zeros when the ref was deleted. */
  after: string;
  /** The repository's default branch name, when the payload says. */
  defaultBranch?: string;
}

const url = z.string().min(1).nullish();
const push = { ref: z.string().startsWith("refs/"), after: z.string().min(1) };

/** GitHub `push` (https://docs.github.com/en/webhooks/webhook-events-and-payloads#push). */
const GitHubPush = z.looseObject({
  ...push,
  repository: z.looseObject({
    clone_url: url,
    ssh_url: url,
    git_url: url,
    html_url: url,
    svn_url: url,
    url: url,
    default_branch: z.string().nullish(),
    master_branch: z.string().nullish(),
  }),
});

const gitlabRepo = {
  git_http_url: url,
  git_ssh_url: url,
  web_url: url,
  http_url: url,
  ssh_url: url,
  url: url,
  homepage: url,
};

/** GitLab "Push Hook"/"Tag Push Hook" (GitLab docs, "Webhook events": push and tag events). */
const GitLabPush = z.looseObject({
  ...push,
  object_kind: z.enum(["push", "tag_push"]),
  project: z.looseObject({ ...gitlabRepo, default_branch: z.string().nullish() }),
  repository: z.looseObject(gitlabRepo).nullish(),
});

/** Gitea `push` (Gitea docs, "Webhooks"). */
const GiteaPush = z.looseObject({
  ...push,
  repository: z.looseObject({
    clone_url: url,
    ssh_url: url,
    html_url: url,
    default_branch: z.string().nullish(),
  }),
});

function urls(...objects: Array<Record<string, unknown> | null | undefined>): string[] {
  const out = new Set<string>();
  for (const o of objects) {
    for (const v of Object.values(o ?? {})) {
      if (typeof v === "string" && /^(https?|ssh|git):\/\/|^[^@/:]+@[^:/]+:/.test(v)) out.add(v);
    }
  }
  return [...out];
}

function event(
  provider: Provider,
  p: { ref: string; after: string },
  repoUrls: string[],
  defaultBranch: string | null | undefined,
): PushEvent {
  const e: PushEvent = { provider, repoUrls, ref: p.ref, after: p.after };
  if (defaultBranch) e.defaultBranch = defaultBranch;
  return e;
}

function pick(o: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(keys.map((k) => [k, o[k]]));
}

/**
 * Reads a push payload (already verified and JSON-parsed) of `provider`.
 * URLs come from GitHub `repository.{clone_url, ssh_url, git_url, html_url, svn_url, url}`,
 * GitLab `project.{git_http_url, git_ssh_url, web_url, http_url, ssh_url, url, homepage}` and
 * the same fields of `repository`, Gitea `repository.{clone_url, ssh_url, html_url}`.
 * The default branch is GitHub `repository.default_branch` (or the older `master_branch`),
 * GitLab `project.default_branch`, Gitea `repository.default_branch`.
 * @returns the push, or the issues (`body.`-prefixed paths) when the payload is not a push.
 */
export function parsePush(provider: Provider, payload: unknown): Result<PushEvent, Issue[]> {
  switch (provider) {
    case "github": {
      const r = GitHubPush.safeParse(payload);
      if (!r.success) return err(toIssues(r.error, "body", "InvalidRequest"));
      const repo = r.data.repository;
      const keys = ["clone_url", "ssh_url", "git_url", "html_url", "svn_url", "url"];
      const branch = repo.default_branch ?? repo.master_branch;
      return { ok: true, value: event(provider, r.data, urls(pick(repo, keys)), branch) };
    }
    case "gitlab": {
      const r = GitLabPush.safeParse(payload);
      if (!r.success) return err(toIssues(r.error, "body", "InvalidRequest"));
      const keys = Object.keys(gitlabRepo);
      const all = urls(
        pick(r.data.project, keys),
        r.data.repository && pick(r.data.repository, keys),
      );
      return { ok: true, value: event(provider, r.data, all, r.data.project.default_branch) };
    }
    case "gitea": {
      const r = GiteaPush.safeParse(payload);
      if (!r.success) return err(toIssues(r.error, "body", "InvalidRequest"));
      const repo = r.data.repository;
      const all = urls(pick(repo, ["clone_url", "ssh_url", "html_url"]));
      return { ok: true, value: event(provider, r.data, all, repo.default_branch) };
    }
  }
}

/** Whether the push deleted its ref (`after` is all zeros, as all three providers send). */
export function isRefDeletion(push: PushEvent): boolean {
  return /^0+$/.test(push.after);
}

/** A pull request event, whatever the provider: what a preview needs. */
export interface PullRequestEvent {
  provider: Provider;
  /** The action ("opened", "synchronize", "reopened", "closed", …). */
  action: string;
  /** The PR's number (GitHub, Gitea) or merge request's iid (GitLab). */
  number: number;
  /** Every URL the payload gives for the base repository. */
  repoUrls: string[];
  /** The base branch as a full ref: "refs/heads/main". */
  ref: string;
  /** The base repository's default branch, when the payload says. */
  defaultBranch?: string;
  /** The head commit's full SHA: what the commit status is set on. */
  headSha: string;
  /** The ref the base repository serves the head at: "refs/pull/N/head" on GitHub. */
  headRef: string;
}

/** GitHub `pull_request` (https://docs.github.com/en/webhooks/webhook-events-and-payloads#pull_request). */
const GitHubPullRequest = z.looseObject({
  action: z.string().min(1),
  number: z.number().int().positive(),
  pull_request: z.looseObject({
    head: z.looseObject({ sha: z.string().regex(/^[0-9a-f]{40}([0-9a-f]{24})?$/) }),
    base: z.looseObject({
      ref: z.string().min(1),
      repo: z.looseObject({
        clone_url: url,
        ssh_url: url,
        git_url: url,
        html_url: url,
        svn_url: url,
        url: url,
        default_branch: z.string().nullish(),
      }),
    }),
  }),
});

/**
 * Reads a GitHub `pull_request` payload (verified, JSON-parsed): the base repository's URLs
 * (`pull_request.base.repo.{clone_url, ssh_url, git_url, html_url, svn_url, url}`), the base
 * branch, the head SHA, and `refs/pull/<number>/head`, which GitHub serves from the base
 * repository even when the head is in a fork.
 * @returns the event, or the issues (`body.`-prefixed paths) when it is not a pull_request.
 */
export function parsePullRequest(payload: unknown): Result<PullRequestEvent, Issue[]> {
  const r = GitHubPullRequest.safeParse(payload);
  if (!r.success) return err(toIssues(r.error, "body", "InvalidRequest"));
  const { action, number, pull_request: pr } = r.data;
  const keys = ["clone_url", "ssh_url", "git_url", "html_url", "svn_url", "url"];
  const e: PullRequestEvent = {
    provider: "github",
    action,
    number,
    repoUrls: urls(pick(pr.base.repo, keys)),
    ref: `refs/heads/${pr.base.ref}`,
    headSha: pr.head.sha,
    headRef: `refs/pull/${number}/head`,
  };
  if (pr.base.repo.default_branch) e.defaultBranch = pr.base.repo.default_branch;
  return { ok: true, value: e };
}

/** Actions that bring new code to preview: opened, synchronize (a push), reopened. */
export function previewsPullRequest(action: string): boolean {
  return action === "opened" || action === "synchronize" || action === "reopened";
}
