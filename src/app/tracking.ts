// Names plumb stamps on what it owns (docs/design.md, "Tracking").

/** Field manager for every server-side apply plumb makes. */
export const FIELD_MANAGER = "plumb";
/** Finalizer that makes deletion of an App prune its inventory first. */
export const FINALIZER = "plumb.dev/finalizer";
export const LABEL_MANAGED_BY = "app.kubernetes.io/managed-by";
export const LABEL_APP = "plumb.dev/app";
export const LABEL_APP_NAMESPACE = "plumb.dev/app-namespace";
/** Annotation on an object: "true" lets plumb prune it even if it is a Namespace, PVC or CRD. */
export const ANNOTATION_PRUNE = "plumb.dev/prune";
/**
 * Annotation on an object: "true" lets plumb delete and recreate it when an apply fails on an
 * immutable field (Argo CD's Replace=true sync option, Flux's force).
 */
export const ANNOTATION_RECREATE = "plumb.dev/recreate";
/**
 * Annotation on an App: "true" lets plumb give up the objects on a cluster it cannot reach
 * (a former or the current destination, on deletion too) instead of retrying forever: they are
 * dropped from the inventory, left where they are, and an Orphaned Event says so.
 */
export const ORPHAN_UNREACHABLE = "plumb.dev/orphan-unreachable";
/** Annotation on a Namespace or CRD: "false" never prunes it. */
export const MANAGED_BY_VALUE = "plumb";

/** Labels stamped on every applied object of App `namespace/name`. */
export function trackingLabels(appNamespace: string, appName: string): Record<string, string> {
  return {
    [LABEL_MANAGED_BY]: MANAGED_BY_VALUE,
    [LABEL_APP]: appName,
    [LABEL_APP_NAMESPACE]: appNamespace,
  };
}
