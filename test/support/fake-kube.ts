// The one in-memory KubePort for unit tests: of the loop's decisions and of the HTTP app (not for
// what users see: apply, prune, status and field ownership are proven against the real API
// server in test/e2e). Records what was asked of it; `fail` makes the next call of a method throw.
import type { App, AppPolicyObject, AppRow, AppStatus } from "../../src/app/index.ts";
import { API_VERSION, appRow, KIND } from "../../src/app/index.ts";
import {
  KubeApiError,
  type KubeObject,
  type ManagedFieldsEntry,
  type NamespacedName,
  type ObjectRef,
  refKey,
  refOf,
} from "../../src/core/index.ts";
import type { AppEvent } from "../../src/http/index.ts";
import type { KubePort, RequestCounts } from "../../src/reconcile/ports.ts";

const CLUSTER_SCOPED = new Set([
  "Namespace",
  "CustomResourceDefinition",
  "ClusterRole",
  "ClusterRoleBinding",
]);

/** Records of what callers asked the cluster (and, for the HTTP app, the scheduler) to do. */
export interface FakeCalls {
  setOperation: Array<{ app: string; operation: Record<string, unknown> }>;
  emitEvent: Array<{ app: string; type: string; reason: string; message: string }>;
  listApps: Array<string | undefined>;
  getApp: string[];
  trigger: Array<{ apps: NamespacedName[]; reason: string }>;
}

type Method =
  | Exclude<keyof KubePort, "requestCounts">
  | "listEvents"
  | "recordSignOut"
  | "signedOut";

/**
 * A fake API server: objects in a map, resourceVersions counting up, requests counted. It is
 * both the loop's KubePort and the HTTP app's AppStore.
 */
export class FakeKube implements KubePort {
  readonly objects = new Map<string, KubeObject>();
  readonly apps = new Map<string, App>();
  /** Events emitted on any App (reason and message). */
  readonly events: Array<{ reason: string; message: string }> = [];
  /** Events per App ("namespace/name"), oldest first, as listEvents reads them. */
  readonly appEvents = new Map<string, AppEvent[]>();
  readonly secrets = new Map<string, Record<string, string>>();
  /** Signed-out web sessions ("namespace/name" → until), as recordSignOut wrote them. */
  readonly signOuts = new Map<string, Date>();
  /** AppPolicies in the cluster; undefined: the kind is not installed. */
  policies: AppPolicyObject[] | undefined = undefined;
  /** Kinds the fake API server does not serve. */
  readonly unknownKinds = new Set<string>();
  readonly calls: FakeCalls = {
    setOperation: [],
    emitEvent: [],
    listApps: [],
    getApp: [],
    trigger: [],
  };
  /** An error the next call of that method throws (once). */
  readonly fail: Partial<Record<Method, Error>> = {};
  private readonly counts: RequestCounts = {
    get: 0,
    list: 0,
    create: 0,
    update: 0,
    patch: 0,
    delete: 0,
  };
  private readonly leases = new Map<string, { holder: string; expiresAt: number }>();
  /** The fake's clock (ms) for Lease expiry; tests may replace it. */
  clock: () => number = () => Date.now();
  private rv = 1;

  constructor(apps: readonly App[] = []) {
    for (const app of apps) this.apps.set(appKey(app.metadata.namespace, app.metadata.name), app);
  }

  /** The stored App (not a copy), for assertions. */
  app(namespace: string, name: string): App | undefined {
    return this.apps.get(appKey(namespace, name));
  }

  /** A `trigger` for HttpDeps that records into `calls.trigger`. */
  readonly trigger = async (apps: NamespacedName[], reason: string): Promise<void> => {
    this.calls.trigger.push({ apps, reason });
  };

