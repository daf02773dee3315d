// Commit statuses on the revision of a notification event (GitHub, GitLab, Gitea): which
// state, which repository, which request. Pure; the targets (src/reconcile/targets) send it.
import type { HealthStatus, NotifyEvent } from "../app/index.ts";
import type { NotificationEvent } from "./notify.ts";

/** The providers plumb writes commit statuses to (their key under spec.notifications). */
export type CommitStatusProvider = "github" | "gitlab" | "gitea";

/** A commit's state as plumb sees it; each provider spells it its own way (providerState). */
export type CommitState = "pending" | "success" | "failure";

/**
 * The state the commit of `event` is in, given the App's health after the run: failure for a
 * failed sync (Failed) or Degraded health; pending for a revision held for approval; for the
 * others (Synced, Recovered, Healthy, DriftCorrected) by health: success when Healthy, failure
 * when Degraded, pending otherwise (Progressing: the rollout is under way). The states are
 * Argo CD's and Flux's: a sync is good once the App is healthy (argo-cd notifications catalog
 * `on-deployed`; Flux kustomize-controller reports success once health checks pass).
 */
export function commitState(event: NotifyEvent, health: HealthStatus | undefined): CommitState {
  if (event === "Failed" || event === "Degraded") return "failure";
  if (event === "Held") return "pending";
  if (health === "Healthy") return "success";
  if (health === "Degraded") return "failure";
  return "pending";
}

/** `state` as `provider` names it (GitLab says "failed"; GitHub and Gitea "failure"). */
export function providerState(provider: CommitStatusProvider, state: CommitState): string {
  return provider === "gitlab" && state === "failure" ? "failed" : state;
}

/** A Git repository on a forge: the origin its URL names, and its path without ".git". */
export interface ForgeRepository {
  /** "https://github.com" */
  origin: string;
  /** "org/repo" (GitLab: every group, "group/sub/repo") */
  path: string;
}

/**
 * The repository spec.source.git.url names: its origin and its path without a leading "/",
 * a trailing "/" or ".git". Throws CommitStatusError for a URL that does not parse or names no
 * owner/repo.
 */
export function forgeRepository(gitUrl: string): ForgeRepository {
  let url: URL;
  try {
    url = new URL(gitUrl);
  } catch {
    throw new CommitStatusError("spec.source.git.url is not a URL");
  }
  const path = decodeURIComponent(url.pathname)
    .replace(/^\/+|\/+$/g, "")
    .replace(/\.git$/, "");
  if (path.split("/").filter(Boolean).length < 2) {
    throw new CommitStatusError(`spec.source.git.url names no owner/repository (path "${path}")`);
  }
  return { origin: url.origin, path };
}

/**
 * The API base URL of `provider` for a repository at `origin` when spec.notifications names
 * none: GitHub's public API for github.com, else GitHub Enterprise Server's /api/v3; GitLab's
 * /api/v4; Gitea's /api/v1 (each provider's documented REST root).
 */
export function defaultApiUrl(provider: CommitStatusProvider, origin: string): string {
  if (provider === "github") {
    return origin === "https://github.com" ? "https://api.github.com" : `${origin}/api/v3`;
  }
  return `${origin}${provider === "gitlab" ? "/api/v4" : "/api/v1"}`;
}

/** One HTTP request: POST `url` with `headers` and the JSON `body`. */
export interface CommitStatusRequest {
  url: string;
  headers: Record<string, string>;
  body: Record<string, string>;
}

/** Longest description sent: GitHub rejects more than 140 characters. */
const DESCRIPTION_MAX = 140;

/** What a commit-status request is built from. */
export interface CommitStatusInput {
  provider: CommitStatusProvider;
  /** The API base URL, without a trailing "/". */
  apiUrl: string;
  repository: ForgeRepository;
  /** The full commit SHA (40 or 64 hex digits). */
  sha: string;
  state: CommitState;
  /** "plumb/<namespace>/<name>": one status per App on the commit. */
  context: string;
  description: string;
  token: string;
}

/**
 * The request creating the commit status, as each provider documents it:
 * - GitHub: POST {api}/repos/{owner}/{repo}/statuses/{sha}, `Authorization: Bearer`, body
 *   `{state, description, context}` (https://docs.github.com/en/rest/commits/statuses);
 * - GitLab: POST {api}/projects/{URL-encoded path}/statuses/{sha}, `PRIVATE-TOKEN`, body
 *   `{state, name, description}` (https://docs.gitlab.com/api/commits/#set-the-pipeline-status-of-a-commit);
 * - Gitea: POST {api}/repos/{owner}/{repo}/statuses/{sha}, `Authorization: token`, body
 *   `{state, context, description}` (Gitea's CreateStatusOption, /api/swagger).
 * GitHub and Gitea take the last two path segments as owner/repo. The description is cut to
 * 140 characters.
 */
export function commitStatusRequest(input: CommitStatusInput): CommitStatusRequest {
  const { provider, apiUrl, repository, sha, context, token } = input;
  const state = providerState(provider, input.state);
  const description = truncate(input.description, DESCRIPTION_MAX);
  const json = { "content-type": "application/json" };
  if (provider === "gitlab") {
    return {
      url: `${apiUrl}/projects/${encodeURIComponent(repository.path)}/statuses/${sha}`,
      headers: { ...json, "private-token": token },
      body: { state, name: context, description },
    };
  }
  const [owner, repo] = repository.path.split("/").slice(-2).map(encodeURIComponent);
  const url = `${apiUrl}/repos/${owner}/${repo}/statuses/${sha}`;
  if (provider === "github") {
    return {
      url,
      headers: {
        ...json,
        accept: "application/vnd.github+json",
        authorization: `Bearer ${token}`,
        "x-github-api-version": "2022-11-28",
        // GitHub rejects requests without a User-Agent (workerd's fetch sends none).
        "user-agent": "plumb",
      },
      body: { state, description, context },
    };
  }
  return {
    url,
    headers: { ...json, authorization: `token ${token}` },
    body: { state, context, description },
  };
}

/**
 * Whether a refused commit-status request is already in effect: GitLab answers 400 "Cannot
 * transition status via :enqueue from :pending" when the commit's status for that name already
 * is the state sent (its commit-status API is a state machine; gitlabhq
 * spec/requests/api/commit_statuses_spec.rb "when the `state` parameter is sent the same").
 * GitHub and Gitea add a status each time.
 */
export function statusAlreadySet(
  provider: CommitStatusProvider,
  status: number,
  answer: string,
): boolean {
  return provider === "gitlab" && status === 400 && answer.includes("Cannot transition status");
}

/** A full commit SHA: what a commit status can be set on. */
export function isCommitSha(revision: string | undefined): revision is string {
  return revision !== undefined && /^([0-9a-f]{40}|[0-9a-f]{64})$/.test(revision);
}

/** "plumb/<namespace>/<name>": the status context (GitLab: name) of an App. */
export function commitStatusContext(event: NotificationEvent): string {
  return `plumb/${event.app.namespace}/${event.app.name}`;
}

/**
 * A commit status that cannot be set because of the App's spec (no Git source, no
 * owner/repository in its URL): its message names what is wrong and carries no secret, so it
 * is shown as it is in the NotificationFailed Event.
 */
export class CommitStatusError extends Error {
  override name = "CommitStatusError";
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
