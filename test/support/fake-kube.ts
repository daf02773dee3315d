// An in-memory KubePort for unit tests of the loop's decisions (not for what users see:
// apply, prune, status and field ownership are proven against the real API server in test/e2e).
import type { App, AppStatus } from "../../src/app/index.ts";
import {
  KubeApiError,
  type KubeObject,
  type KubePort,
  type Ref,
  type RequestCounts,
} from "../../src/reconcile/ports.ts";
import { refKey, refOf } from "../../src/render/index.ts";

const CLUSTER_SCOPED = new Set([
  "Namespace",
  "CustomResourceDefinition",
  "ClusterRole",
  "ClusterRoleBinding",
]);

export interface FakeKube extends KubePort {
  objects: Map<string, KubeObject>;
  apps: Map<string, App>;
  events: Array<{ reason: string; message: string }>;
  secrets: Map<string, Record<string, string>>;
  /** Kinds the fake API server does not serve. */
  unknownKinds: Set<string>;
}

/** A fake API server: objects in a map, resourceVersions counting up, requests counted. */
export function createFakeKube(): FakeKube {
  const counts: RequestCounts = { get: 0, list: 0, create: 0, update: 0, patch: 0, delete: 0 };
  let rv = 1;
  const objects = new Map<string, KubeObject>();
  const apps = new Map<string, App>();
  const leases = new Map<string, string>();
  const key = (r: Ref) =>
    refKey({ ...r, namespace: CLUSTER_SCOPED.has(r.kind) ? undefined : r.namespace });
  const appKey = (ns: string, name: string) => `${ns}/${name}`;
  const bump = (app: App): App => {
    app.metadata.resourceVersion = String(++rv);
    return structuredClone(app);
  };
  const checkRv = (app: App) => {
    const cur = apps.get(appKey(app.metadata.namespace, app.metadata.name));
    if (!cur) throw new KubeApiError(404, "NotFound", "app not found");
    if (
      app.metadata.resourceVersion &&
      cur.metadata.resourceVersion !== app.metadata.resourceVersion
    ) {
      throw new KubeApiError(409, "Conflict", "the object has been modified");
    }
    return cur;
  };
  const fake: FakeKube = {
    objects,
    apps,
    events: [],
    secrets: new Map(),
    unknownKinds: new Set(),
    async getApp(ns, name) {
      counts.get++;
      const a = apps.get(appKey(ns, name));
      return a ? structuredClone(a) : undefined;
    },
    async listApps(ns) {
      counts.list++;
      return [...apps.values()]
        .filter((a) => !ns || a.metadata.namespace === ns)
        .map((a) => structuredClone(a));
    },
    async setFinalizers(app, finalizers) {
      counts.patch++;
      const cur = checkRv(app);
      cur.metadata.finalizers = finalizers;
      return bump(cur);
    },
    async writeStatus(app, status: AppStatus) {
      counts.update++;
      const cur = checkRv(app);
      cur.status = structuredClone(status);
      return bump(cur);
    },
    async setOperation(app, operation) {
      counts.patch++;
      const cur = checkRv(app);
      (cur.spec as Record<string, unknown>)["operation"] = operation;
      cur.metadata.generation = (cur.metadata.generation ?? 1) + 1;
      return bump(cur);
    },
    async getSecret(ns, name) {
      counts.get++;
      return fake.secrets.get(`${ns}/${name}`);
    },
    async resourceFor(_apiVersion, kind) {
      if (fake.unknownKinds.has(kind)) return undefined;
      return { resource: `${kind.toLowerCase()}s`, namespaced: !CLUSTER_SCOPED.has(kind) };
    },
    async apply(obj, opts) {
      counts.patch++;
      if (fake.unknownKinds.has(obj.kind))
        throw new KubeApiError(404, "NotFound", `no kind ${obj.kind}`);
      const k = key(refOf(obj));
      const prev = objects.get(k);
      const next: KubeObject = structuredClone({
        ...prev,
        ...obj,
        metadata: { ...prev?.metadata, ...obj.metadata },
      });
      next.metadata.resourceVersion = String(++rv);
      next.metadata.managedFields = [
        { manager: opts?.fieldManager ?? "plumb", operation: "Apply", fieldsV1: {} },
      ];
      if (!opts?.dryRun) objects.set(k, next);
      return structuredClone(next);
    },
    async get(ref) {
      counts.get++;
      const o = objects.get(key(ref));
      return o ? structuredClone(o) : undefined;
    },
    async list(apiVersion, kind, selector, ns) {
      counts.list++;
      const want = Object.fromEntries(
        selector.split(",").map((p) => p.split("=") as [string, string]),
      );
      return [...objects.values()]
        .filter(
          (o) =>
            o.kind === kind && o.apiVersion === apiVersion && (!ns || o.metadata.namespace === ns),
        )
        .filter((o) => Object.entries(want).every(([k, v]) => o.metadata.labels?.[k] === v))
        .map((o) => structuredClone(o));
    },
    async delete(ref) {
      counts.delete++;
      return objects.delete(key(ref)) ? "deleted" : "gone";
    },
    async emitEvent(_app, event) {
      counts.create++;
      fake.events.push({ reason: event.reason, message: event.message });
    },
    async acquireLease(ns, name, holder) {
      const k = `${ns}/${name}`;
      const cur = leases.get(k);
      if (cur && cur !== holder) return false;
      leases.set(k, holder);
      return true;
    },
    async releaseLease(ns, name, holder) {
      if (leases.get(`${ns}/${name}`) === holder) leases.delete(`${ns}/${name}`);
    },
    requestCounts() {
      return { ...counts };
    },
  };
  return fake;
}

/** Adds an App to the fake with generation 1. */
export function addApp(
  fake: FakeKube,
  namespace: string,
  name: string,
  spec: Record<string, unknown>,
): void {
  fake.apps.set(`${namespace}/${name}`, {
    apiVersion: "plumb.dev/v1alpha1",
    kind: "App",
    metadata: { name, namespace, uid: `uid-${name}`, generation: 1, resourceVersion: "1" },
    spec,
  });
}
