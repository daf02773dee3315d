// Render: parsed objects to the desired set — namespaces defaulted and checked, tracking labels
// stamped, order stable. Pure: scope (namespaced or not) comes from discovery, passed in.
import { trackingLabels } from "../app/index.ts";
import {
  err,
  gvkKey,
  type Issue,
  isRecord,
  type KubeObject,
  matchesAny,
  ok,
  type Result,
  refKey,
  refOf,
} from "../core/index.ts";
import type { ParsedObject } from "./manifests.ts";

export interface RenderContext {
  appNamespace: string;
  appName: string;
  /** spec.destination.namespace, or the App's namespace. */
  destinationNamespace: string;
  /** Namespaces Apps may deploy to besides their own ("*" = any); cluster-wide setting. */
  allowedNamespaces: readonly string[];
  /** gvkKey → namespaced? from discovery; absent = kind unknown to the API server. */
  scopes: ReadonlyMap<string, boolean>;
  /**
   * Cluster-scoped kinds Apps may apply besides Namespaces: "Kind" (any group), "group/Kind",
   * or "*" (cluster-wide setting; default none — a tenant's App must not bind ClusterRoles).
   */
  allowedClusterKinds?: readonly string[];
  /**
   * Where `allowedNamespaces` and `allowedClusterKinds` come from, for messages (e.g.
   * `AppPolicy "tenants"`); absent: the process's settings, named by their variables.
   */
  policySource?: string;
}

/** Most objects one App may render: its inventory lives in the App's status (etcd's 1.5 MiB). */
export const MAX_OBJECTS = 1000;

/** May an App apply a cluster-scoped object of this kind? Namespaces follow namespaceAllowed. */
export function clusterKindAllowed(
  ctx: Pick<RenderContext, "allowedClusterKinds">,
  apiVersion: string,
  kind: string,
): boolean {
  const allowed = ctx.allowedClusterKinds ?? [];
  const group = apiVersion.includes("/") ? apiVersion.slice(0, apiVersion.indexOf("/")) : "";
  return matchesAny(allowed, kind) || matchesAny(allowed, `${group}/${kind}`);
}

/** Kinds applied first, in this order (Helm's InstallOrder, abridged); the rest follow by name. */
const KIND_ORDER = [
  "Namespace",
  "CustomResourceDefinition",
  "NetworkPolicy",
  "ResourceQuota",
  "LimitRange",
  "PodSecurityPolicy",
  "PodDisruptionBudget",
  "ServiceAccount",
  "Secret",
  "ConfigMap",
  "StorageClass",
  "PersistentVolume",
  "PersistentVolumeClaim",
  "ClusterRole",
  "ClusterRoleBinding",
  "Role",
  "RoleBinding",
  "Service",
  "DaemonSet",
  "Pod",
  "ReplicaSet",
  "Deployment",
  "HorizontalPodAutoscaler",
  "StatefulSet",
  "Job",
  "CronJob",
  "Ingress",
];

/** May an App in `appNamespace` deploy into `namespace`? Default: only its own namespace. */
export function namespaceAllowed(
  ctx: Pick<RenderContext, "appNamespace" | "allowedNamespaces">,
  namespace: string,
): boolean {
  return namespace === ctx.appNamespace || matchesAny(ctx.allowedNamespaces, namespace);
}

/**
 * The issue with spec.destination.namespace when the App may not deploy there (default policy:
 * its own namespace; the cluster setting PLUMB_ALLOWED_DESTINATIONS widens it), else
 * undefined. The loop checks it before resolving the source (InvalidSpec, Stalled) and
 * renderObjects again.
 */
export function destinationIssue(
  ctx: Pick<
    RenderContext,
    "appNamespace" | "destinationNamespace" | "allowedNamespaces" | "policySource"
  >,
): Issue | undefined {
  if (namespaceAllowed(ctx, ctx.destinationNamespace)) return undefined;
  return {
    code: "InvalidSpec",
    path: "spec.destination.namespace",
    message: ctx.policySource
      ? `namespace "${ctx.destinationNamespace}" is not allowed for Apps in "${ctx.appNamespace}" by ${ctx.policySource} (destinations.namespaces: ${ctx.allowedNamespaces.join(", ") || "none"})`
      : `namespace "${ctx.destinationNamespace}" is not allowed for Apps in "${ctx.appNamespace}": an App deploys to its own namespace unless the cluster setting PLUMB_ALLOWED_DESTINATIONS lists this one (or "*")`,
  };
}

