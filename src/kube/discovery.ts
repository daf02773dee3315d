// Discovery: group/version/kind → resource name and scope. Built-in kinds come from a static
// table (builtin-resources.ts, no request); the others are cached like client-go's memcache
// discovery (kept for a TTL, and one group-version re-read when a kind is not found).

import { KubeApiError } from "../core/index.ts";
import type { ResourceInfo } from "../reconcile/ports.ts";
import { builtinResource } from "./builtin-resources.ts";
import { unanswered } from "./request.ts";
import type { KubeTransport } from "./transport.ts";

interface Entry {
  at: number;
  kinds: Map<string, ResourceInfo>;
}

/** A per-process cache, shareable by every KubePort made from the same API server. */
export class DiscoveryCache {
  readonly ttlMs: number;
  readonly entries = new Map<string, Entry>();
  constructor(ttlMs = 10 * 60_000) {
    this.ttlMs = ttlMs;
  }
}

/** The discovery path of an apiVersion: "v1" → /api/v1, "apps/v1" → /apis/apps/v1. */
export function groupVersionPath(apiVersion: string): string {
  return apiVersion.includes("/") ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
}

/**
 * Looks up apiVersion+kind: a built-in kind from the static table (no request); any other by
 * reading /api(s)/<group-version> at most once per TTL, and once
 * more when the kind is missing (a CRD established since the last read).
 * @param countGet called once per discovery request made (for request metrics)
 * @returns undefined when the API server does not serve that kind (404 group-version included)
 */
export async function discover(
  cache: DiscoveryCache,
  transport: KubeTransport,
  apiVersion: string,
  kind: string,
  now: number,
  countGet: () => void,
): Promise<ResourceInfo | undefined> {
  const builtin = builtinResource(apiVersion, kind);
  if (builtin) return builtin;
  const cached = cache.entries.get(apiVersion);
  if (cached && now - cached.at < cache.ttlMs) {
    const hit = cached.kinds.get(kind);
    if (hit) return hit;
  }
  countGet();
  const res = await transport("GET", groupVersionPath(apiVersion)).catch((err: unknown) => {
    throw unanswered(err);
  });
  if (res.status === 404) {
    cache.entries.set(apiVersion, { at: now, kinds: new Map() });
    return undefined;
  }
  if (res.status >= 400) {
    throw new KubeApiError(
      res.status,
      "DiscoveryFailed",
      `discovery of ${apiVersion} failed: GET ${groupVersionPath(apiVersion)}: HTTP ${res.status}${
        res.attempts && res.attempts > 1 ? ` after ${res.attempts} attempts` : ""
      }`,
    );
  }
  const list = res.body as {
    resources?: Array<{ name: string; kind: string; namespaced: boolean }>;
  };
  const kinds = new Map<string, ResourceInfo>();
  for (const r of list.resources ?? []) {
    if (r.name.includes("/")) continue; // subresources such as deployments/status
    kinds.set(r.kind, { resource: r.name, namespaced: r.namespaced });
  }
  cache.entries.set(apiVersion, { at: now, kinds });
  return kinds.get(kind);
}
