// Kubernetes objects as plain JSON: the types every layer shares (render, plan, loop, adapters).

/** A Kubernetes object as JSON. `metadata.namespace` is absent for cluster-scoped kinds. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    uid?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    resourceVersion?: string;
    generation?: number;
    deletionTimestamp?: string;
    finalizers?: string[];
    ownerReferences?: unknown[];
    managedFields?: ManagedFieldsEntry[];
    [key: string]: unknown;
  };
  [key: string]: unknown;
}

/** metav1.ManagedFieldsEntry: which field manager owns which fields (server-side apply). */
export interface ManagedFieldsEntry {
  manager?: string;
  operation?: string;
  apiVersion?: string;
  fieldsType?: string;
  fieldsV1?: Record<string, unknown>;
  subresource?: string;
  time?: string;
}

/**
 * Identity of one object: enough to get, list or delete it, and the shape of an inventory
 * entry in App status. `namespace` is absent for cluster-scoped kinds.
 */
export interface ObjectRef {
  apiVersion: string;
  kind: string;
  namespace?: string | undefined;
  name: string;
}

/** An App (or any namespaced object) by namespace and name. */
export interface NamespacedName {
  namespace: string;
  name: string;
}

/** True for a plain JSON object (not null, not an array). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** One file from a source (a manifest, a chart file), path relative to the source path. */
export interface SourceFile {
  path: string;
  content: string;
}
