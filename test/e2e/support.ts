// Helpers for e2e tests against the local control plane (started by global-setup.ts).
import { execFileSync } from "node:child_process";
import { join, resolve } from "node:path";
import { inject } from "vitest";
import { type App, appRow } from "../../src/app/index.ts";
import type { KubeObject } from "../../src/core/index.ts";
import {
  createKubePort,
  type DiscoveryCache,
  type KubeAppStore,
  type KubeTransport,
} from "../../src/kube/index.ts";
import { nodeKubeTransport } from "../../src/kube/node.ts";
import { lastSlot } from "../../src/plan/index.ts";
import type { Ports } from "../../src/reconcile/index.ts";
import { createGitPort } from "../../src/source/git.ts";
import { callApi } from "../support/kube-api.ts";

export const kubeconfig = (): string => inject("kubeconfig");

let shared: KubeTransport | undefined;
/** The raw transport (admin credentials) for requests the KubePort does not make. */
export function transport(): KubeTransport {
  shared ??= nodeKubeTransport(kubeconfig());
  return shared;
}

/** A fresh KubePort (its own request counts); discovery cache per test file unless given. */
export function kubePort(discovery?: DiscoveryCache): KubeAppStore {
  return createKubePort(transport(), discovery ? { discovery } : {});
}

/** Ports for reconcileApp: the real API server and the real Git adapter. */
export function realPorts(extra: Partial<Ports> = {}): Ports {
  return { kube: kubePort(), git: createGitPort(), holder: "e2e", ...extra };
}

/** Calls the API server; throws on HTTP errors other than those in `allow`. */
export function api(
  method: string,
  path: string,
  body?: unknown,
  contentType?: string,
  allow: number[] = [],
) {
  return callApi(transport(), method, path, body, contentType, allow);
}

/** Creates a namespace (ok if it exists). */
export async function createNamespace(name: string): Promise<void> {
  await api(
    "POST",
    "/api/v1/namespaces",
    { apiVersion: "v1", kind: "Namespace", metadata: { name } },
    undefined,
    [409],
  );
}

/** Creates an App; returns the API server's answer (status and body) without throwing. */
export async function createApp(namespace: string, name: string, spec: Record<string, unknown>) {
  return transport()("POST", `/apis/plumb.dev/v1alpha1/namespaces/${namespace}/apps`, {
    body: { apiVersion: "plumb.dev/v1alpha1", kind: "App", metadata: { name, namespace }, spec },
  });
}

/** Reads an App. */
export async function getApp(namespace: string, name: string): Promise<App> {
  return api("GET", `/apis/plumb.dev/v1alpha1/namespaces/${namespace}/apps/${name}`);
}

/** Merge-patches an App's spec. */
export async function patchAppSpec(
  namespace: string,
  name: string,
  spec: Record<string, unknown>,
): Promise<App> {
  return api(
    "PATCH",
    `/apis/plumb.dev/v1alpha1/namespaces/${namespace}/apps/${name}`,
    { spec },
    "application/merge-patch+json",
  );
}

/**
 * Gives the App an interval whose slot (derived from its uid) is more than 10 minutes
 * from now, so a scheduled tick during the test does not find it due by its slot.
 */
export async function awayFromSlot(namespace: string, name: string): Promise<void> {
  const app = await getApp(namespace, name);
  const now = Date.now();
  const interval = ["8760h", "8759h", "8758h"].find(
    (i) => lastSlot({ ...appRow(app), interval: i }, now + 600_000) < now - 600_000,
  );
  await patchAppSpec(namespace, name, { interval });
}

/** GET an object or undefined on 404. */
export async function getObject(path: string): Promise<KubeObject | undefined> {
  const res = await transport()("GET", path);
  if (res.status === 404) return undefined;
  if (res.status >= 400) throw new Error(`GET ${path}: HTTP ${res.status}`);
  return res.body as KubeObject;
}

export { waitFor } from "../support/wait.ts";

/** The image of the first container of Deployment ns/name, or undefined when absent. */
export async function deploymentImage(ns: string, name: string): Promise<string | undefined> {
  const d = await getObject(`/apis/apps/v1/namespaces/${ns}/deployments/${name}`);
  const spec = d?.["spec"] as
    | { template: { spec: { containers: Array<{ image: string }> } } }
    | undefined;
  return spec?.template.spec.containers[0]?.image;
}

/**
 * Runs the bundled kubectl against the e2e cluster (stdin from `input`); returns stdout. The
 * binary is the one cluster.sh runs: `PLUMB_CLUSTER_BIN` when set, else the checkout's build.
 */
export function kubectl(args: readonly string[], input?: string): string {
  const bin =
    process.env["PLUMB_CLUSTER_BIN"] ||
    join(resolve(import.meta.dirname, "../.."), "test/cluster/bin/plumb-cluster");
  return execFileSync(bin, ["kubectl", ...args, "--kubeconfig", kubeconfig()], {
    encoding: "utf8",
    ...(input !== undefined ? { input } : {}),
  });
}

/** status.inventory as plain refs (apiVersion, kind, namespace, name): without per-object hashes. */
export function inventoryRefs(app: App): Array<{
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
}> {
  return (app.status?.inventory ?? []).map(({ apiVersion, kind, namespace, name }) => ({
    apiVersion,
    kind,
    ...(namespace ? { namespace } : {}),
    name,
  }));
}
