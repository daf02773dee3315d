// What a Namespace holds: every object of every namespaced kind the API server lists, as
// metadata — what deleting the Namespace would delete with it.
import { KubeApiError, type KubeObject } from "../core/index.ts";
import { type Call, enc, toError } from "./request.ts";

/** Aggregated discovery (apidiscovery.k8s.io/v2, GA in Kubernetes 1.30): every group in one answer. */
const AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";
/** Lists as metadata only (name, labels, ownerReferences, uid): no Secret data crosses the wire. */
const METADATA = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";
/** Events are records about objects, not objects a Namespace holds for anyone. */
const SKIPPED = new Set(["/events", "events.k8s.io/events"]);

interface DiscoveredResource {
  resource: string;
  responseKind?: { kind?: string };
  scope?: string;
  verbs?: string[];
}
interface DiscoveredGroup {
  metadata?: { name?: string };
  versions?: Array<{ version: string; resources?: DiscoveredResource[] }>;
}

/** A namespaced kind that can be listed, in its group's preferred version. */
interface ListableKind {
  apiVersion: string;
  kind: string;
  resource: string;
}

/**
 * Every object in `namespace`, of every namespaced kind the API server serves with the list
 * verb (each group's preferred version; Events left out), with apiVersion and kind set and
 * only metadata. Two discovery requests (aggregated discovery of /api and /apis), then one
 * list per kind (about 30 on a bare cluster).
 * @throws KubeApiError when a request fails — also a 403 on a kind plumb may not list: the
 *   caller must not conclude the Namespace holds only what it could see
 */
export async function listNamespaceContents(call: Call, namespace: string): Promise<KubeObject[]> {
  const kinds = [...(await listableKinds(call, "/api")), ...(await listableKinds(call, "/apis"))];
  const out: KubeObject[] = [];
  for (const k of kinds) {
    const base = k.apiVersion.includes("/") ? `/apis/${k.apiVersion}` : `/api/${k.apiVersion}`;
    const path = `${base}/namespaces/${enc(namespace)}/${k.resource}`;
    const res = await call("list", "GET", path, { accept: METADATA });
    if (res.status === 404) continue; // the kind went away since discovery (a CRD deleted)
    if (res.status >= 400) throw toError(res, `list ${k.kind} in namespace ${namespace}`);
    const items = (res.body as { items?: KubeObject[] }).items ?? [];
    for (const item of items) out.push({ ...item, apiVersion: k.apiVersion, kind: k.kind });
  }
  return out;
}

async function listableKinds(call: Call, root: "/api" | "/apis"): Promise<ListableKind[]> {
  const res = await call("get", "GET", root, { accept: AGGREGATED });
  if (res.status >= 400) throw toError(res, `discovery ${root}`);
  const body = res.body as { kind?: string; items?: DiscoveredGroup[] };
  if (body.kind !== "APIGroupDiscoveryList") {
    throw new KubeApiError(
      501,
      "NotImplemented",
      `discovery ${root}: the API server does not serve aggregated discovery (Kubernetes 1.30+ does)`,
    );
  }
  const kinds: ListableKind[] = [];
  for (const group of body.items ?? []) {
    const name = group.metadata?.name ?? "";
    const preferred = group.versions?.[0];
    if (!preferred) continue;
    const apiVersion = name ? `${name}/${preferred.version}` : preferred.version;
    for (const r of preferred.resources ?? []) {
      const kind = r.responseKind?.kind;
      if (!kind || r.scope !== "Namespaced" || !(r.verbs ?? []).includes("list")) continue;
      if (SKIPPED.has(`${name}/${r.resource}`)) continue;
      kinds.push({ apiVersion, kind, resource: r.resource });
    }
  }
  return kinds;
}
