// Helpers for the tests on the real node: its cluster, started for the tests that use it (so
// that the rest of the suite runs without its load), and the same helpers as ../support.ts on it.
import { execFileSync, spawn } from "node:child_process";
import { rmSync } from "node:fs";
import { join, resolve } from "node:path";
import type { App } from "../../../src/app/index.ts";
import type { KubeObject } from "../../../src/core/index.ts";
import { createKubePort, type KubeTransport } from "../../../src/kube/index.ts";
import { nodeKubeTransport } from "../../../src/kube/node.ts";
import type { Ports } from "../../../src/reconcile/index.ts";
import { type RunResult, reconcileApp } from "../../../src/reconcile/index.ts";
import { createGitPort } from "../../../src/source/git.ts";
import { callApi, installAppCrd } from "../../support/kube-api.ts";
import { waitFor } from "../../support/wait.ts";

/** The images every real node has, built from busybox-static (test/cluster/node.sh). */
export const BUSYBOX = "plumb.local/busybox:1";

const ROOT = resolve(import.meta.dirname, "../../..");
let started: string | undefined;

const kubeconfig = (): string => {
  if (!started) throw new Error("the real node's cluster is not started: call startRealNode()");
  return started;
};

/** `cluster.sh VERB DIR` with the real node, its output shown. */
function clusterSh(verb: "start" | "stop", dir: string): Promise<void> {
  return new Promise((done, fail) => {
    const child = spawn("bash", [join(ROOT, "test/cluster/cluster.sh"), verb, dir], {
      stdio: ["ignore", "inherit", "inherit"],
      env: { ...process.env, PLUMB_CLUSTER_NODE: "kubelet" },
    });
    child.on("error", fail);
    child.on("exit", (code) =>
      code === 0 ? done() : fail(new Error(`cluster.sh ${verb} ${dir}: exit code ${code}`)),
    );
  });
}

/**
 * Starts a fresh control plane whose node is a real kubelet with containerd (in .plumb/e2e-node,
 * removed first), with the App CRD; or uses the one PLUMB_E2E_NODE_KUBECONFIG names.
 * @returns what stops it (and removes its directory)
 */
export async function startRealNode(): Promise<() => Promise<void>> {
  const given = process.env["PLUMB_E2E_NODE_KUBECONFIG"];
  let stop = async () => {};
  if (given) {
    started = given;
  } else {
    const dir = join(ROOT, ".plumb/e2e-node");
    await clusterSh("stop", dir);
    rmSync(dir, { recursive: true, force: true });
    await clusterSh("start", dir);
    started = join(dir, "kubeconfig");
    stop = async () => {
      await clusterSh("stop", dir);
      rmSync(dir, { recursive: true, force: true });
    };
  }
  await installAppCrd(transport());
  return stop;
}

let shared: KubeTransport | undefined;
/** The raw transport (admin credentials) of the real node's cluster. */
export function transport(): KubeTransport {
  shared ??= nodeKubeTransport(kubeconfig());
  return shared;
}

/** Ports for reconcileApp on the real node's cluster; `extra` adds engines, charts... */
export function realPorts(extra: Partial<Ports> = {}): Ports {
  return { kube: createKubePort(transport()), git: createGitPort(), holder: "e2e-node", ...extra };
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

/** GET an object or undefined on 404. */
export async function getObject(path: string): Promise<KubeObject | undefined> {
  const res = await transport()("GET", path);
  if (res.status === 404) return undefined;
  if (res.status >= 400) throw new Error(`GET ${path}: HTTP ${res.status}`);
  return res.body as KubeObject;
}

/** Creates namespace `ns` and App ns/name with `spec`. */
export async function newApp(ns: string, name: string, spec: Record<string, unknown>) {
  await api(
    "POST",
    "/api/v1/namespaces",
    { apiVersion: "v1", kind: "Namespace", metadata: { name: ns } },
    undefined,
    [409],
  );
  const res = await transport()("POST", `/apis/plumb.dev/v1alpha1/namespaces/${ns}/apps`, {
    body: {
      apiVersion: "plumb.dev/v1alpha1",
      kind: "App",
      metadata: { name, namespace: ns },
      spec,
    },
  });
  if (res.status !== 201) throw new Error(`create App: ${res.status} ${JSON.stringify(res.body)}`);
}

/** Reads an App. */
export async function getApp(ns: string, name: string): Promise<App> {
  return api("GET", `/apis/plumb.dev/v1alpha1/namespaces/${ns}/apps/${name}`);
}

/** Merge-patches an App's spec. */
export async function patchAppSpec(ns: string, name: string, spec: Record<string, unknown>) {
  return api(
    "PATCH",
    `/apis/plumb.dev/v1alpha1/namespaces/${ns}/apps/${name}`,
    { spec },
    "application/merge-patch+json",
  );
}

/** The Pods of namespace `ns` matching label `selector`. */
export async function pods(ns: string, selector: string): Promise<KubeObject[]> {
  const list = await api(
    "GET",
    `/api/v1/namespaces/${ns}/pods?labelSelector=${encodeURIComponent(selector)}`,
  );
  return (list as { items: KubeObject[] }).items;
}

/** One reconcile run of App ns/name now. */
export function reconcileOnce(ns: string, name: string, extra: Partial<Ports> = {}) {
  return reconcileApp({ namespace: ns, name }, realPorts(extra), new Date());
}

/**
 * Reconciles App ns/name once a second (as the schedule would, faster) until `pred` holds for
 * the App and the run; returns both.
 * @throws naming `what` and the App's last health and reason when waitFor gives up (a hang)
 */
export async function reconcileUntil(
  ns: string,
  name: string,
  what: string,
  pred: (a: App, r: RunResult) => boolean,
  extra: Partial<Ports> = {},
): Promise<{ app: App; run: RunResult }> {
  let last = "";
  try {
    return await waitFor(
      what,
      async () => {
        const run = await reconcileOnce(ns, name, extra);
        const app = await getApp(ns, name);
        last = `${run.outcome}${run.error ? ` (${run.error})` : ""}, ${app.status?.healthStatus}: ${app.status?.healthReason}`;
        return pred(app, run) ? { app, run } : undefined;
      },
      { everyMs: 1_000 },
    );
  } catch (err) {
    throw new Error(`${String(err)}; the last run: ${last}`);
  }
}

/** Runs the bundled kubectl against the real node's cluster; returns stdout. */
export function kubectl(args: readonly string[]): string {
  const bin = process.env["PLUMB_CLUSTER_BIN"] || join(ROOT, "test/cluster/bin/plumb-cluster");
  return execFileSync(bin, ["kubectl", "--kubeconfig", kubeconfig(), ...args], {
    encoding: "utf8",
  });
}
