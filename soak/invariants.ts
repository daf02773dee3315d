// What must hold after every wave of the soak, read straight from the API server.
import type { App } from "../src/app/index.ts";
import { isFailureReason, type KubeObject } from "../src/core/index.ts";
import type { KubeTransport } from "../src/kube/index.ts";
import type { RunResult } from "../src/reconcile/index.ts";
import { callApi } from "../test/support/kube-api.ts";

/** One App of the soak and what each of its commits renders (ConfigMap name → data.k). */
export interface SoakApp {
  namespace: string;
  name: string;
  /** Rendered ConfigMaps by commit SHA. */
  renders: Map<string, Map<string, string>>;
  /** The newest commit. */
  head: string;
}

/** A run and when its wave started. */
export interface WaveRun {
  app: SoakApp;
  result: RunResult;
}

export type ViolationKind =
  | "orphan"
  | "cluster-differs-from-status-revision"
  | "bystander-deleted"
  | "failed-run-unrecorded"
  | "live-differs-from-applied-after-full-run";

export interface Violation {
  kind: ViolationKind;
  app: string;
  detail: string;
}

const selector = (a: SoakApp) => `plumb.dev/app=${a.name},plumb.dev/app-namespace=${a.namespace}`;

/**
 * The invariants after a wave:
 * - orphan: no ConfigMap carrying the App's tracking labels outside its status.inventory;
 * - cluster-differs-from-status-revision: when status says Synced without a failure, the App's
 *   live ConfigMaps are exactly status.revision's render (names and data);
 * - bystander-deleted: every unmanaged ConfigMap the soak made is still there;
 * - failed-run-unrecorded: every run that failed wrote its failure to status (its line is
 *   only "not retryable" after a status write), or an Event says the status write failed, or
 *   it gave way to another run that recorded (a conflict, a busy, lost or stale Lease) after
 *   the wave started.
 * @param waveStart ISO time the wave started (status.lastReconciledAt of a later run is ≥ it)
 */
export async function checkWave(
  kube: KubeTransport,
  apps: readonly SoakApp[],
  bystanders: ReadonlyArray<{ namespace: string; name: string }>,
  runs: readonly WaveRun[],
  waveStart: Date,
): Promise<Violation[]> {
  const out: Violation[] = [];
  const api = (path: string) => callApi(kube, "GET", path);
  for (const a of apps) {
    const id = `${a.namespace}/${a.name}`;
    const app = (await api(
      `/apis/plumb.dev/v1alpha1/namespaces/${a.namespace}/apps/${a.name}`,
    )) as App;
    const status = app.status ?? {};
    const inventory = new Set(
      (status.inventory ?? []).filter((r) => r.kind === "ConfigMap").map((r) => r.name),
    );
    const live = (
      (await api(
        `/api/v1/namespaces/${a.namespace}/configmaps?labelSelector=${encodeURIComponent(selector(a))}`,
      )) as { items: KubeObject[] }
    ).items;
    for (const o of live) {
      if (!inventory.has(o.metadata.name)) {
        out.push({
          kind: "orphan",
          app: id,
          detail: `ConfigMap ${o.metadata.name} not in inventory`,
        });
      }
    }
    const ready = status.conditions?.find((c) => c.type === "Ready");
    const claimsSynced =
      status.syncStatus === "Synced" && ready !== undefined && !isFailureReason(ready.reason);
    if (claimsSynced && status.revision) {
      const want = a.renders.get(status.revision);
      const have = new Map(
        live.map((o) => [o.metadata.name, String((o["data"] as { k?: string } | undefined)?.k)]),
      );
      const differs =
        !want ||
        want.size !== have.size ||
        [...want].some(([name, value]) => have.get(name) !== value);
      if (differs) {
        out.push({
          kind: "cluster-differs-from-status-revision",
          app: id,
          detail: `status Synced at ${status.revision.slice(0, 8)}: want ${show(want)}, live ${show(have)}`,
        });
      }
    }
  }
  for (const b of bystanders) {
    const res = await kube("GET", `/api/v1/namespaces/${b.namespace}/configmaps/${b.name}`);
    if (res.status === 404) {
      out.push({
        kind: "bystander-deleted",
        app: "-",
        detail: `ConfigMap ${b.namespace}/${b.name}`,
      });
    }
  }
  for (const { app: a, result } of runs) {
    if (result.outcome !== "Failed" || !result.retryable) continue;
    const id = `${a.namespace}/${a.name}`;
    const error = result.error ?? "";
    if (error.startsWith("status not written")) {
      const events = (await api(
        `/api/v1/namespaces/${a.namespace}/events?fieldSelector=involvedObject.name=${a.name}`,
      )) as { items: Array<{ message?: string }> };
      if (events.items.some((e) => e.message?.includes("status not written"))) continue;
    } else if (gaveWay(error)) {
      const app = (await api(
        `/apis/plumb.dev/v1alpha1/namespaces/${a.namespace}/apps/${a.name}`,
      )) as App;
      const last = Date.parse(app.status?.lastReconciledAt ?? "");
      if (last >= waveStart.getTime()) continue;
    }
    out.push({ kind: "failed-run-unrecorded", app: id, detail: error.slice(0, 300) });
  }
  return out;
}

/** The run ended because another run had the App: a conflict, a busy, lost or stale Lease. */
function gaveWay(error: string): boolean {
  return /holds the lease|lease of App .* was lost|changed while this run waited|the object has been modified|Conflict/.test(
    error,
  );
}

function show(m: Map<string, string> | undefined): string {
  if (!m) return "(unknown revision)";
  return `{${[...m].map(([k, v]) => `${k}=${v}`).join(", ")}}`;
}

/**
 * The slow-link invariant, after the full run that follows a late write: live equals the
 * applied revision — status.revision is the App's head and Synced, and its live ConfigMaps are
 * exactly that revision's render (names and data).
 */
export async function checkApplied(kube: KubeTransport, a: SoakApp): Promise<Violation[]> {
  const id = `${a.namespace}/${a.name}`;
  const app = (await callApi(
    kube,
    "GET",
    `/apis/plumb.dev/v1alpha1/namespaces/${a.namespace}/apps/${a.name}`,
  )) as App;
  const status = app.status ?? {};
  const live = (
    (await callApi(
      kube,
      "GET",
      `/api/v1/namespaces/${a.namespace}/configmaps?labelSelector=${encodeURIComponent(selector(a))}`,
    )) as { items: KubeObject[] }
  ).items;
  const have = new Map(
    live.map((o) => [o.metadata.name, String((o["data"] as { k?: string } | undefined)?.k)]),
  );
  const want = status.revision === a.head ? a.renders.get(a.head) : undefined;
  const same =
    want !== undefined &&
    status.syncStatus === "Synced" &&
    want.size === have.size &&
    [...want].every(([name, value]) => have.get(name) === value);
  if (same) return [];
  return [
    {
      kind: "live-differs-from-applied-after-full-run",
      app: id,
      detail: `status ${status.syncStatus} at ${status.revision?.slice(0, 8)} (head ${a.head.slice(0, 8)}): want ${show(want)}, live ${show(have)}`,
    },
  ];
}
