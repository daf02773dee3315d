// A workload: one service (the user's, or one a need expands into) as plumb renders it — a
// Deployment or StatefulSet, its Service, its volume and its Ingress. Pure.
import type { KubeObject } from "../../core/index.ts";

/** One container environment variable, as in a Pod spec. */
export type EnvVar =
  | { name: string; value: string }
  | {
      name: string;
      valueFrom: { secretKeyRef: { name: string; key: string; optional?: boolean } };
    };

export type Probe =
  | { kind: "http"; path: string; port: string }
  | { kind: "tcp"; port: string }
  | { kind: "exec"; command: string[] };

/** Everything the renderer needs to know about one workload. */
export interface Workload {
  /** Object name of the workload (and of its Service, PVC and Ingress). */
  name: string;
  /** app.kubernetes.io/component: web, worker, database, cache. */
  component: string;
  kind: "Deployment" | "StatefulSet";
  /** Full image reference ("repo@sha256:…" for pinned images). */
  image: string;
  /** The tag deployed (app.kubernetes.io/version when it is a valid label value). */
  version?: string | undefined;
  /** The container port and its name; the Service exposes it on `servicePort`. */
  port?: { number: number; name: string; servicePort: number } | undefined;
  command?: string[] | undefined;
  args?: string[] | undefined;
  env: EnvVar[];
  /** Secrets whose keys all become variables (optional: a missing one does not block). */
  envFrom: string[];
  replicas: number;
  resources: Record<string, Record<string, string>>;
  readiness?: Probe | undefined;
  liveness?: Probe | undefined;
  volume?: { path: string; size: string; storageClassName?: string | undefined } | undefined;
  domains: string[];
  imagePullSecrets: string[];
}

/** Cluster settings the renderer uses (PLUMB_INGRESS_CLASS, PLUMB_CLUSTER_ISSUER). */
export interface IngressSettings {
  /** spec.ingressClassName of every Ingress; the cluster's default class when unset. */
  ingressClassName?: string | undefined;
  /** cert-manager ClusterIssuer; with it each Ingress gets TLS (secret <name>-tls). */
  clusterIssuer?: string | undefined;
}

/** Seconds a Pod sleeps before it stops, so endpoints and ingress controllers stop routing first. */
export const PRE_STOP_SLEEP_SECONDS = 5;
/** Mount name of a workload's volume. */
const DATA = "data";
/** app.kubernetes.io/version must be a label value. */
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/**
 * Kubernetes' recommended labels for a workload of App `app` (kubernetes.io/docs/concepts/
 * overview/working-with-objects/common-labels): name is the workload, instance the App. The
 * selector is name and instance only, so it never changes (selectors are immutable).
 */
export function selectorLabels(app: string, workload: string): Record<string, string> {
  return { "app.kubernetes.io/name": workload, "app.kubernetes.io/instance": app };
}

function labelsOf(app: string, w: Workload, withVersion: boolean): Record<string, string> {
  const labels: Record<string, string> = {
    ...selectorLabels(app, w.name),
    "app.kubernetes.io/component": w.component,
  };
  if (
    withVersion &&
    w.version !== undefined &&
    w.version.length <= 63 &&
    LABEL_VALUE.test(w.version)
  )
    labels["app.kubernetes.io/version"] = w.version;
  return labels;
}

function probe(p: Probe, extra: Record<string, number>): Record<string, unknown> {
  const how =
    p.kind === "http"
      ? { httpGet: { path: p.path, port: p.port } }
      : p.kind === "tcp"
        ? { tcpSocket: { port: p.port } }
        : { exec: { command: p.command } };
  return { ...how, ...extra };
}

/**
 * The container of a workload or job: secure defaults (no privilege escalation), the preStop
 * sleep, probes, resources and environment in a fixed key order.
 */
export function container(
  w: Pick<
    Workload,
    | "name"
    | "image"
    | "command"
    | "args"
    | "port"
    | "env"
    | "envFrom"
    | "resources"
    | "readiness"
    | "liveness"
    | "volume"
  >,
): Record<string, unknown> {
  const c: Record<string, unknown> = { name: w.name, image: w.image };
  if (w.command && w.command.length > 0) c["command"] = w.command;
  if (w.args && w.args.length > 0) c["args"] = w.args;
  if (w.port) c["ports"] = [{ name: w.port.name, containerPort: w.port.number, protocol: "TCP" }];
  if (w.env.length > 0) c["env"] = w.env;
  if (w.envFrom.length > 0)
    c["envFrom"] = w.envFrom.map((name) => ({ secretRef: { name, optional: true } }));
  c["resources"] = w.resources;
  if (w.readiness) c["readinessProbe"] = probe(w.readiness, {});
  // Liveness restarts a container: lenient, so a slow moment is not a restart loop.
  if (w.liveness)
    c["livenessProbe"] = probe(w.liveness, { periodSeconds: 10, failureThreshold: 5 });
  c["lifecycle"] = { preStop: { sleep: { seconds: PRE_STOP_SLEEP_SECONDS } } };
  c["securityContext"] = { allowPrivilegeEscalation: false };
  if (w.volume) c["volumeMounts"] = [{ name: DATA, mountPath: w.volume.path }];
  return c;
}