/**
 * Renders parsed objects into the desired set.
 * - Namespaced objects without a namespace get the destination namespace; an object aimed at
 *   another namespace is refused, as is a destination the App may not use (default policy:
 *   the App's own namespace; `allowedNamespaces` widens it), and a Namespace object other than
 *   the destination.
 * - Kinds the API server does not know yet are taken as namespaced unless a CRD in the same
 *   set declares them Cluster-scoped; their apply fails per object later.
 * - Cluster-scoped objects other than Namespaces are refused unless the cluster setting
 *   allows their kind (Argo CD projects' clusterResourceWhitelist plays the same part).
 * - Duplicate objects (same group, kind, namespace, name) are refused, and so is a set of
 *   more than MAX_OBJECTS.
 * - Tracking labels are stamped; order is KIND_ORDER, then by namespace and name.
 * @returns the objects, or every issue found (`path` is "file:line").
 */
export function renderObjects(
  parsed: readonly ParsedObject[],
  ctx: RenderContext,
): Result<KubeObject[], Issue[]> {
  const issues: Issue[] = [];
  const refused = destinationIssue(ctx);
  if (refused) return err([refused]);
  const scopes = new Map(ctx.scopes);
  for (const { object } of parsed) addCrdScopes(object, scopes);

  const seen = new Map<string, string>();
  const out: KubeObject[] = [];
  for (const { object, origin } of parsed) {
    const obj = structuredClone(object);
    const label = `${obj.kind} ${obj.metadata.name}`;
    const namespaced = scopes.get(gvkKey(obj.apiVersion, obj.kind)) ?? true;
    if (namespaced) {
      const ns = obj.metadata.namespace ?? ctx.destinationNamespace;
      if (ns !== ctx.destinationNamespace) {
        issues.push({
          code: "Refused",
          path: origin,
          message: `${label}: namespace "${ns}" differs from the App's destination "${ctx.destinationNamespace}"`,
        });
        continue;
      }
      obj.metadata.namespace = ns;
    } else {
      delete obj.metadata.namespace;
      if (obj.kind === "Namespace" && obj.apiVersion === "v1") {
        if (!namespaceAllowed(ctx, obj.metadata.name)) {
          issues.push({
            code: "Refused",
            path: origin,
            message: `${label}: namespace is not allowed for Apps in "${ctx.appNamespace}" (${ctx.policySource ? `by ${ctx.policySource}` : "cluster setting PLUMB_ALLOWED_DESTINATIONS"})`,
          });
          continue;
        }
      } else if (!clusterKindAllowed(ctx, obj.apiVersion, obj.kind)) {
        issues.push({
          code: "Refused",
          path: origin,
          message: `${label}: cluster-scoped ${obj.kind} objects are not allowed for Apps${ctx.policySource ? ` in "${ctx.appNamespace}" by ${ctx.policySource}` : " (cluster setting PLUMB_ALLOWED_CLUSTER_KINDS)"}`,
        });
        continue;
      }
    }
    const key = refKey(refOf(obj));
    const first = seen.get(key);
    if (first !== undefined) {
      issues.push({
        code: "Refused",
        path: origin,
        message: `${label}: duplicate of the object at ${first}`,
      });
      continue;
    }
    seen.set(key, origin);
    obj.metadata.labels = {
      ...(isRecord(obj.metadata.labels) ? obj.metadata.labels : {}),
      ...trackingLabels(ctx.appNamespace, ctx.appName),
    };
    out.push(obj);
  }
  if (out.length > MAX_OBJECTS) {
    issues.push({
      code: "TooLarge",
      path: "spec.source",
      message: `renders ${out.length} objects; an App may have at most ${MAX_OBJECTS} (split it into several Apps)`,
    });
  }
  if (issues.length > 0) return err(issues);
  return ok(sortObjects(out));
}

function addCrdScopes(obj: KubeObject, scopes: Map<string, boolean>): void {
  if (obj.kind !== "CustomResourceDefinition" || !isRecord(obj["spec"])) return;
  const spec = obj["spec"];
  const names = isRecord(spec["names"]) ? spec["names"] : {};
  if (typeof spec["group"] !== "string" || typeof names["kind"] !== "string") return;
  const versions = Array.isArray(spec["versions"]) ? spec["versions"] : [];
  for (const v of versions) {
    if (isRecord(v) && typeof v["name"] === "string") {
      scopes.set(
        gvkKey(`${spec["group"]}/${v["name"]}`, names["kind"]),
        spec["scope"] !== "Cluster",
      );
    }
  }
}

/** Stable order: KIND_ORDER rank, then kind, namespace, name. */
export function sortObjects<
  T extends { kind: string; metadata: { name: string; namespace?: string } },
>(objects: readonly T[]): T[] {
  const rank = (k: string) => {
    const i = KIND_ORDER.indexOf(k);
    return i === -1 ? KIND_ORDER.length : i;
  };
  return [...objects].sort(
    (a, b) =>
      rank(a.kind) - rank(b.kind) ||
      cmp(a.kind, b.kind) ||
      cmp(a.metadata.namespace ?? "", b.metadata.namespace ?? "") ||
      cmp(a.metadata.name, b.metadata.name),
  );
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
