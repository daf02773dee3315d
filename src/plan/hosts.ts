// Host ownership: a host name one of an App's Ingresses would serve that another Ingress in the
// cluster already serves. Pure.
import {
  describeRef,
  isRecord,
  type KubeObject,
  type NamespacedName,
  refOf,
} from "../core/index.ts";
import { labelledFor } from "./adopt.ts";

/** The host names of an Ingress's rules (networking.k8s.io/v1), as written. */
export function ingressHosts(obj: KubeObject): string[] {
  if (obj.kind !== "Ingress" || !isRecord(obj["spec"])) return [];
  const rules = Array.isArray(obj["spec"]["rules"]) ? obj["spec"]["rules"] : [];
  return rules
    .map((r) => (isRecord(r) && typeof r["host"] === "string" ? r["host"].toLowerCase() : ""))
    .filter((h) => h !== "");
}

export interface HostConflict {
  host: string;
  /** "Ingress team-b/blog", the Ingress already serving the host. */
  ingress: string;
}

/**
 * Hosts of the desired Ingresses that a live Ingress not of this App already serves: one that
 * neither carries the App's tracking labels nor is the very object a desired Ingress names (an
 * Ingress being taken over is refused or adopted by the apply step). Exact names only: a
 * wildcard rule ("*.example.com") yields to an exact one in every ingress controller.
 * Sorted by host, then Ingress.
 */
export function hostConflicts(
  desired: readonly KubeObject[],
  live: readonly KubeObject[],
  app: NamespacedName,
): HostConflict[] {
  const wanted = new Set(desired.flatMap(ingressHosts));
  const same = new Set(
    desired.filter((o) => o.kind === "Ingress").map((o) => describeRef(refOf(o))),
  );
  const out: HostConflict[] = [];
  if (wanted.size === 0) return out;
  // Every Ingress of the cluster is checked for each App that has one: the wanted hosts first,
  // so an Ingress serving none of them (nearly all) costs no name or copy.
  for (const other of live) {
    const hosts = wantedHosts(other, wanted);
    if (!hosts) continue;
    const name = describeRef({ ...refOf(other), kind: "Ingress" });
    if (labelledFor(other, app) || same.has(name)) continue;
    for (const host of hosts) out.push({ host, ingress: name });
  }
  return out.sort((a, b) =>
    a.host < b.host ? -1 : a.host > b.host ? 1 : a.ingress < b.ingress ? -1 : 1,
  );
}

/** The hosts of `obj`'s rules (ingressHosts) that are in `wanted`, once each; undefined: none. */
function wantedHosts(obj: KubeObject, wanted: ReadonlySet<string>): Set<string> | undefined {
  const spec = obj["spec"];
  if (obj.kind !== "Ingress" || !isRecord(spec) || !Array.isArray(spec["rules"])) return undefined;
  let found: Set<string> | undefined;
  for (const r of spec["rules"]) {
    if (!isRecord(r) || typeof r["host"] !== "string") continue;
    const host = r["host"].toLowerCase();
    if (wanted.has(host)) {
      found ??= new Set();
      found.add(host);
    }
  }
  return found;
}
