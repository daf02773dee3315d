// Global setup of the real node's tests (PLUMB_CLUSTER_NODE=kubelet, see vitest.config.ts): a
// second control plane whose node is a real kubelet with containerd and runc
// (test/cluster/node.sh), the App CRD installed. Set PLUMB_E2E_NODE_KUBECONFIG to use one that
// is already up.

import { execFileSync } from "node:child_process";
import { rmSync } from "node:fs";
import { join, resolve } from "node:path";
import type { TestProject } from "vitest/node";
import { nodeKubeTransport } from "../../../src/kube/node.ts";
import { installAppCrd } from "../../support/kube-api.ts";

declare module "vitest" {
  export interface ProvidedContext {
    nodeKubeconfig: string;
  }
}

const ROOT = resolve(import.meta.dirname, "../../..");

export default async function setup(project: TestProject) {
  let kubeconfig = process.env["PLUMB_E2E_NODE_KUBECONFIG"];
  let stop = async () => {};
  if (!kubeconfig) {
    const dir = join(ROOT, ".plumb/e2e-node");
    const cluster = (verb: "start" | "stop") =>
      execFileSync("bash", [join(ROOT, "test/cluster/cluster.sh"), verb, dir], {
        stdio: "inherit",
        env: { ...process.env, PLUMB_CLUSTER_NODE: "kubelet" },
      });
    cluster("stop");
    rmSync(dir, { recursive: true, force: true });
    cluster("start");
    kubeconfig = join(dir, "kubeconfig");
    stop = async () => {
      cluster("stop");
      rmSync(dir, { recursive: true, force: true });
    };
  }
  await installAppCrd(nodeKubeTransport(kubeconfig));
  project.provide("nodeKubeconfig", kubeconfig);
  return stop;
}
