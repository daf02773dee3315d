// A second local control plane (test/cluster) beside the e2e suite's, for remote destinations
//: started and stopped by the test file that needs it, restartable on its own port,
// with plumb's identity from infra/rbac and a token-only kubeconfig for it.
import { execFile } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { stringify } from "yaml";
import type { KubeTransport } from "../../src/kube/index.ts";
import { nodeKubeTransport } from "../../src/kube/node.ts";
import { callApi } from "./kube-api.ts";
import { waitFor } from "./wait.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const CLUSTER_SH = join(ROOT, "test/cluster/cluster.sh");
const KUBECTL = process.env["PLUMB_CLUSTER_BIN"] || join(ROOT, "test/cluster/bin/plumb-cluster");
const run = promisify(execFile);

export interface SecondCluster {
  /** https://127.0.0.1:<port>, the same across restarts. */
  server: string;
  /** Admin transport (client certificate). */
  admin: KubeTransport;
  /** Calls the API server as admin; throws on HTTP errors not in `allow`. */
  api(method: string, path: string, body?: unknown, allow?: number[]): Promise<unknown>;
  /** Applies plumb's identity (infra/rbac/plumb.yaml) and returns its ServiceAccount token. */
  plumbToken(): Promise<string>;
  /** A kubeconfig for `token`: the server, its CA data and the bearer token, nothing else. */
  tokenKubeconfig(token: string): string;
  stop(): Promise<void>;
  /** Starts it again on the same port with its data. */
  start(): Promise<void>;
  /** Stops it and removes its directory. */
  destroy(): Promise<void>;
}

/** Starts a fresh control plane in DIR (removed first). Takes 5–10 s with the binary built. */
export async function startSecondCluster(dir: string): Promise<SecondCluster> {
  const sh = (verb: string, env: Record<string, string> = {}) =>
    run("bash", [CLUSTER_SH, verb, dir], {
      // The tests of a second cluster rely on the simulated node, whatever PLUMB_CLUSTER_NODE says.
      env: { ...process.env, PLUMB_CLUSTER_NODE: "sim", ...env },
      maxBuffer: 1 << 24,
    });
  await sh("stop");
  rmSync(dir, { recursive: true, force: true });
  await sh("start");
  const port = /APISERVER_PORT=(\d+)/.exec(readFileSync(join(dir, "cluster.env"), "utf8"))?.[1];
  if (!port) throw new Error(`${dir}/cluster.env names no APISERVER_PORT`);
  const admin = nodeKubeTransport(join(dir, "kubeconfig"));
  const api = (method: string, path: string, body?: unknown, allow: number[] = []) =>
    callApi(admin, method, path, body, undefined, allow);
  return {
    server: `https://127.0.0.1:${port}`,
    admin,
    api,
    async plumbToken() {
      await run(KUBECTL, [
        "kubectl",
        "--kubeconfig",
        join(dir, "kubeconfig"),
        "apply",
        "-f",
        join(ROOT, "infra/rbac/plumb.yaml"),
      ]);
      return waitFor("the plumb-token Secret's token", async () => {
        const s = (await api("GET", "/api/v1/namespaces/plumb-system/secrets/plumb-token")) as {
          data?: { token?: string };
        };
        return s.data?.token ? Buffer.from(s.data.token, "base64").toString() : undefined;
      });
    },
    tokenKubeconfig(token) {
      const ca = readFileSync(join(dir, "ca.crt")).toString("base64");
      return stringify({
        apiVersion: "v1",
        kind: "Config",
        "current-context": "b",
        clusters: [
          {
            name: "b",
            cluster: { server: `https://127.0.0.1:${port}`, "certificate-authority-data": ca },
          },
        ],
        users: [{ name: "plumb", user: { token } }],
        contexts: [{ name: "b", context: { cluster: "b", user: "plumb" } }],
      });
    },
    async stop() {
      await sh("stop");
    },
    async start() {
      await sh("start", { PLUMB_CLUSTER_APISERVER_PORT: port });
    },
    async destroy() {
      await sh("stop");
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
