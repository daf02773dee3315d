// KubePort over the API server's REST API: the only place plumb talks to Kubernetes.
import type { App, AppRow, AppStatus } from "../app/index.ts";
import {
  FIELD_MANAGER,
  GROUP,
  NAMESPACE_COLUMN,
  PLURAL,
  rowFromCells,
  VERSION,
} from "../app/index.ts";
import { KubeApiError, type KubeObject, type ObjectRef } from "../core/index.ts";
import type { KubePort, RequestCounts, Verb } from "../reconcile/ports.ts";
import { readCapabilities } from "./capabilities.ts";
import { listNamespaceContents } from "./contents.ts";
import { DiscoveryCache, discover, groupVersionPath } from "./discovery.ts";
import { createLeases } from "./lease.ts";
import { createPolicyReader } from "./policies.ts";
import { enc, toError, unanswered } from "./request.ts";
import { createSignOutRecords, type SignOutRecords } from "./signouts.ts";
import type { KubeRequest, KubeResponse, KubeTransport } from "./transport.ts";

const APPS = `/apis/${GROUP}/${VERSION}`;
const processDiscovery = new DiscoveryCache();

export interface KubePortOptions {
  /** Shared discovery cache; defaults to one per process. */
  discovery?: DiscoveryCache;
  /** Clock for the discovery TTL and Lease times (injected in tests). */
  now?: () => Date;
}

/** One core/v1 Event about an App (the HTTP app's AppEvent, structurally). */
export interface AppEventRecord {
  type: string;
  reason: string;
  message: string;
  count: number;
  lastTimestamp?: string;
}

/** The KubePort plus what the HTTP app reads and writes besides (its AppStore port). */
export interface KubeAppStore extends KubePort, SignOutRecords {
  /**
   * The App's Events (fieldSelector on involvedObject kind, name and, when known, uid), newest
   * first, at most `limit`. Reads pages of {@link EVENT_PAGE} and at most
   * {@link EVENT_PAGES} of them, so an App with a flood of Events costs bounded time and memory
   * (Events expire after the API server's --event-ttl, one hour by default).
   */
  listEvents(app: App, limit: number): Promise<AppEventRecord[]>;
}

/** Apps read per list request (listApps). */
export const APP_PAGE = 500;

/** Events read per list request, and at most this many requests per listEvents. */
export const EVENT_PAGE = 250;
export const EVENT_PAGES = 4;

/**
 * Builds the KubePort on a transport. Every method throws KubeApiError for an HTTP error
 * (status and Status.reason kept), except where a 404 has a meaning of its own.
 * Server-side apply uses `application/apply-patch+yaml`, fieldManager `plumb`, force=true
 * (https://kubernetes.io/docs/reference/using-api/server-side-apply/).
 */
