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

/**
 * A pull request (GitHub, Gitea, Forgejo) or merge request (GitLab) event, whatever the
 * provider: one shape for previews and for anything else a PR webhook should tell
 * (parsePullRequest builds it).
 */
export interface PullRequestEvent {
  provider: Provider;
  /**
   * The action in GitHub's words: "opened", "synchronize" (new commits), "reopened", "closed"
   * (merged too: see `state`), or the provider's own word for anything else ("edited",
   * "labeled", GitLab "update" without new commits, "approved"…).
   */
  action: string;
  /** "open", "closed" or "merged" after the event. */
  state: "open" | "closed" | "merged";
  /** The PR's number (GitHub, Gitea) or merge request's iid (GitLab). */
  number: number;
  /** Every URL the payload gives for the base (target) repository. */
  repoUrls: string[];
  /** The base branch as a full ref: "refs/heads/main". */
  ref: string;
  /** The base repository's default branch, when the payload says. */
  defaultBranch?: string;
  /** The head commit's full SHA: what the commit status is set on. */
  headSha: string;
  /** The head branch's name in the head repository (maybe a fork): "feature". */
  headBranch: string;
  /**
   * The ref the base repository serves the head at, fork or not: "refs/pull/N/head" on GitHub
   * and Gitea, "refs/merge-requests/N/head" on GitLab.
   */
  headRef: string;
}

const sha = z.string().regex(/^[0-9a-f]{40}([0-9a-f]{24})?$/);
const githubRepoKeys = ["clone_url", "ssh_url", "git_url", "html_url", "svn_url", "url"] as const;