  async getApp(ns: string, name: string) {
    this.calls.getApp.push(appKey(ns, name));
    this.maybeFail("getApp");
    this.counts.get++;
    const a = this.apps.get(appKey(ns, name));
    return a ? structuredClone(a) : undefined;
  }
  async listApps(ns?: string) {
    this.calls.listApps.push(ns);
    this.maybeFail("listApps");
    this.counts.list++;
    return [...this.apps.values()]
      .filter((a) => !ns || a.metadata.namespace === ns)
      .map((a) => structuredClone(a));
  }
  /** Pages of appRow over the Apps in insertion order; the continue token is the next index. */
  async listAppRows(ns: string | undefined, limit: number, continueToken?: string) {
    this.calls.listApps.push(ns);
    this.maybeFail("listAppRows");
    this.counts.list++;
    const all = [...this.apps.values()].filter((a) => !ns || a.metadata.namespace === ns);
    const from = continueToken ? Number(continueToken) : 0;
    const rows: AppRow[] = all.slice(from, from + limit).map((a) => appRow(structuredClone(a)));
    const next = from + limit;
    return next < all.length ? { rows, continue: String(next) } : { rows };
  }
  async setFinalizers(app: App, finalizers: string[]) {
    this.maybeFail("setFinalizers");
    this.counts.patch++;
    const cur = this.checkRv(app);
    cur.metadata.finalizers = finalizers;
    return this.bump(cur);
  }
  async writeStatus(app: App, status: AppStatus) {
    this.maybeFail("writeStatus");
    this.counts.update++;
    const cur = this.checkRv(app);
    cur.status = structuredClone(status);
    return this.bump(cur);
  }
  async setOperation(app: App, operation: Record<string, unknown>) {
    this.maybeFail("setOperation");
    this.counts.patch++;
    this.calls.setOperation.push({
      app: appKey(app.metadata.namespace, app.metadata.name),
      operation,
    });
    const cur = this.checkRv(app);
    cur.spec = { ...(cur.spec as Record<string, unknown>), operation };
    cur.metadata.generation = (cur.metadata.generation ?? 1) + 1;
    return this.bump(cur);
  }
  async getSecret(ns: string, name: string) {
    this.maybeFail("getSecret");
    this.counts.get++;
    return this.secrets.get(`${ns}/${name}`);
  }
  async resourceFor(_apiVersion: string, kind: string) {
    this.maybeFail("resourceFor");
    if (this.unknownKinds.has(kind)) return undefined;
    return { resource: `${kind.toLowerCase()}s`, namespaced: !CLUSTER_SCOPED.has(kind) };
  }
  async apply(
    obj: KubeObject,
    opts?: { dryRun?: boolean; fieldManager?: string; signal?: AbortSignal },
  ) {
    this.maybeFail("apply");
    this.counts.patch++;
    if (this.unknownKinds.has(obj.kind)) {
      throw new KubeApiError(404, "NotFound", `no kind ${obj.kind}`);
    }
    const k = this.key(refOf(obj));
    const prev = this.objects.get(k);
    const next: KubeObject = structuredClone({
      ...prev,
      ...obj,
      metadata: { ...prev?.metadata, ...obj.metadata },
    });
    next.metadata.resourceVersion = String(++this.rv);
    next.metadata.managedFields = [
      { manager: opts?.fieldManager ?? "plumb", operation: "Apply", fieldsV1: {} },
    ];
    if (!opts?.dryRun) this.objects.set(k, next);
    return structuredClone(next);
  }
  async patchManagedFields(ref: ObjectRef, managedFields: ManagedFieldsEntry[], rv: string) {
    this.maybeFail("patchManagedFields");
    this.counts.patch++;
    const o = this.objects.get(this.key(ref));
    if (!o) throw new KubeApiError(404, "NotFound", `${ref.kind} ${ref.name} not found`);
    if (o.metadata.resourceVersion !== rv) throw new KubeApiError(409, "Conflict", "changed");
    o.metadata.managedFields = structuredClone(managedFields);
    o.metadata.resourceVersion = String(++this.rv);
    return structuredClone(o);
  }
  async listPolicies() {
    this.maybeFail("listPolicies");
    this.counts.list++;
    return this.policies && structuredClone(this.policies);
  }
  async get(ref: ObjectRef) {
    this.maybeFail("get");
    this.counts.get++;
    // As the adapter: a kind discovery does not know has no path to read.
    if (this.unknownKinds.has(ref.kind)) {
      throw new KubeApiError(404, "NoKindMatch", `no kind "${ref.kind}" is served`);
    }
    const o = this.objects.get(this.key(ref));
    return o ? structuredClone(o) : undefined;
  }
  async list(apiVersion: string, kind: string, selector: string, ns?: string) {
    this.maybeFail("list");
    this.counts.list++;
    const want = Object.fromEntries(
      selector.split(",").map((p) => p.split("=") as [string, string]),
    );
    return [...this.objects.values()]
      .filter(
        (o) =>
          o.kind === kind && o.apiVersion === apiVersion && (!ns || o.metadata.namespace === ns),
      )
      .filter((o) => Object.entries(want).every(([k, v]) => o.metadata.labels?.[k] === v))
      .map((o) => structuredClone(o));
  }
  async delete(ref: ObjectRef) {
    this.maybeFail("delete");
    this.counts.delete++;
    return this.objects.delete(this.key(ref)) ? ("deleted" as const) : ("gone" as const);
  }
  async writeObjectStatus(obj: KubeObject, status: unknown) {
    this.maybeFail("writeObjectStatus");
    this.counts.update++;
    const o = this.objects.get(this.key(refOf(obj)));
    if (!o) throw new KubeApiError(404, "NotFound", `${obj.kind} ${obj.metadata.name} not found`);
    if (
      obj.metadata.resourceVersion &&
      o.metadata.resourceVersion !== obj.metadata.resourceVersion
    ) {
      throw new KubeApiError(409, "Conflict", "changed");
    }
    o["status"] = structuredClone(status);
    o.metadata.resourceVersion = String(++this.rv);
    return structuredClone(o);
  }
  async mergePatch(ref: ObjectRef, patch: Record<string, unknown>) {
    this.maybeFail("mergePatch");
    this.counts.patch++;
    const o = this.objects.get(this.key(ref));
    if (!o) throw new KubeApiError(404, "NotFound", `${ref.kind} ${ref.name} not found`);
    const merged = mergeJson(o, patch) as KubeObject;
    merged.metadata.resourceVersion = String(++this.rv);
    this.objects.set(this.key(ref), merged);
    return structuredClone(merged);
  }
  async listNamespaceContents(namespace: string) {
    this.maybeFail("listNamespaceContents");
    this.counts.list++;
    const apps = [...this.apps.values()].filter((a) => a.metadata.namespace === namespace);
    return [
      ...[...this.objects.values()].filter((o) => o.metadata.namespace === namespace),
      ...apps.map((a) => a as unknown as KubeObject),
    ].map((o) => structuredClone(o));
  }
  async emitEvent(
    app: App,
    event: { type: "Normal" | "Warning"; reason: string; message: string },
  ) {
    this.maybeFail("emitEvent");
    this.counts.create++;
    const key = appKey(app.metadata.namespace, app.metadata.name);
    this.calls.emitEvent.push({ app: key, ...event });
    this.events.push({ reason: event.reason, message: event.message });
    const list = this.appEvents.get(key) ?? [];
    list.push({
      ...event,
      count: 1,
      lastTimestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, this.rv++)).toISOString(),
    });
    this.appEvents.set(key, list);
  }
  async listEvents(app: App, limit: number): Promise<AppEvent[]> {
    this.maybeFail("listEvents");
    this.counts.list++;
    const list = this.appEvents.get(appKey(app.metadata.namespace, app.metadata.name)) ?? [];
    return [...list].reverse().slice(0, limit);
  }
  async recordSignOut(namespace: string, name: string, until: Date): Promise<void> {
    this.maybeFail("recordSignOut");
    this.counts.create++;
    this.signOuts.set(`${namespace}/${name}`, until);
  }
  async signedOut(namespace: string, name: string): Promise<boolean> {
    this.maybeFail("signedOut");
    this.counts.get++;
    return this.signOuts.has(`${namespace}/${name}`);
  }
  async acquireLease(ns: string, name: string, holder: string, durationSeconds: number) {
    this.maybeFail("acquireLease");
    this.counts.create++;
    const k = `${ns}/${name}`;
    const cur = this.leases.get(k);
    if (cur && cur.holder !== holder && cur.expiresAt > this.clock()) {
      return { acquired: false as const, holder: cur.holder, expiresAt: new Date(cur.expiresAt) };
    }
    this.leases.set(k, { holder, expiresAt: this.clock() + durationSeconds * 1000 });
    return { acquired: true as const };
  }
  async renewLease(ns: string, name: string, holder: string, durationSeconds: number) {
    this.maybeFail("renewLease");
    this.counts.update++;
    const cur = this.leases.get(`${ns}/${name}`);
    if (cur?.holder !== holder) return false;
    cur.expiresAt = this.clock() + durationSeconds * 1000;
    return true;
  }
  async releaseLease(ns: string, name: string, holder: string) {
    this.maybeFail("releaseLease");
    this.counts.delete++;
    if (this.leases.get(`${ns}/${name}`)?.holder === holder) this.leases.delete(`${ns}/${name}`);
  }
  /** Makes `holder` hold Lease ns/name until `expiresAt` (ms by `clock`); undefined frees it. */
  setLease(ns: string, name: string, lease: { holder: string; expiresAt: number } | undefined) {
    if (lease) this.leases.set(`${ns}/${name}`, lease);
    else this.leases.delete(`${ns}/${name}`);
  }
  /** The holder of Lease ns/name and when it expires, if any. */
  lease(ns: string, name: string): { holder: string; expiresAt: number } | undefined {
    return this.leases.get(`${ns}/${name}`);
  }
  requestCounts(): RequestCounts {
    return { ...this.counts };
  }

  private maybeFail(method: Method): void {
    const err = this.fail[method];
    if (err) {
      delete this.fail[method];
      throw err;
    }
  }
  private key(r: ObjectRef): string {
    return refKey({ ...r, namespace: CLUSTER_SCOPED.has(r.kind) ? undefined : r.namespace });
  }
  private bump(app: App): App {
    app.metadata.resourceVersion = String(++this.rv);
    return structuredClone(app);
  }
  private checkRv(app: App): App {
    const cur = this.apps.get(appKey(app.metadata.namespace, app.metadata.name));
    if (!cur) {
      throw new KubeApiError(404, "NotFound", `apps.plumb.dev "${app.metadata.name}" not found`);
    }
    if (
      app.metadata.resourceVersion &&
      cur.metadata.resourceVersion !== app.metadata.resourceVersion
    ) {
      throw new KubeApiError(409, "Conflict", "the object has been modified");
    }
    return cur;
  }
}

