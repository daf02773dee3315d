// What a workload's Pods use by name: ConfigMaps, Secrets, PersistentVolumeClaims and the
// ServiceAccount their spec names. Pure.
import type { KubeObject } from "../core/index.ts";

/** Kinds (core group) a Pod spec names, so a Pod fails to start or restart without them. */
export const USED_BY_PODS: ReadonlySet<string> = new Set([
  "ConfigMap",
  "Secret",
  "PersistentVolumeClaim",
  "ServiceAccount",
]);

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v !== null && typeof v === "object" ? (v as Obj) : {});
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);

/**
 * "Kind/name" of every object the Pod spec `spec` names: volumes (configMap, secret,
 * persistentVolumeClaim, projected sources), every container's envFrom and env valueFrom
 * (containers, initContainers, ephemeralContainers), imagePullSecrets and serviceAccountName
 * (default "default" is left out: the namespace's own). Optional references count too: the
 * kubelet starts the Pod without them, but with other content than it had.
 * Kubernetes' own list: k8s.io/kubernetes pkg/api/v1/pod/util.go (VisitPodSecretNames,
 * VisitPodConfigmapNames).
 */
export function podSpecUses(spec: unknown): Set<string> {
  const s = obj(spec);
  const out = new Set<string>();
  const add = (kind: string, name: unknown) => {
    const n = str(name);
    if (n !== undefined) out.add(`${kind}/${n}`);
  };
  for (const v of arr(s["volumes"])) {
    const volume = obj(v);
    add("ConfigMap", obj(volume["configMap"])["name"]);
    add("Secret", obj(volume["secret"])["secretName"]);
    add("PersistentVolumeClaim", obj(volume["persistentVolumeClaim"])["claimName"]);
    for (const source of arr(obj(volume["projected"])["sources"])) {
      add("ConfigMap", obj(obj(source)["configMap"])["name"]);
      add("Secret", obj(obj(source)["secret"])["name"]);
    }
  }
  for (const list of ["containers", "initContainers", "ephemeralContainers"]) {
    for (const c of arr(s[list])) {
      const container = obj(c);
      for (const from of arr(container["envFrom"])) {
        add("ConfigMap", obj(obj(from)["configMapRef"])["name"]);
        add("Secret", obj(obj(from)["secretRef"])["name"]);
      }
      for (const e of arr(container["env"])) {
        const valueFrom = obj(obj(e)["valueFrom"]);
        add("ConfigMap", obj(valueFrom["configMapKeyRef"])["name"]);
        add("Secret", obj(valueFrom["secretKeyRef"])["name"]);
      }
    }
  }
  for (const p of arr(s["imagePullSecrets"])) add("Secret", obj(p)["name"]);
  const account = str(s["serviceAccountName"]);
  if (account !== undefined && account !== "default") add("ServiceAccount", account);
  return out;
}

/**
 * Whether a Pod can still start a container: not Succeeded or Failed, and not being deleted (a
 * terminating Pod's containers are not restarted).
 */
export function podIsLive(pod: KubeObject): boolean {
  const phase = obj(pod["status"])["phase"];
  return (
    pod.metadata.deletionTimestamp === undefined && phase !== "Succeeded" && phase !== "Failed"
  );
}

/**
 * Whether a ReplicaSet still runs or may recreate Pods from its template: spec.replicas above 0
 * (1 when absent, the API's default) or Pods it still counts in status.replicas. A Deployment's
 * rollout scales the old ReplicaSet to 0 when the new one is available
 * (k8s.io/kubernetes pkg/controller/deployment/rolling.go), so this is the rollout not finished.
 */
export function replicaSetIsLive(rs: KubeObject): boolean {
  const spec = obj(rs["spec"]);
  const replicas = typeof spec["replicas"] === "number" ? spec["replicas"] : 1;
  const counted = obj(rs["status"])["replicas"];
  return replicas > 0 || (typeof counted === "number" && counted > 0);
}
