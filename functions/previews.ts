// Pull request previews on Node and in the Worker: the forge token per repository host from a
// Secret, then previewPullRequest for each App, one after another, after the webhook's answer
// (`plumb serve` in the background, the Worker in waitUntil).
import type { PullRequestEvent, PullRequestTarget } from "../src/http/index.ts";
import { forgeRepository } from "../src/plan/index.ts";
import { type Ports, previewPullRequest } from "../src/reconcile/index.ts";

/**
 * The previewer of `plumb serve` and of the Worker (`env`: process.env, or the Worker's vars
 * and secrets). Tokens: the Secret `PLUMB_FORGE_TOKENS` (default
 * plumb-forge-tokens) in `namespace`, one key per repository host name ("github.com", no port)
 * holding that host's token; the API base URL for a host is `PLUMB_FORGE_API_URL_<HOST>` (host
 * upper-cased, non-alphanumerics as "_"), else the provider's default. An App whose host has
 * no token is logged and skipped; one App's failure does not stop the others.
 */
export function forgePreviewer(
  ports: () => Ports,
  namespace: string,
  log: (entry: Record<string, unknown>) => void,
  env: Readonly<Record<string, unknown>> = process.env,
) {
  const str = (key: string) => (typeof env[key] === "string" ? (env[key] as string) : undefined);
  const secretName = str("PLUMB_FORGE_TOKENS") ?? "plumb-forge-tokens";
  return async (apps: PullRequestTarget[], pr: PullRequestEvent): Promise<void> => {
    const p = ports();
    const tokens = (await p.kube.getSecret(namespace, secretName)) ?? {};
    for (const t of Object.values(tokens)) p.redactor?.add(t);
    for (const app of apps) {
      const id = `${app.namespace}/${app.name}`;
      try {
        // Secret keys cannot hold ":" (a config key is [-._a-zA-Z0-9]+): the host name, no port.
        const host = new URL(forgeRepository(app.url).origin).hostname;
        const token = tokens[host];
        if (!token) {
          log({
            msg: "preview skipped",
            app: id,
            reason: `no token for ${host} in ${namespace}/${secretName}`,
          });
          continue;
        }
        const apiUrl = str(`PLUMB_FORGE_API_URL_${host.toUpperCase().replace(/[^A-Z0-9]/g, "_")}`);
        const state = await previewPullRequest(
          app,
          app.url,
          pr,
          p,
          // Called through a closure: workerd refuses fetch called with another `this`.
          { apiUrl, token, fetch: (input, init) => fetch(input, init) },
          new Date(),
        );
        log({ msg: "pull request previewed", app: id, number: pr.number, state });
      } catch (err) {
        log({ msg: "preview failed", app: id, number: pr.number, error: String(err) });
      }
    }
  };
}
