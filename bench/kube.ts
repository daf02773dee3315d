// The cluster for the benchmark: $KUBECONFIG, or a local control plane of our own
// (test/cluster/cluster.sh in .plumb/bench-cluster), with the App CRD installed; a recording
// transport; small API helpers.

import { execFileSync } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { App } from "../src/app/index.ts";
import type { KubeObject } from "../src/core/index.ts";
import type { KubeTransport } from "../src/kube/index.ts";
import { nodeKubeTransport } from "../src/kube/node.ts";
import { callApi, installAppCrd } from "../test/support/kube-api.ts";
import { sleep, waitFor } from "../test/support/wait.ts";

export const ROOT = resolve(import.meta.dirname, "..");
const CLUSTER_SH = join(ROOT, "test/cluster/cluster.sh");

export interface Cluster {
  kubeconfig: string;
  /** Directory with token and ca.crt (for the workerd path), when known. */
  dir: string;
  /** True when this run started the control plane (and stops it). */
  owned: boolean;
  stop(): void;
}

/** $KUBECONFIG, or a fresh control plane in .plumb/bench-cluster. */
export function startCluster(log: (s: string) => void): Cluster {
  const env = process.env["KUBECONFIG"];
  if (env) {
    return { kubeconfig: env, dir: dirname(env), owned: false, stop() {} };
  }
  const dir = join(ROOT, ".plumb/bench-cluster");
  // A fresh cluster each run (repeatable figures): stop a leftover one, drop its state.
  execFileSync("bash", [CLUSTER_SH, "stop", dir], { stdio: ["ignore", "ignore", "inherit"] });
  rmSync(dir, { recursive: true, force: true });
  log(`starting a local control plane in ${dir} (builds test/cluster/bin/plumb-cluster if needed)`);
  execFileSync("bash", [CLUSTER_SH, "start", dir], {
    stdio: ["ignore", "inherit", "inherit"],
    timeout: 20 * 60_000,
  });
  return {
    kubeconfig: join(dir, "kubeconfig"),
    dir,
    owned: true,
    stop() {
      execFileSync("bash", [CLUSTER_SH, "stop", dir], {
        stdio: ["ignore", "inherit", "inherit"],
        timeout: 60_000,
      });
    },
  };
}

export interface Recorded {
  method: string;
  path: string;
  contentType?: string | undefined;
  /** A list (a collection read with a label selector). */
  list?: boolean;
  /** A server-side dry run (dryRun=All). */
  dryRun?: boolean;
}

/** A transport that records every request it makes (for telling applies from discovery). */
export function recordingTransport(inner: KubeTransport): {
  transport: KubeTransport;
  log: Recorded[];
} {
  const log: Recorded[] = [];
  const transport: KubeTransport = (method, path, request) => {
    log.push({
      method,
      path,
      contentType: request?.contentType,
      list: request?.query?.["labelSelector"] !== undefined,
      dryRun: request?.query?.["dryRun"] !== undefined,
    });
    return inner(method, path, request);
  };
  return { transport, log };
}

export const isApply = (r: Recorded) =>
  r.method === "PATCH" && r.contentType === "application/apply-patch+yaml" && !r.dryRun;
/** A server-side-apply dry run (what a full comparison asks the API server). */
export const isDryRun = (r: Recorded) =>
  r.method === "PATCH" && r.contentType === "application/apply-patch+yaml" && r.dryRun === true;
/** Discovery: GET /api/v1 or /apis/<group>/<version> exactly. */
export const isDiscovery = (r: Recorded) =>
  r.method === "GET" && /^\/(api\/[^/]+|apis\/[^/]+\/[^/]+)$/.test(r.path);

export class Kube {
  readonly raw: KubeTransport;
  constructor(kubeconfig: string) {
    this.raw = nodeKubeTransport(kubeconfig);
  }

  api(method: string, path: string, body?: unknown, contentType?: string, allow: number[] = []) {
    return callApi(this.raw, method, path, body, contentType, allow);
  }

  installCrd(): Promise<void> {
    return installAppCrd(this.raw);
  }

  async namespace(name: string): Promise<void> {
    await this.api(
      "POST",
      "/api/v1/namespaces",
      {
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name, labels: { "plumb.dev/bench": "true" } },
      },
      undefined,
      [409],
    );
  }

  async createApp(namespace: string, name: string, spec: Record<string, unknown>): Promise<void> {
    await this.api("POST", `/apis/plumb.dev/v1alpha1/namespaces/${namespace}/apps`, {
      apiVersion: "plumb.dev/v1alpha1",
      kind: "App",
      metadata: { name, namespace, labels: { "plumb.dev/bench": "true" } },
      spec,
    });
  }

  getApp(namespace: string, name: string): Promise<App> {
    return this.api("GET", `/apis/plumb.dev/v1alpha1/namespaces/${namespace}/apps/${name}`);
  }

  async listApps(namespace?: string): Promise<App[]> {
    const path = namespace
      ? `/apis/plumb.dev/v1alpha1/namespaces/${namespace}/apps`
      : "/apis/plumb.dev/v1alpha1/apps";
    return ((await this.api("GET", path)) as { items: App[] }).items;
  }

  /** The first container image of a Deployment (undefined when absent). */
  async deploymentImage(namespace: string, name: string): Promise<string | undefined> {
    const res = await this.raw("GET", `/apis/apps/v1/namespaces/${namespace}/deployments/${name}`);
    if (res.status !== 200) return undefined;
    const d = res.body as {
      spec?: { template?: { spec?: { containers?: Array<{ image?: string }> } } };
    };
    return d.spec?.template?.spec?.containers?.[0]?.image;
  }

  /**
   * Deletes every App the benchmark made (finalizers removed first, so nothing waits on a
   * reconcile) and waits until they are gone; their namespaces and objects stay.
   * @returns how many Apps were deleted
   */
  async deleteApps(): Promise<number> {
    const ours = (apps: App[]) =>
      apps.filter((a) => a.metadata.labels?.["plumb.dev/bench"] === "true");
    const apps = ours(await this.listApps());
    await pool(apps, 8, async (a) => {
      const path = `/apis/plumb.dev/v1alpha1/namespaces/${a.metadata.namespace}/apps/${a.metadata.name}`;
      await this.api(
        "PATCH",
        path,
        { metadata: { finalizers: null } },
        "application/merge-patch+json",
        [404],
      );
      await this.api("DELETE", path, undefined, undefined, [404]);
    });
    await waitFor("bench Apps deleted", async () => ours(await this.listApps()).length === 0, {
      everyMs: 200,
    });
    return apps.length;
  }

  /**
   * Deletes the benchmark's Apps (see deleteApps) and the namespaces it created (labelled
   * plumb.dev/bench, and `extra`), without waiting for the namespace controller.
   */
  async cleanup(extra: string[] = []): Promise<void> {
    await this.deleteApps();
    const list = (await this.api("GET", "/api/v1/namespaces", undefined, undefined, [])) as {
      items: KubeObject[];
    };
    const names = list.items
      .filter((n) => n.metadata.labels?.["plumb.dev/bench"] === "true")
      .map((n) => n.metadata.name);
    await pool([...names, ...extra], 8, (n) =>
      this.api("DELETE", `/api/v1/namespaces/${n}`, undefined, undefined, [404, 409]),
    );
  }
}

/** Runs `fn` over `items` with at most `n` at once. */
export async function pool<T, R>(
  items: readonly T[],
  n: number,
  fn: (t: T, i: number) => Promise<R>,
): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, worker));
  return out;
}

export const fileExists = existsSync;

export { sleep, waitFor };
