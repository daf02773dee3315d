// The ports the reconcile loop does its I/O through. Adapters: src/kube (Kubernetes API),
// src/source (Git smart HTTP, OCI registries, Helm chart repositories), src/engines
// (Kustomize and Helm hosts), src/notify (HTTP for notification targets), src/dns (Cloudflare
// DNS). Tests pass fakes.
import type {
  App,
  AppPolicyObject,
  AppRow,
  AppStatus,
  ChartSource,
  GitSource,
  ImageSource,
  InventoryEntry,
} from "../app/index.ts";
import type {
  DnsRecord,
  DnsRecordInput,
  KubeObject,
  ManagedFieldsEntry,
  ObjectRef,
  Redactor,
  RunBudget,
  SourceFile,
} from "../core/index.ts";
import type { ClusterCapabilities, RenderEngines, RepoFile } from "../render/index.ts";

export type { DnsRecord, DnsRecordInput } from "../core/index.ts";

/** API resource found by discovery for a group/version/kind. */
export interface ResourceInfo {
  /** Plural resource name, e.g. "deployments". */
  resource: string;
  namespaced: boolean;
}

/** What an attempt to take a Lease found. */
export type LeaseClaim =
  | { acquired: true }
  | {
      acquired: false;
      /** holderIdentity of the Lease now. */
      holder: string;
      /** When the holder's Lease expires unless renewed (renewTime + leaseDurationSeconds). */
      expiresAt: Date;
    };

/** Kubernetes API verbs counted per run (client-go's request metrics use the same names). */
export type Verb = "get" | "list" | "create" | "update" | "patch" | "delete";
export type RequestCounts = Record<Verb, number>;

/** Options of a write a run makes under its Lease. */
export interface WriteOptions {
  /**
   * Aborted when the run may no longer write (its Lease may have passed to another run): the
   * request is not sent, nor sent again by a retry; the abort's reason (LeaseLostError) is
   * thrown.
   */
  signal?: AbortSignal;
}

/**
 * The cluster an App's objects go to (its destination): discovery, server-side apply, reads
 * and deletes. Every method may throw KubeApiError.
 */
export interface ClusterPort {
  /** Discovery: the resource for apiVersion+kind, or undefined when the API server has no such kind. */
  resourceFor(apiVersion: string, kind: string): Promise<ResourceInfo | undefined>;
  /** Server-side apply (field manager plumb unless given, force). Returns the object the server stored. */
  apply(
    obj: KubeObject,
    options?: { dryRun?: boolean; fieldManager?: string } & WriteOptions,
  ): Promise<KubeObject>;
  /** The object, or undefined when it does not exist. */
  get(ref: ObjectRef): Promise<KubeObject | undefined>;
  /** Objects of one kind matching a label selector, in `namespace` or all namespaces. */
  list(
    apiVersion: string,
    kind: string,
    labelSelector: string,
    namespace?: string,
  ): Promise<KubeObject[]>;
  /** Deletes with background propagation. "gone" when it was already absent. */
  delete(ref: ObjectRef, options?: WriteOptions): Promise<"deleted" | "gone">;
  /**
   * Replaces metadata.managedFields of the object (a JSON patch that also replaces
   * resourceVersion, so a changed object is a 409 Conflict: client-go csaupgrade's patch).
   * Returns the object the server stored.
   */
  patchManagedFields(
    ref: ObjectRef,
    managedFields: ManagedFieldsEntry[],
    resourceVersion: string,
    options?: WriteOptions,
  ): Promise<KubeObject>;
  /** Server version and served API versions (Helm's .Capabilities), from discovery. */
  capabilities?(): Promise<ClusterCapabilities>;
  /**
   * Every object in `namespace` of every namespaced kind the API server lists (metadata only;
   * Events left out): what deleting the Namespace would delete with it. Throws KubeApiError
   * when any list fails (a kind plumb may not list included).
   */
  listNamespaceContents(namespace: string): Promise<KubeObject[]>;
}

/**
 * The cluster an App lives in, as the loop needs it: the App, its status, Events, Lease and
 * Secrets — and, as a ClusterPort, the objects of Apps whose destination is this cluster.
 * Every method may throw KubeApiError.
 */