/** GitHub `pull_request` (https://docs.github.com/en/webhooks/webhook-events-and-payloads#pull_request). */
const GitHubPullRequest = z.looseObject({
  action: z.string().min(1),
  number: z.number().int().positive(),
  pull_request: z.looseObject({
    state: z.string().nullish(),
    merged: z.boolean().nullish(),
    head: z.looseObject({ sha, ref: z.string().nullish() }),
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
 * GitLab "Merge Request Hook" (https://docs.gitlab.com/user/project/integrations/webhook_events/#merge-request-events):
 * `object_attributes.{iid, action, state, target_branch, source_branch, last_commit.id,
 * oldrev, target}` and `project`.
 */
const GitLabMergeRequest = z.looseObject({
  object_kind: z.literal("merge_request"),
  project: z.looseObject({ ...gitlabRepo, default_branch: z.string().nullish() }),
  object_attributes: z.looseObject({
    iid: z.number().int().positive(),
    action: z.string().nullish(),
    state: z.string().nullish(),
    target_branch: z.string().min(1),
    source_branch: z.string().nullish(),
    oldrev: z.string().nullish(),
    last_commit: z.looseObject({ id: sha }),
    target: z.looseObject({ ...gitlabRepo, default_branch: z.string().nullish() }).nullish(),
  }),
});

/**
 * Gitea/Forgejo `pull_request`: PullRequestPayload `{action, number, pull_request,
 * repository}` with PullRequest's `state`, `merged`, `head`/`base` PRBranchInfo `{ref, sha,
 * repo}` (go-gitea/gitea modules/structs/hook.go and pull.go).
 */
const GiteaPullRequest = z.looseObject({
  action: z.string().min(1),
  number: z.number().int().positive(),
  pull_request: z.looseObject({
    state: z.string().nullish(),
    merged: z.boolean().nullish(),
    head: z.looseObject({ sha, ref: z.string().nullish() }),
    base: z.looseObject({ ref: z.string().min(1) }),
  }),
  repository: z.looseObject({
    clone_url: url,
    ssh_url: url,
    html_url: url,
    default_branch: z.string().nullish(),
  }),
});

/** GitLab's merge request actions in GitHub's words; `update` is "synchronize" only with `oldrev` (new commits). */
function gitlabAction(action: string | null | undefined, oldrev: string | null | undefined) {
  switch (action) {
    case "open":
      return "opened";
    case "reopen":
      return "reopened";
    case "close":
    case "merge":
      return "closed";
    case "update":
      return oldrev ? "synchronize" : "update";
    default:
      return action ?? "unknown";
  }
}

function prState(state: string | null | undefined, merged: boolean | null | undefined) {
  if (merged || state === "merged") return "merged" as const;
  return state === "closed" ? ("closed" as const) : ("open" as const);
}

/**
 * Reads a pull request payload (verified, JSON-parsed) of `provider` into one
 * {@link PullRequestEvent}:
 * - GitHub `pull_request`: the base repository's URLs (`pull_request.base.repo.{clone_url,
 *   ssh_url, git_url, html_url, svn_url, url}`), `refs/pull/<number>/head`;
 * - GitLab "Merge Request Hook": the URLs of `project` and `object_attributes.target`, head
 *   `object_attributes.last_commit.id`, `refs/merge-requests/<iid>/head` (GitLab keeps it in
 *   the target project, fork or not); actions open/reopen/close/merge and update-with-oldrev
 *   read as opened/reopened/closed/synchronize;
 * - Gitea/Forgejo `pull_request`: `repository.{clone_url, ssh_url, html_url}`,
 *   `refs/pull/<number>/head`; "synchronized" reads as "synchronize".
 * @returns the event, or the issues (`body.`-prefixed paths) when the payload is not one.
 */
export function parsePullRequest(
  payload: unknown,
  provider: Provider = "github",
): Result<PullRequestEvent, Issue[]> {
  switch (provider) {
    case "github": {
      const r = GitHubPullRequest.safeParse(payload);
      if (!r.success) return err(toIssues(r.error, "body", "InvalidRequest"));
      const { action, number, pull_request: pr } = r.data;
      return ok({
        provider,
        action,
        state: prState(pr.state, pr.merged),
        number,
        repoUrls: urls(pick(pr.base.repo, githubRepoKeys)),
        ref: `refs/heads/${pr.base.ref}`,
        defaultBranch: pr.base.repo.default_branch,
        headSha: pr.head.sha,
        headBranch: pr.head.ref ?? "",
        headRef: `refs/pull/${number}/head`,
      });
    }
    case "gitlab": {
      const r = GitLabMergeRequest.safeParse(payload);
      if (!r.success) return err(toIssues(r.error, "body", "InvalidRequest"));
      const { project, object_attributes: mr } = r.data;
      const keys = Object.keys(gitlabRepo);
      return ok({
        provider,
        action: gitlabAction(mr.action, mr.oldrev),
        state: prState(mr.state === "opened" ? "open" : mr.state, false),
        number: mr.iid,
        repoUrls: urls(pick(project, keys), mr.target && pick(mr.target, keys)),
        ref: `refs/heads/${mr.target_branch}`,
        defaultBranch: project.default_branch ?? mr.target?.default_branch,
        headSha: mr.last_commit.id,
        headBranch: mr.source_branch ?? "",
        headRef: `refs/merge-requests/${mr.iid}/head`,
      });
    }
    case "gitea": {
      const r = GiteaPullRequest.safeParse(payload);
      if (!r.success) return err(toIssues(r.error, "body", "InvalidRequest"));
      const { action, number, pull_request: pr, repository: repo } = r.data;
      return ok({
        provider,
        action: action === "synchronized" ? "synchronize" : action,
        state: prState(pr.state, pr.merged),
        number,
        repoUrls: urls(pick(repo, ["clone_url", "ssh_url", "html_url"])),
        ref: `refs/heads/${pr.base.ref}`,
        defaultBranch: repo.default_branch,
        headSha: pr.head.sha,
        headBranch: pr.head.ref ?? "",
        headRef: `refs/pull/${number}/head`,
      });
    }
  }
}

function ok(
  e: Omit<PullRequestEvent, "defaultBranch"> & { defaultBranch?: string | null | undefined },
): Result<PullRequestEvent, Issue[]> {
  const { defaultBranch, ...rest } = e;
  const value: PullRequestEvent = rest;
  if (defaultBranch) value.defaultBranch = defaultBranch;
  return { ok: true, value };
}

/** Event header values that announce a pull (merge) request, per provider. */
export const PULL_REQUEST_EVENTS: Record<Provider, readonly string[]> = {
  github: ["pull_request"],
  gitlab: ["Merge Request Hook"],
  gitea: ["pull_request"],
};

/** Actions that bring new code to preview: opened, synchronize (a push), reopened. */
export function previewsPullRequest(action: string): boolean {
  return action === "opened" || action === "synchronize" || action === "reopened";
}
