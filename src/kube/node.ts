// The Kubernetes adapter's Node-only import point: the operator's kubeconfig (files, in-cluster)
// and the node:https transport, with client-go's retries.

import type { ClusterAccess } from "./kubeconfig.ts";
import { type LoadOptions, loadNodeKubeconfig } from "./node-kubeconfig.ts";
import { createNodeTransport } from "./node-transport.ts";
import { type RateLimit, withRateLimit } from "./rate-limit.ts";
import { type RetryOptions, withRetries } from "./retry.ts";
import type { KubeTransport } from "./transport.ts";

export * from "./node-kubeconfig.ts";
export * from "./node-transport.ts";

/**
 * The transport of the operator's kubeconfig (see loadNodeKubeconfig: `path`, else $KUBECONFIG,
 * ~/.kube/config, in-cluster), with retries and deadlines (see withRetries).
 * @throws KubeconfigError at once for a kubeconfig that cannot be used
 */
export function nodeKubeTransport(
  path: string | undefined,
  options: LoadOptions & { retry?: RetryOptions; rateLimit?: RateLimit | undefined } = {},
): KubeTransport {
  const base = createNodeTransport(loadNodeKubeconfig(path, options));
  // Inside the retries: each attempt takes a token, as client-go's rate limiter sits under its
  // retry loop.
  const limited = options.rateLimit ? withRateLimit(base, options.rateLimit) : base;
  return withRetries(limited, options.retry);
}

/**
 * Node's transport for a remote destination: node:https with the kubeconfig's CA
 * data, bearer token, basic auth or client certificate (all inline: the restricted policy
 * refuses files, exec plugins and auth providers before this is reached).
 */
export function nodeDestinationTransport(access: ClusterAccess, source: string): KubeTransport {
  return createNodeTransport({ access, source, files: [] });
}