export interface KubePort extends ClusterPort {
  /** The App, or undefined when it does not exist (404). */
  getApp(namespace: string, name: string): Promise<App | undefined>;
  /** Apps in `namespace`, or in all namespaces when undefined. */
  listApps(namespace?: string): Promise<App[]>;
  /**
   * One page of the compact App list (AppRow: what the scheduled tick needs, no status beyond
   * it): at most `limit` rows, and `continue` for the next page while there is one.
   */
  listAppRows(
    namespace: string | undefined,
    limit: number,
    continueToken?: string,
  ): Promise<{ rows: AppRow[]; continue?: string }>;
  /** Sets metadata.finalizers with a resourceVersion precondition (409 on conflict). */
  setFinalizers(app: App, finalizers: string[], options?: WriteOptions): Promise<App>;
  /** Replaces the status subresource with a resourceVersion precondition (409 on conflict). */
  writeStatus(app: App, status: AppStatus, options?: WriteOptions): Promise<App>;
  /** Writes spec.operation (used by the HTTP API). */
  setOperation(app: App, operation: Record<string, unknown>): Promise<App>;
  /** A Secret's data, base64-decoded, or undefined when absent. */
  getSecret(namespace: string, name: string): Promise<Record<string, string> | undefined>;
  /**
   * Every AppPolicy in the cluster (plumb.dev/v1alpha1, cluster-scoped), or undefined when the
   * kind is not installed. May be cached by the process for a few seconds.
   */
  listPolicies(): Promise<AppPolicyObject[] | undefined>;
  /**
   * Replaces the status subresource of any object (an AppSet) with the resourceVersion
   * precondition its metadata carries (409 on conflict). Returns the object the server stored.
   */
  writeObjectStatus(obj: KubeObject, status: unknown, options?: WriteOptions): Promise<KubeObject>;
  /**
   * A JSON merge patch (RFC 7386) on an object, with its resourceVersion precondition when
   * the patch's metadata carries one. Returns the object the server stored.
   */
  mergePatch(
    ref: ObjectRef,
    patch: Record<string, unknown>,
    options?: WriteOptions,
  ): Promise<KubeObject>;
  /** Emits a core/v1 Event whose involvedObject is the App (or another plumb object: an AppSet). */
  emitEvent(
    app: Pick<App, "apiVersion" | "kind" | "metadata">,
    event: { type: "Normal" | "Warning"; reason: string; message: string },
  ): Promise<void>;
  /**
   * Takes the coordination.k8s.io/v1 Lease `name` in `namespace` for `holder` when no one holds
   * it, it is expired (renewTime + leaseDurationSeconds < now) or `holder` already holds it.
   * @returns `{acquired: false}` with the current holder and when its Lease expires otherwise
   */
  acquireLease(
    namespace: string,
    name: string,
    holder: string,
    durationSeconds: number,
  ): Promise<LeaseClaim>;
  /**
   * Renews a Lease this port acquired for `holder` (renewTime = now), conditional on the
   * version it holds.
   * @returns false when the Lease is no longer `holder`'s (taken over, deleted)
   */
  renewLease(
    namespace: string,
    name: string,
    holder: string,
    durationSeconds: number,
  ): Promise<boolean>;
  /**
   * Releases the Lease if `holder` still holds the version this port acquired or renewed
   * (a Lease taken over since stays). Throws KubeApiError when the API server fails.
   */
  releaseLease(namespace: string, name: string, holder: string): Promise<void>;
  /** Requests made so far, by verb. */
  requestCounts(): RequestCounts;
}

/** A remote cluster once it answered: its API server URL and its objects. */
export interface RemoteCluster {
  /** The API server URL the kubeconfig names (the cluster's identity in the inventory). */
  server: string;
  cluster: ClusterPort;
  /** The kubeconfig's secret strings (token, password, key): the loop redacts them everywhere. */
  credentials: string[];
  /** Requests sent to this cluster so far, by verb (the check that it answers included). */
  requestCounts?: () => RequestCounts;
}

