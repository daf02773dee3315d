// Helm's .Capabilities from discovery: the server version and every served group/version and
// group/version/Kind (what `helm install` reads through client-go's discovery).

import { KubeApiError } from "../core/index.ts";
import type { ClusterCapabilities } from "../render/index.ts";
import type { DiscoveryCache } from "./discovery.ts";
import { unanswered } from "./request.ts";
import type { KubeTransport } from "./transport.ts";

/** Aggregated discovery (apidiscovery.k8s.io/v2, GA in Kubernetes 1.30), else the plain lists. */
const ACCEPT =
  "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json";

interface AggregatedList {
  kind?: string;
  items?: Array<{
    metadata?: { name?: string };
    versions?: Array<{ version?: string; resources?: Array<{ responseKind?: { kind?: string } }> }>;
  }>;
}

const cached = new WeakMap<DiscoveryCache, { at: number; caps: ClusterCapabilities }>();

/**
 * The cluster's capabilities, read with 3 GETs (/version, /api, /apis) at most once per
 * discovery TTL. `apiVersions` lists "v1", "apps/v1", "apps/v1/Deployment", ... sorted.
 * Throws KubeApiError when the API server cannot be read: an HTTP error (DiscoveryFailed), or
 * no answer (503/504 naming the request and its cause, e.g. "GET /version: connection reset
 * (ECONNRESET)").
 */
export async function readCapabilities(
  cache: DiscoveryCache,
  transport: KubeTransport,
  now: number,
  countGet: () => void,
): Promise<ClusterCapabilities> {
  const hit = cached.get(cache);
  if (hit && now - hit.at < cache.ttlMs) return hit.caps;
  const get = async (path: string, accept = "application/json") => {
    countGet();
    // No answer: the request and its real cause, as for any other request.
    const res = await transport("GET", path, { accept }).catch((err: unknown) => {
      throw unanswered(err);
    });
    if (res.status >= 400) {
      throw new KubeApiError(
        res.status,
        "DiscoveryFailed",
        `GET ${path} failed: HTTP ${res.status}`,
      );
    }
    return res.body;
  };
  const version = (await get("/version")) as { gitVersion?: string };
  const set = new Set<string>();
  for (const path of ["/api", "/apis"]) {
    const body = (await get(path, ACCEPT)) as AggregatedList & {
      versions?: string[];
      groups?: Array<{ versions?: Array<{ groupVersion?: string }> }>;
    };
    if (body.kind === "APIGroupDiscoveryList") {
      for (const group of body.items ?? []) {
        const name = group.metadata?.name ?? "";
        for (const v of group.versions ?? []) {
          if (!v.version) continue;
          const gv = name === "" ? v.version : `${name}/${v.version}`;
          set.add(gv);
          for (const r of v.resources ?? []) {
            if (r.responseKind?.kind) set.add(`${gv}/${r.responseKind.kind}`);
          }
        }
      }
    } else {
      for (const v of body.versions ?? []) set.add(v);
      for (const g of body.groups ?? []) {
        for (const v of g.versions ?? []) if (v.groupVersion) set.add(v.groupVersion);
      }
    }
  }
  const caps = { kubeVersion: version.gitVersion ?? "", apiVersions: [...set].sort() };
  cached.set(cache, { at: now, caps });
  return caps;
}