const appKey = (ns: string, name: string) => `${ns}/${name}`;

/** A fake API server with no objects. */
export function createFakeKube(): FakeKube {
  return new FakeKube();
}

/** Adds an App to the fake with generation 1. */
export function addApp(
  fake: FakeKube,
  namespace: string,
  name: string,
  spec: Record<string, unknown>,
): void {
  fake.apps.set(appKey(namespace, name), {
    apiVersion: API_VERSION,
    kind: KIND,
    metadata: { name, namespace, uid: `uid-${name}`, generation: 1, resourceVersion: "1" },
    spec,
  });
}

/** An App for tests: Git source `url`@`ref`, optional spec extras and status. */
export function testApp(
  namespace: string,
  name: string,
  opts: { url?: string; ref?: string; spec?: Record<string, unknown>; status?: AppStatus } = {},
): App {
  const git: Record<string, unknown> = {
    url: opts.url ?? `https://git.example.com/${namespace}/${name}.git`,
  };
  if (opts.ref !== undefined) git["ref"] = opts.ref;
  const app: App = {
    apiVersion: API_VERSION,
    kind: KIND,
    metadata: { namespace, name, resourceVersion: "1", generation: 1 },
    spec: { source: { git }, ...opts.spec },
  };
  if (opts.status) app.status = opts.status;
  return app;
}

/** RFC 7386 JSON merge patch: null removes, objects merge, anything else replaces. */
function mergeJson(target: unknown, patch: unknown): unknown {
  if (!patch || typeof patch !== "object" || Array.isArray(patch)) return structuredClone(patch);
  const out: Record<string, unknown> =
    target && typeof target === "object" && !Array.isArray(target)
      ? { ...(target as Record<string, unknown>) }
      : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergeJson(out[k], v);
  }
  return out;
}