export function createKubePort(
  transport: KubeTransport,
  options: KubePortOptions = {},
): KubeAppStore {
  const discovery = options.discovery ?? processDiscovery;
  const now = options.now ?? (() => new Date());
  const counts: RequestCounts = { get: 0, list: 0, create: 0, update: 0, patch: 0, delete: 0 };

  async function call(
    verb: Verb,
    method: string,
    path: string,
    request?: KubeRequest,
  ): Promise<KubeResponse> {
    counts[verb] += 1;
    try {
      return await transport(method, path, request);
    } catch (err) {
      // Aborted by the caller (its Lease was lost): its reason, not a transport failure.
      if (request?.signal?.aborted) throw request.signal.reason;
      throw unanswered(err);
    }
  }
  async function ok(
    verb: Verb,
    method: string,
    path: string,
    request?: KubeRequest,
  ): Promise<unknown> {
    const res = await call(verb, method, path, request);
    if (res.status >= 400) throw toError(res, `${method} ${path}`);
    return res.body;
  }

  async function objectPath(ref: ObjectRef): Promise<string> {
    const info = await port.resourceFor(ref.apiVersion, ref.kind);
    if (!info) {
      throw new KubeApiError(
        404,
        "NoKindMatch",
        `no kind "${ref.kind}" is served in ${ref.apiVersion} (is its CustomResourceDefinition installed?)`,
      );
    }
    const base = groupVersionPath(ref.apiVersion);
    const ns = info.namespaced ? `/namespaces/${enc(ref.namespace ?? "default")}` : "";
    return `${base}${ns}/${info.resource}/${enc(ref.name)}`;
  }
  const appPath = (ns: string, name: string) =>
    `${APPS}/namespaces/${enc(ns)}/${PLURAL}/${enc(name)}`;

  const port: KubeAppStore = {
    async getApp(namespace, name) {
      const res = await call("get", "GET", appPath(namespace, name));
      if (res.status === 404) return undefined;
      if (res.status >= 400) throw toError(res, `get App ${namespace}/${name}`);
      return res.body as App;
    },
    async listApps(namespace) {
      const path = namespace
        ? `${APPS}/namespaces/${enc(namespace)}/${PLURAL}`
        : `${APPS}/${PLURAL}`;
      // In pages (one consistent snapshot through the continue token): thousands of Apps with
      // their statuses are not one response.
      const apps: App[] = [];
      let next: string | undefined;
      do {
        const query: Record<string, string> = { limit: String(APP_PAGE) };
        if (next) query["continue"] = next;
        const list = (await ok("list", "GET", path, { query })) as {
          items?: App[];
          metadata?: { continue?: string };
        };
        for (const a of list.items ?? []) {
          apps.push({ ...a, apiVersion: `${GROUP}/${VERSION}`, kind: "App" });
        }
        next = list.metadata?.continue || undefined;
      } while (next);
      return apps;
    },
    async listAppRows(namespace, limit, continueToken) {
      const path = namespace
        ? `${APPS}/namespaces/${enc(namespace)}/${PLURAL}`
        : `${APPS}/${PLURAL}`;
      const query: Record<string, string> = { limit: String(limit), includeObject: "None" };
      if (continueToken) query["continue"] = continueToken;
      const res = await call("list", "GET", path, { query, accept: TABLE });
      if (res.status >= 400) throw toError(res, `list Apps (table)`);
      return appRows(res.body);
    },
    async setFinalizers(app, finalizers, opts = {}) {
      const body = { metadata: { finalizers, resourceVersion: app.metadata.resourceVersion } };
      return (await ok("patch", "PATCH", appPath(app.metadata.namespace, app.metadata.name), {
        body,
        contentType: "application/merge-patch+json",
        ...(opts.signal ? { signal: opts.signal } : {}),
      })) as App;
    },
    async writeStatus(app, status: AppStatus, opts = {}) {
      const body = { apiVersion: app.apiVersion, kind: app.kind, metadata: app.metadata, status };
      return (await ok(
        "update",
        "PUT",
        `${appPath(app.metadata.namespace, app.metadata.name)}/status`,
        { body, ...(opts.signal ? { signal: opts.signal } : {}) },
      )) as App;
    },
    async setOperation(app, operation) {
      const body = {
        metadata: { resourceVersion: app.metadata.resourceVersion },
        spec: { operation },
      };
      return (await ok("patch", "PATCH", appPath(app.metadata.namespace, app.metadata.name), {
        body,
        contentType: "application/merge-patch+json",
      })) as App;
    },
    async getSecret(namespace, name) {
      const res = await call(
        "get",
        "GET",
        `/api/v1/namespaces/${enc(namespace)}/secrets/${enc(name)}`,
      );
      if (res.status === 404) return undefined;
      if (res.status >= 400) throw toError(res, `get Secret ${namespace}/${name}`);
      const data = (res.body as { data?: Record<string, string> }).data ?? {};
      return Object.fromEntries(Object.entries(data).map(([k, v]) => [k, decodeBase64(v)]));
    },
    capabilities() {
      return readCapabilities(discovery, transport, now().getTime(), () => {
        counts.get += 1;
      });
    },
    resourceFor(apiVersion, kind) {
      return discover(discovery, transport, apiVersion, kind, now().getTime(), () => {
        counts.get += 1;
      });
    },
    async apply(obj, opts = {}) {
      const path = await objectPath({
        apiVersion: obj.apiVersion,
        kind: obj.kind,
        name: obj.metadata.name,
        ...(obj.metadata.namespace ? { namespace: obj.metadata.namespace } : {}),
      });
      const query: Record<string, string> = {
        fieldManager: opts.fieldManager ?? FIELD_MANAGER,
        force: "true",
      };
      if (opts.dryRun) query["dryRun"] = "All";
      return (await ok("patch", "PATCH", path, {
        body: obj,
        query,
        contentType: "application/apply-patch+yaml",
        ...(opts.signal ? { signal: opts.signal } : {}),
      })) as KubeObject;
    },
    async get(ref) {
      const res = await call("get", "GET", await objectPath(ref));
      if (res.status === 404) return undefined;
      if (res.status >= 400) throw toError(res, `get ${ref.kind} ${ref.name}`);
      return res.body as KubeObject;
    },
    async list(apiVersion, kind, labelSelector, namespace) {
      const info = await port.resourceFor(apiVersion, kind);
      if (!info) return [];
      const ns = info.namespaced && namespace ? `/namespaces/${enc(namespace)}` : "";
      const path = `${groupVersionPath(apiVersion)}${ns}/${info.resource}`;
      const list = (await ok("list", "GET", path, { query: { labelSelector } })) as {
        items?: KubeObject[];
      };
      return (list.items ?? []).map((o) => ({ ...o, apiVersion, kind }));
    },
    async patchManagedFields(ref, managedFields, resourceVersion, opts = {}) {
      // client-go csaupgrade.UpgradeManagedFieldsPatch: "replace" of resourceVersion rather than
      // "test", so a concurrent change is a 409 Conflict from storage, not a 422.
      const body = [
        { op: "replace", path: "/metadata/managedFields", value: managedFields },
        { op: "replace", path: "/metadata/resourceVersion", value: resourceVersion },
      ];
      return (await ok("patch", "PATCH", await objectPath(ref), {
        body,
        contentType: "application/json-patch+json",
        ...(opts.signal ? { signal: opts.signal } : {}),
      })) as KubeObject;
    },
    async delete(ref, opts = {}) {
      const res = await call("delete", "DELETE", await objectPath(ref), {
        body: { apiVersion: "v1", kind: "DeleteOptions", propagationPolicy: "Background" },
        ...(opts.signal ? { signal: opts.signal } : {}),
      });
      if (res.status === 404) return "gone";
      if (res.status >= 400) throw toError(res, `delete ${ref.kind} ${ref.name}`);
      return "deleted";
    },
    listNamespaceContents(namespace) {
      return listNamespaceContents(call, namespace);
    },
    async writeObjectStatus(obj, status, opts = {}) {
      const ref = { apiVersion: obj.apiVersion, kind: obj.kind, name: obj.metadata.name };
      const path = await objectPath(
        obj.metadata.namespace ? { ...ref, namespace: obj.metadata.namespace } : ref,
      );
      const body = { apiVersion: obj.apiVersion, kind: obj.kind, metadata: obj.metadata, status };
      return (await ok("update", "PUT", `${path}/status`, {
        body,
        ...(opts.signal ? { signal: opts.signal } : {}),
      })) as KubeObject;
    },
    async mergePatch(ref, patch, opts = {}) {
      return (await ok("patch", "PATCH", await objectPath(ref), {
        body: patch,
        contentType: "application/merge-patch+json",
        ...(opts.signal ? { signal: opts.signal } : {}),
      })) as KubeObject;
    },
    async emitEvent(app, event) {
      const at = now().toISOString();
      const name = `${app.metadata.name}.${now().getTime().toString(16)}${Math.floor(Math.random() * 0xffff).toString(16)}`;
      await ok("create", "POST", `/api/v1/namespaces/${enc(app.metadata.namespace)}/events`, {
        body: {
          apiVersion: "v1",
          kind: "Event",
          metadata: { name, namespace: app.metadata.namespace },
          involvedObject: {
            apiVersion: app.apiVersion,
            kind: app.kind,
            name: app.metadata.name,
            namespace: app.metadata.namespace,
            uid: app.metadata.uid,
            resourceVersion: app.metadata.resourceVersion,
          },
          type: event.type,
          reason: event.reason,
          message: event.message.slice(0, 1024),
          firstTimestamp: at,
          lastTimestamp: at,
          count: 1,
          source: { component: FIELD_MANAGER },
          reportingComponent: FIELD_MANAGER,
          reportingInstance: FIELD_MANAGER,
        },
      });
    },
    async listEvents(app, limit) {
      const selector = [
        `involvedObject.kind=${app.kind || "App"}`,
        `involvedObject.name=${app.metadata.name}`,
        ...(app.metadata.uid ? [`involvedObject.uid=${app.metadata.uid}`] : []),
      ].join(",");
      const path = `/api/v1/namespaces/${enc(app.metadata.namespace)}/events`;
      const found: AppEventRecord[] = [];
      let next: string | undefined;
      for (let page = 0; page < EVENT_PAGES; page++) {
        const query: Record<string, string> = {
          fieldSelector: selector,
          limit: String(EVENT_PAGE),
        };
        if (next) query["continue"] = next;
        const list = (await ok("list", "GET", path, { query })) as {
          items?: RawEvent[];
          metadata?: { continue?: string };
        };
        for (const e of list.items ?? []) found.push(eventRecord(e));
        next = list.metadata?.continue;
        if (!next) break;
      }
      return found
        .sort((a, b) => (b.lastTimestamp ?? "").localeCompare(a.lastTimestamp ?? ""))
        .slice(0, Math.max(0, limit));
    },
    ...createLeases(call, now),
    ...createSignOutRecords(call, now),
    ...createPolicyReader(call, now),
    requestCounts() {
      return { ...counts };
    },
  };
  return port;
}

