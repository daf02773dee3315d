// The resources of the Kubernetes API's built-in kinds, so that applying them needs no
// discovery request. Source: the kube-apiserver's discovery documents for the built-in groups
// (GET /api/v1 and /apis/<group>/<version>, as `kubectl api-resources` prints them) at
// Kubernetes v1.35.4, the version test/cluster builds, and the types of k8s.io/api; the e2e
// test/e2e/builtin-resources.test.ts compares every entry with that API server's discovery.
// Only group-versions that are GA and served by every Kubernetes release since 1.25 (none of
// them removed since): a cluster that serves a kind here serves it under this resource name and
// scope. Kinds of CRDs, aggregated APIs and other built-in group-versions are still discovered.
import type { ResourceInfo } from "../reconcile/ports.ts";

const ns = (resource: string): ResourceInfo => ({ resource, namespaced: true });
const cluster = (resource: string): ResourceInfo => ({ resource, namespaced: false });

/** apiVersion → kind → resource, for the built-in group-versions. */
const BUILTIN: Record<string, Record<string, ResourceInfo>> = {
  v1: {
    Binding: ns("bindings"),
    ComponentStatus: cluster("componentstatuses"),
    ConfigMap: ns("configmaps"),
    Endpoints: ns("endpoints"),
    Event: ns("events"),
    LimitRange: ns("limitranges"),
    Namespace: cluster("namespaces"),
    Node: cluster("nodes"),
    PersistentVolume: cluster("persistentvolumes"),
    PersistentVolumeClaim: ns("persistentvolumeclaims"),
    Pod: ns("pods"),
    PodTemplate: ns("podtemplates"),
    ReplicationController: ns("replicationcontrollers"),
    ResourceQuota: ns("resourcequotas"),
    Secret: ns("secrets"),
    Service: ns("services"),
    ServiceAccount: ns("serviceaccounts"),
  },
  "apps/v1": {
    ControllerRevision: ns("controllerrevisions"),
    DaemonSet: ns("daemonsets"),
    Deployment: ns("deployments"),
    ReplicaSet: ns("replicasets"),
    StatefulSet: ns("statefulsets"),
  },
  "batch/v1": { CronJob: ns("cronjobs"), Job: ns("jobs") },
  "autoscaling/v1": { HorizontalPodAutoscaler: ns("horizontalpodautoscalers") },
  "autoscaling/v2": { HorizontalPodAutoscaler: ns("horizontalpodautoscalers") },
  "policy/v1": { PodDisruptionBudget: ns("poddisruptionbudgets") },
  "networking.k8s.io/v1": {
    Ingress: ns("ingresses"),
    IngressClass: cluster("ingressclasses"),
    NetworkPolicy: ns("networkpolicies"),
  },
  "rbac.authorization.k8s.io/v1": {
    ClusterRole: cluster("clusterroles"),
    ClusterRoleBinding: cluster("clusterrolebindings"),
    Role: ns("roles"),
    RoleBinding: ns("rolebindings"),
  },
  "storage.k8s.io/v1": {
    CSIDriver: cluster("csidrivers"),
    CSINode: cluster("csinodes"),
    CSIStorageCapacity: ns("csistoragecapacities"),
    StorageClass: cluster("storageclasses"),
    VolumeAttachment: cluster("volumeattachments"),
  },
  "coordination.k8s.io/v1": { Lease: ns("leases") },
  "discovery.k8s.io/v1": { EndpointSlice: ns("endpointslices") },
  "events.k8s.io/v1": { Event: ns("events") },
  "scheduling.k8s.io/v1": { PriorityClass: cluster("priorityclasses") },
  "node.k8s.io/v1": { RuntimeClass: cluster("runtimeclasses") },
  "certificates.k8s.io/v1": { CertificateSigningRequest: cluster("certificatesigningrequests") },
  "apiextensions.k8s.io/v1": { CustomResourceDefinition: cluster("customresourcedefinitions") },
  "admissionregistration.k8s.io/v1": {
    MutatingWebhookConfiguration: cluster("mutatingwebhookconfigurations"),
    ValidatingWebhookConfiguration: cluster("validatingwebhookconfigurations"),
  },
};

/**
 * The resource (plural name, scope) of a built-in kind, without asking the API server.
 * @returns undefined for a kind outside the table (a CRD's, an aggregated API's, a built-in
 *   group-version not listed): the caller discovers it
 */
export function builtinResource(apiVersion: string, kind: string): ResourceInfo | undefined {
  const hit = BUILTIN[apiVersion]?.[kind];
  return hit && { ...hit };
}

/** Every entry of the table as [apiVersion, kind, resource] (for checking it against a cluster). */
export function builtinResources(): Array<[string, string, ResourceInfo]> {
  return Object.entries(BUILTIN).flatMap(([apiVersion, kinds]) =>
    Object.entries(kinds).map(([kind, info]): [string, string, ResourceInfo] => [
      apiVersion,
      kind,
      { ...info },
    ]),
  );
}
