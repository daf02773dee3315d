// Which AppSets a webhook concerns. Pure: no I/O.
import type { AppSetSpec } from "../app/appset.ts";
import { normalizeRepoUrl } from "./match.ts";

/** What a webhook tells, as far as choosing AppSets needs. */
export type AppSetWebhook =
  | { kind: "push"; repoUrls: readonly string[] }
  | {
      kind: "pullRequest";
      provider: "github" | "gitlab" | "gitea";
      repoUrls: readonly string[];
    };

/** An AppSet's name and spec, for {@link appSetsForWebhook}. */
export interface AppSetSpecRef {
  namespace: string;
  name: string;
  spec: Pick<AppSetSpec, "generators">;
}

/**
 * The AppSets a webhook concerns: for a push, those with a git generator on the pushed
 * repository (any revision: the generator is read again, which is cheap when nothing moved);
 * for a pull request, those with a pullRequest generator of that provider on the base
 * repository (owner/repo, or the GitLab project path; a numeric GitLab project id matches any
 * merge request of that forge, as the payload does not give the id). Repository URLs compare as
 * normalizeRepoUrl keys; a generator's repository compares by its path's end.
 */
export function appSetsForWebhook<T extends AppSetSpecRef>(
  appsets: readonly T[],
  event: AppSetWebhook,
): T[] {
  const keys = event.repoUrls.map(normalizeRepoUrl);
  const paths = keys.map((k) => k.slice(k.indexOf("/") + 1));
  return appsets.filter((s) =>
    s.spec.generators.some((g) => {
      if (event.kind === "push") {
        return g.git !== undefined && keys.includes(normalizeRepoUrl(g.git.repoURL));
      }
      const p = g.pullRequest?.[event.provider];
      if (!p) return false;
      if (event.provider === "gitlab" && p.project && /^\d+$/.test(p.project)) return true;
      const want = (
        event.provider === "gitlab" ? p.project : `${p.owner}/${p.repo}`
      )?.toLowerCase();
      return want !== undefined && paths.some((path) => path === want || path.endsWith(`/${want}`));
    }),
  );
}