/**
 * Remote destinations (spec.destination.cluster.secretRef): a ClusterPort from
 * kubeconfig CONTENT (read from a Secret by the loop), under the restricted policy: no exec
 * plugins, auth providers, local files or insecure-skip-tls-verify (unless the cluster-wide
 * setting allows it). What works differs by runtime (Node: CA data and client certificates;
 * workerd: a bearer token to a publicly trusted certificate).
 */
export interface DestinationPort {
  /**
   * Builds the cluster's port and checks that it answers (one request).
   * @param source names the kubeconfig in messages, e.g. "Secret team-a/prod key value"
   * @throws DestinationError ("invalid" or "unreachable"); messages carry no credential
   */
  connect(kubeconfig: string, source: string): Promise<RemoteCluster>;
}

/** Credentials for a source (Git server or registry), from the Secret in spec.source.*.secretRef. */
export interface SourceAuth {
  username?: string;
  password?: string;
  token?: string;
}

/** Git smart HTTP, as the loop needs it. Errors are thrown as SourceError. */
export interface GitPort {
  /** ls-refs: the full commit SHA that `ref` names now. */
  resolve(source: GitSource, auth: SourceAuth | undefined): Promise<string>;
  /** The files under source.path at `commit` (.yaml, .yml, .json, recursively, sorted by path). */
  fetch(source: GitSource, commit: string, auth: SourceAuth | undefined): Promise<SourceFile[]>;
  /**
   * Every directory of the repository at `commit` ("/"-joined from the root, hidden ones left
   * out), sorted: what an AppSet's Git directory generator matches its globs against.
   */
  directories?(source: GitSource, commit: string, auth: SourceAuth | undefined): Promise<string[]>;
  /**
   * What source.path holds at `commit`: plain manifests (as fetch), or, when the directory
   * holds a kustomization or Chart.yaml, the repository's files the engine renders from (the
   * path, what its kustomizations or Chart.yaml name, and `reads.valuesFiles`, relative to
   * the path).
   */
  fetchSource?(
    source: GitSource,
    commit: string,
    auth: SourceAuth | undefined,
    reads?: { valuesFiles?: readonly string[] | undefined },
  ): Promise<FetchedSource>;
}

/** A Git source at one commit (GitPort.fetchSource). `path` is normalized ("" = root). */
export type FetchedSource =
  | { kind: "manifests"; files: SourceFile[] }
  | { kind: "kustomize" | "helm"; path: string; files: RepoFile[] };

/** Helm chart repositories (https index.yaml) and OCI registries. Errors are SourceError. */
export interface ChartPort {
  /** The chart version the constraint picks now, as a revision: "<version>@sha256:<hex>". */
  resolve(source: ChartSource, auth: SourceAuth | undefined): Promise<string>;
  /** The packaged chart (.tgz) a revision names, its digest checked. */
  fetch(source: ChartSource, revision: string, auth: SourceAuth | undefined): Promise<Uint8Array>;
}

/** OCI distribution API, as the loop needs it. Errors are thrown as SourceError. */
export interface ImagePort {
  /** The manifest digest ("sha256:...") that repository:tag names now. */
  resolve(source: ImageSource, auth: SourceAuth | undefined): Promise<string>;
  /**
   * What `tag` of `repository` names now: a tag, or a semver range over the repository's tags
   * (the highest match), with the manifest digest of the tag chosen (spec.source.app).
   */
  pin(
    repository: string,
    tag: string,
    auth: SourceAuth | undefined,
  ): Promise<{ tag: string; digest: string }>;
}

/** DNS records of one zone (adapter: src/dns). Errors are thrown as Error. */
export interface DnsPort {
  /** Records of any type named exactly `name`. */
  listByName(name: string): Promise<DnsRecord[]>;
  /** Records whose comment is exactly `comment`. */
  listByComment(comment: string): Promise<DnsRecord[]>;
  create(record: DnsRecordInput): Promise<DnsRecord>;
  /** Overwrites record `id` with `record`. */
  update(id: string, record: DnsRecordInput): Promise<DnsRecord>;
  delete(id: string): Promise<void>;
}

/** DNS for the Apps' domains: the records port and the cluster settings it works with. */
export interface DnsSettings {
  records: DnsPort;
  /** Zone name ("example.com"): domains outside it get no record. */
  zone: string;
  /** What each record points at, and the record type that calls for. */
  target: string;
  type: "A" | "AAAA" | "CNAME";
  proxied: boolean;
}

