// Commit statuses on GitHub, GitLab and Gitea: the state of the revision each event is about,
// as Flux's github, gitlab and gitea providers set it (internal/notifier/{github,gitlab,gitea}.go).
import {
  CommitStatusError,
  type CommitStatusProvider,
  commitState,
  commitStatusContext,
  commitStatusRequest,
  defaultApiUrl,
  forgeRepository,
  isCommitSha,
  statusAlreadySet,
} from "../../plan/index.ts";
import type { NotificationTarget } from "./target.ts";

/**
 * The target for `provider`. The secret is the token, sent only to apiUrl (or the provider's
 * API at the Git URL's host). An event about no commit (nothing applied yet) sets nothing; an
 * App whose source is not Git, or whose URL names no repository, is a CommitStatusError.
 */
function commitStatusTarget<K extends CommitStatusProvider>(
  provider: K,
  title: string,
): NotificationTarget<K> {
  return {
    name: provider,
    title,
    endpoint: `the ${title} API`,
    async post(event, { config, secret, app, http, redact }) {
      if (!isCommitSha(event.revision)) return;
      const gitUrl = (app.spec as { source?: { git?: { url?: unknown } } }).source?.git?.url;
      if (typeof gitUrl !== "string") {
        throw new CommitStatusError(`${title} commit statuses need a Git source (spec.source.git)`);
      }
      const repository = forgeRepository(gitUrl);
      const request = commitStatusRequest({
        provider,
        apiUrl: (config.apiUrl ?? defaultApiUrl(provider, repository.origin)).replace(/\/+$/, ""),
        repository,
        sha: event.revision,
        state: commitState(event.transition, app.status?.healthStatus),
        context: commitStatusContext(event),
        description: `${event.transition}: ${event.message}`,
        token: secret,
      });
      await http.post(request.url, JSON.stringify(redact(request.body)), request.headers, {
        settled: (status, answer) => statusAlreadySet(provider, status, answer),
      });
    },
  };
}

export const github = commitStatusTarget("github", "GitHub");
export const gitlab = commitStatusTarget("gitlab", "GitLab");
export const gitea = commitStatusTarget("gitea", "Gitea");