/** The Table form of a list (kubectl's `get`): the printer columns, one row per object. */
const TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io";

/**
 * The rows of a Table of Apps (rowFromCells), and its continue token. Rows without a name or
 * namespace are dropped; a Table that lacks the row columns altogether means the installed CRD
 * is older than this plumb, which a tick cannot work with.
 * @throws Error naming the missing columns
 */
function appRows(body: unknown): { rows: AppRow[]; continue?: string } {
  const table = body as {
    columnDefinitions?: Array<{ name?: string }>;
    rows?: Array<{ cells?: unknown[] }>;
    metadata?: { continue?: string };
  };
  const columns = (table.columnDefinitions ?? []).map((c) => c.name ?? "");
  for (const needed of [NAMESPACE_COLUMN, "UID", "Interval"]) {
    if (!columns.includes(needed)) {
      throw new Error(
        `the App list has no ${needed} column: install this version's CRD (infra/crds/apps.plumb.dev.yaml)`,
      );
    }
  }
  const rows: AppRow[] = [];
  for (const r of table.rows ?? []) {
    const row = rowFromCells(columns, r.cells ?? []);
    if (row) rows.push(row);
  }
  const next = table.metadata?.continue;
  return next ? { rows, continue: next } : { rows };
}

interface RawEvent {
  type?: string;
  reason?: string;
  message?: string;
  count?: number;
  lastTimestamp?: string | null;
  eventTime?: string | null;
  firstTimestamp?: string | null;
  metadata?: { creationTimestamp?: string };
}

function eventRecord(e: RawEvent): AppEventRecord {
  const at = e.lastTimestamp ?? e.eventTime ?? e.firstTimestamp ?? e.metadata?.creationTimestamp;
  const record: AppEventRecord = {
    type: e.type ?? "",
    reason: e.reason ?? "",
    message: e.message ?? "",
    count: typeof e.count === "number" && e.count > 0 ? e.count : 1,
  };
  // RFC 3339 with or without fractions: normalized so the newest-first sort compares instants.
  if (at && !Number.isNaN(Date.parse(at))) record.lastTimestamp = new Date(at).toISOString();
  return record;
}

function decodeBase64(value: string): string {
  const bin = atob(value);
  return new TextDecoder().decode(Uint8Array.from(bin, (c) => c.charCodeAt(0)));
}
