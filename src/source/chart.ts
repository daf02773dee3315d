// ChartPort: Helm charts from HTTP(S) chart repositories and OCI registries.
import type { ChartPort } from "../reconcile/ports.ts";
import { ociCharts } from "./chart-oci.ts";
import { helmRepository } from "./chart-repo.ts";

const MiB = 1024 * 1024;

export interface ChartPortOptions {
  /** HTTP client (default the global fetch). */
  fetch?: typeof fetch;
  /** Deadline for one resolve() or fetch() call's requests, ms (default 30 000). */
  timeoutMs?: number;
  /** Cap on a repository's index.yaml, bytes (default 32 MiB: large public indexes are 20+ MiB). */
  maxIndexBytes?: number;
  /** Cap on a packaged chart, bytes (default 20 MiB). */
  maxChartBytes?: number;
  /** OCI registries reached over plain http besides loopback ones (see image.ts). */
  insecureHosts?: readonly string[];
}

/**
 * A ChartPort: `oci://` repositories through the OCI distribution API (chart-oci.ts), http(s)
 * ones through index.yaml (chart-repo.ts). Revisions are "<version>@sha256:<hex>": the
 * chart's digest from the index, or its OCI manifest digest.
 */
export function createChartPort(options: ChartPortOptions = {}): ChartPort {
  const doFetch: typeof fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const timeoutMs = options.timeoutMs ?? 30_000;
  const maxChartBytes = options.maxChartBytes ?? 20 * MiB;
  const http = helmRepository({
    fetch: doFetch,
    timeoutMs,
    maxIndexBytes: options.maxIndexBytes ?? 32 * MiB,
    maxChartBytes,
  });
  const oci = ociCharts({
    fetch: doFetch,
    timeoutMs,
    maxChartBytes,
    insecureHosts: options.insecureHosts ?? [],
  });
  const pick = (repository: string) => (repository.startsWith("oci://") ? oci : http);
  return {
    resolve: (source, auth) => pick(source.repository).resolve(source, auth),
    fetch: (source, revision, auth) => pick(source.repository).fetch(source, revision, auth),
  };
}
