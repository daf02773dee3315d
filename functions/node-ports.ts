// Node composition: ports from a kubeconfig, the Git, image and chart adapters, the render
// engines and Slack.
import { hostname } from "node:os";
import { Redactor, runBudget } from "../src/core/index.ts";
import { cloudflareDnsSettings } from "../src/dns/index.ts";
import {
  createDestinations,
  createKubePort,
  type KubeAppStore,
  type KubeTransport,
} from "../src/kube/index.ts";
import { nodeDestinationTransport, nodeKubeTransport } from "../src/kube/node.ts";
import { createNotifier } from "../src/notify/index.ts";
import type { Ports } from "../src/reconcile/index.ts";
import type { RenderEngines } from "../src/render/engine.ts";
import { kubeRetryOptions, type RuntimeConfig } from "../src/runtime/config.ts";
import { createDiskRevisionStore } from "../src/source/cache-disk.ts";
import { createChartPort } from "../src/source/chart.ts";
import { createGitPort } from "../src/source/git.ts";
import { createImagePort } from "../src/source/image.ts";
import { createNodeHttpClient } from "../src/source/node-http.ts";

/**
 * A factory of Ports (a fresh KubePort each call, so request counts are per run; its `kube` is
 * also the HTTP app's AppStore). Every run shares `redactor` (the process's secret values), and
 * the log lines are redacted with it. `options.transport`: the kubeconfig's transport already
 * made (a tick lists the Apps before it loads the rest), else one is made from `kubeconfig`.
 */
export function nodePorts(
  kubeconfig: string | undefined,
  config: RuntimeConfig,
  redactor: Redactor = new Redactor(),
  options: { transport?: KubeTransport } = {},
): () => Ports & { kube: KubeAppStore } {
  const log = (entry: Record<string, unknown>) =>
    console.error(JSON.stringify(redactor.redactValue(entry)));
  const transport =
    options.transport ??
    nodeKubeTransport(kubeconfig, {
      retry: kubeRetryOptions(config, log),
      rateLimit: config.kubeRateLimit,
    });
  // Fetched commits on disk, shared by every plumb process on the machine (cache-disk.ts).
  // The run's memory ceiling (PLUMB_MAX_RUN_MEMORY) and the caps of each stage derived from it.
  const budget = runBudget(config.maxRunMemory);
  const git = createGitPort({
    http: createNodeHttpClient(),
    store: createDiskRevisionStore(),
    budget,
  });
  const image = createImagePort();
  // Kustomize and Helm: started on the first render that needs them, once per process; their
  // code is loaded then too (a run of plain YAML never loads it: the fixed cost of a run).
  const engines = lazyNodeEngines(config.renderTimeoutMs);
  const charts = createChartPort();
  const notify = createNotifier();
  const dns = cloudflareDnsSettings(config.dns);
  if (config.dns) redactor.add(config.dns.apiToken);
  const holder = `plumb-${hostname()}-${process.pid}`;
  // Other clusters (spec.destination.cluster): CA data, tokens and client certificates.
  const destinations = createDestinations({
    transport: nodeDestinationTransport,
    allowInsecureSkipTLSVerify: config.allowInsecureDestinations,
    retry: kubeRetryOptions(config, log),
  });
  return () => ({
    kube: createKubePort(transport),
    git,
    image,
    charts,
    engines,
    notify,
    holder,
    budget,
    allowedDestinations: config.allowedDestinations,
    allowedClusterKinds: config.allowedClusterKinds,
    ingress: config.ingress,
    ...(dns ? { dns } : {}),
    allowCascadingPrune: config.allowCascadingPrune,
    destinations,
    log,
    redactor,
  });
}

/**
 * The Node render engines (src/engines/node.ts), its module loaded on the first render; the same
 * engines (one helper process per engine) serve every later render. Errors are the engines' own
 * (EngineError), and a failed load of the module is retried by the next render.
 * @param timeoutMs the time limit of one render (PLUMB_RENDER_TIMEOUT), ms
 */
export function lazyNodeEngines(timeoutMs: number | undefined): Required<RenderEngines> {
  let loading: Promise<Required<RenderEngines>> | undefined;
  const load = () => {
    loading ??= import("../src/engines/node.ts").then(
      (m) => m.createNodeEngines({ timeoutMs }),
      (err: unknown) => {
        loading = undefined;
        throw err;
      },
    );
    return loading;
  };
  return {
    kustomize: async (request) => (await load()).kustomize(request),
    helm: async (request) => (await load()).helm(request),
  };
}
