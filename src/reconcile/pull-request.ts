// A pull request answered with the change it would make: each matching App diffed at the PR's
// head (diffApp: nothing written), its comment created or updated in place (found by its
// marker, no stored state), a commit status on the head, and one Event on the App.
import type { NamespacedName } from "../core/index.ts";
import { nameOf } from "../core/index.ts";
import {
  COMMENT_MAX,
  type CommitStatusProvider,
  commentBody,
  commitStatusRequest,
  defaultApiUrl,
  type ForgeComment,
  findMarkedComment,
  forgeCommentApi,
  forgeRepository,
  type PreviewResult,
  statusAlreadySet,
} from "../plan/index.ts";
import { diffApp } from "./diff.ts";
import type { Ports } from "./ports.ts";

/** The pull request, as the webhook read it (src/http/webhooks.ts PullRequestEvent). */
export interface PullRequestRef {
  /** The forge; GitHub when absent. */
  provider?: CommitStatusProvider;
  number: number;
  headSha: string;
  headRef: string;
}

/** Where and how to reach the forge's API: its base URL and the token for the repository's host. */
export interface ForgeAccess {
  /** Overrides defaultApiUrl (tests, GitHub Enterprise). */
  apiUrl?: string | undefined;
  token: string;
  fetch: typeof fetch;
}

/**
 * Previews pull request `pr` for App `app` on its forge (GitHub, GitLab merge request, Gitea):
 * diffApp at `pr.headRef`, then the comment whose body starts with the App's marker is
 * updated in place (PATCH; GitLab notes: PUT), or one is POSTed when none exists (see
 * forgeCommentApi), its body cut at the forge's COMMENT_MAX; then the commit status
 * `plumb/<ns>/<name>` on `pr.headSha` (success; failure when
 * the render fails or an object's dry run is refused, with the reason); then a
 * PullRequestPreviewed Event on the App. The token is sent only to the forge's API URL.
 * @returns the state set. Throws on a failed forge request (its status, never its body).
 */
export async function previewPullRequest(
  app: NamespacedName,
  gitUrl: string,
  pr: PullRequestRef,
  ports: Ports,
  forge: ForgeAccess,
  now: Date,
): Promise<"success" | "failure"> {
  const id = nameOf(app);
  const redact = (text: string) => ports.redactor?.redact(text) ?? text;
  const outcome = await diffApp(app, ports, now, { ref: pr.headRef });
  const result: PreviewResult = outcome.ok
    ? { ok: true, report: outcome.report }
    : { ok: false, app: id, reason: outcome.reason, error: outcome.error };
  const failed = !outcome.ok || outcome.report.counts.fail > 0;
  const provider = pr.provider ?? "github";
  const title = { github: "GitHub", gitlab: "GitLab", gitea: "Gitea" }[provider];
  const repository = forgeRepository(gitUrl);
  const apiUrl = (forge.apiUrl ?? defaultApiUrl(provider, repository.origin)).replace(/\/+$/, "");
  const api = forgeCommentApi(provider, apiUrl, repository.path, pr.number);
  const headers = { ...api.headers(forge.token), "user-agent": "plumb" };
  const call = async (method: string, url: string, body?: unknown) => {
    const res = await forge.fetch(url, {
      method,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    if (!res.ok) throw new Error(`${method} comment: HTTP ${res.status} from the ${title} API`);
    return res;
  };
  const body = redact(commentBody(result, COMMENT_MAX[provider]));
  let found: ForgeComment | undefined;
  for (let page = 1; page <= 50 && !found; page++) {
    const list = (await (await call("GET", api.list(page))).json()) as ForgeComment[];
    found = findMarkedComment(Array.isArray(list) ? list : [], id);
    if (!Array.isArray(list) || list.length < api.pageSize) break;
  }
  if (found) await call(api.updateMethod, api.update(found.id), { body });
  else await call("POST", api.create, { body });

  const summary = outcome.ok
    ? outcome.report.counts.fail > 0
      ? `${outcome.report.counts.fail} object(s) refused by the API server`
      : "previewed"
    : `${outcome.reason}: ${outcome.error}`;
  const status = commitStatusRequest({
    provider,
    apiUrl,
    repository,
    sha: pr.headSha,
    state: failed ? "failure" : "success",
    context: `plumb/${app.namespace}/${app.name}`,
    description: redact(summary),
    token: forge.token,
  });
  const res = await forge.fetch(status.url, {
    method: "POST",
    headers: status.headers,
    body: JSON.stringify(status.body),
  });
  // GitLab refuses a status already in the state sent (statusAlreadySet): it is in effect.
  if (!res.ok && !statusAlreadySet(provider, res.status, await res.text())) {
    throw new Error(`commit status: HTTP ${res.status} from the ${title} API`);
  }

  const live = await ports.kube.getApp(app.namespace, app.name);
  if (live) {
    await ports.kube.emitEvent(live, {
      type: failed ? "Warning" : "Normal",
      reason: "PullRequestPreviewed",
      message: redact(
        `${provider === "gitlab" ? "merge request !" : "pull request #"}${pr.number} at ${pr.headSha.slice(0, 12)}: ${summary}`,
      ),
    });
  }
  return failed ? "failure" : "success";
}