/** Outgoing notifications over HTTP: what every notification target (reconcile/targets) posts with. */
export interface NotifyPort {
  /**
   * POSTs `body` to `url` with `headers`. Throws on a non-2xx answer an Error with `status`,
   * whose message names the status only — never the URL, which may be a secret (a webhook).
   * A refusal `options.settled` accepts (given the status and the answer's first 4 KiB) counts
   * as done: GitLab's 400 for a commit status already in the state sent.
   */
  post(
    url: string,
    body: string,
    headers: Record<string, string>,
    options?: PostOptions,
  ): Promise<void>;
}

/** Options of one NotifyPort POST. */
export interface PostOptions {
  /** Whether a non-2xx answer means the request's effect is already there. */
  settled?: (status: number, answer: string) => boolean;
}

/**
 * The Apps' inventories, read once and shared by the runs of one tick (reconcile/ownership.ts
 * createInventoryIndex): refKey → the Apps (`app`: uid, or namespace/name) listing the object.
 */
export interface InventoryIndex {
  claims(kube: KubePort): Promise<ReadonlyMap<string, ReadonlyArray<{ app: string; id: string }>>>;
  /**
   * What `app` owns now (its whole inventory after a sync, each entry with its cluster), for
   * the later runs of the tick.
   */
  record(app: App, inventory: readonly InventoryEntry[]): void;
  /**
   * The Apps of the same one list that depend on another App (spec.dependsOn), for waking the
   * dependants of an App a run made Ready. An App created after the list is not among them: it
   * runs on its own schedule, the wake only brings a run forward.
   */
  dependers(kube: KubePort): Promise<readonly App[]>;
}

/** Everything a reconcile needs from the outside world. */
export interface Ports {
  kube: KubePort;
  git: GitPort;
  image?: ImagePort;
  charts?: ChartPort;
  /**
   * The run's memory ceiling and the caps derived from it (PLUMB_MAX_RUN_MEMORY; absent:
   * runBudget(), 512 MiB): engine output and parse caps here, the Git caps in the GitPort.
   */
  budget?: RunBudget;
  /** Kustomize and Helm engines (absent ones refuse such sources with a clear message). */
  engines?: RenderEngines;
  notify?: NotifyPort;
  /** DNS records for the Apps' domains, when the cluster settings configure a zone. */
  dns?: DnsSettings;
  /** How spec.source.app renders Ingresses (cluster settings: ingress class, cert-manager issuer). */
  ingress?: { ingressClassName?: string; clusterIssuer?: string };
  /** Identity written into Leases and Events (e.g. "plumb-worker-<random>"). */
  holder: string;
  /** Cluster-wide policy: namespaces an App may deploy to besides its own ("*" for any). */
  allowedDestinations?: readonly string[];
  /** Cluster-wide policy: cluster-scoped kinds Apps may apply besides Namespaces. */
  allowedClusterKinds?: readonly string[];
  /** The tick's shared index of the Apps' inventories; absent: each run lists the Apps. */
  inventories?: InventoryIndex;
  /** Remote destinations; absent: Apps may deploy only to the cluster they live in. */
  destinations?: DestinationPort;
  /**
   * Cluster-wide policy: an App may prune a Namespace or CRD (opted in with plumb.dev/prune)
   * even when that deletes objects that are not the App's. Off by default.
   */
  allowCascadingPrune?: boolean;
  /** Waits `ms` milliseconds (injected so tests need not sleep). */
  sleep?: (ms: number) => Promise<void>;
  /**
   * Milliseconds since the epoch, for deadlines such as a Lease's (injected so tests can move
   * time; Date.now when absent). The run's `now` stays fixed; this clock moves.
   */
  clock?: () => number;
  /** Logger for operators; never given secrets. */
  log?: (entry: Record<string, unknown>) => void;
  /**
   * The process's secret values: a run registers its source credentials and the
   * Secrets it renders; what plumb prints (status, Events, Slack, CLI, HTTP, logs) is redacted
   * with it.
   */
  redactor?: Redactor;
}