/**
 * The Pod spec shared by every workload and job: no service account token (an app rarely
 * calls the Kubernetes API), no Service environment variables (the App's own variables name
 * its peers), seccomp RuntimeDefault (Pod Security Standards, restricted profile).
 */
export function podSpec(
  containers: Record<string, unknown>[],
  imagePullSecrets: readonly string[],
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  const spec: Record<string, unknown> = {
    automountServiceAccountToken: false,
    enableServiceLinks: false,
    securityContext: { seccompProfile: { type: "RuntimeDefault" } },
  };
  if (imagePullSecrets.length > 0)
    spec["imagePullSecrets"] = imagePullSecrets.map((name) => ({ name }));
  return { ...spec, ...extra, containers };
}

function pvcSpec(volume: NonNullable<Workload["volume"]>): Record<string, unknown> {
  const spec: Record<string, unknown> = {
    accessModes: ["ReadWriteOnce"],
    resources: { requests: { storage: volume.size } },
  };
  if (volume.storageClassName !== undefined) spec["storageClassName"] = volume.storageClassName;
  return spec;
}

/**
 * The objects of one workload of App `app`: the Deployment (RollingUpdate that never drops
 * below the desired replicas; Recreate with a volume, as a ReadWriteOnce volume cannot be
 * mounted by two Pods) or StatefulSet (its volume a claim template), the Service when it has a
 * port, the PVC of a Deployment's volume, and an Ingress for its domains.
 */
export function renderWorkload(app: string, w: Workload, ingress: IngressSettings): KubeObject[] {
  const selector = selectorLabels(app, w.name);
  const labels = labelsOf(app, w, false);
  const versioned = labelsOf(app, w, true);
  const out: KubeObject[] = [];
  const podExtra: Record<string, unknown> = {};
  if (w.volume && w.kind === "Deployment")
    podExtra["volumes"] = [{ name: DATA, persistentVolumeClaim: { claimName: `${w.name}-data` } }];
  const template = {
    metadata: { labels: versioned },
    spec: podSpec([container(w)], w.imagePullSecrets, podExtra),
  };
  if (w.kind === "Deployment") {
    out.push({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: w.name, labels: { ...versioned } },
      spec: {
        replicas: w.replicas,
        selector: { matchLabels: { ...selector } },
        strategy: w.volume
          ? { type: "Recreate" }
          : { type: "RollingUpdate", rollingUpdate: { maxSurge: "25%", maxUnavailable: 0 } },
        template,
      },
    });
    if (w.volume) {
      out.push({
        apiVersion: "v1",
        kind: "PersistentVolumeClaim",
        metadata: { name: `${w.name}-data`, labels },
        spec: pvcSpec(w.volume),
      });
    }
  } else {
    const spec: Record<string, unknown> = {
      replicas: w.replicas,
      serviceName: w.name,
      selector: { matchLabels: { ...selector } },
      template,
    };
    if (w.volume) {
      spec["volumeClaimTemplates"] = [
        { metadata: { name: DATA, labels: { ...selector } }, spec: pvcSpec(w.volume) },
      ];
    }
    out.push({
      apiVersion: "apps/v1",
      kind: "StatefulSet",
      metadata: { name: w.name, labels: { ...versioned } },
      spec,
    });
  }
  if (w.port) {
    out.push({
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: w.name, labels },
      spec: {
        selector: { ...selector },
        ports: [
          { name: w.port.name, port: w.port.servicePort, targetPort: w.port.name, protocol: "TCP" },
        ],
      },
    });
  }
  if (w.port && w.domains.length > 0)
    out.push(renderIngress(w.name, w.port.name, labels, w.domains, ingress));
  return out;
}

function renderIngress(
  name: string,
  port: string,
  labels: Record<string, string>,
  domains: readonly string[],
  settings: IngressSettings,
): KubeObject {
  const metadata: KubeObject["metadata"] = { name, labels };
  if (settings.clusterIssuer !== undefined)
    metadata.annotations = { "cert-manager.io/cluster-issuer": settings.clusterIssuer };
  const spec: Record<string, unknown> = {};
  if (settings.ingressClassName !== undefined) spec["ingressClassName"] = settings.ingressClassName;
  if (settings.clusterIssuer !== undefined)
    spec["tls"] = [{ hosts: [...domains], secretName: `${name}-tls` }];
  spec["rules"] = domains.map((host) => ({
    host,
    http: {
      paths: [
        {
          path: "/",
          pathType: "Prefix",
          backend: { service: { name, port: { name: port } } },
        },
      ],
    },
  }));
  return { apiVersion: "networking.k8s.io/v1", kind: "Ingress", metadata, spec };
}
