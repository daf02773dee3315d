// e2e global setup: the programs the tests run (promtool, Chromium), the render engines built,
// one local control plane per run (test/cluster), the App CRD installed.
// Set PLUMB_E2E_KUBECONFIG to run against a control plane that is already up.

import { execFileSync } from "node:child_process";
import { rmSync } from "node:fs";
import { join, resolve } from "node:path";
import type { TestProject } from "vitest/node";
import { nodeKubeTransport } from "../../src/kube/node.ts";
import { installAppCrd } from "../support/kube-api.ts";
import { testTool } from "../support/tools.ts";

declare module "vitest" {
  export interface ProvidedContext {
    kubeconfig: string;
  }
}

const ROOT = resolve(import.meta.dirname, "../..");

export default async function setup(project: TestProject) {
  // First: a tool that cannot be obtained fails the run at once, before the long builds.
  project.provide("promtool", await testTool("promtool"));
  project.provide("chromium", await testTool("chromium"));
  // The Kustomize and Helm engines, from Go modules (cached; rebuilt when their sources change).
  execFileSync("bash", [join(ROOT, "scripts/build-engines.sh")], { stdio: "inherit" });
  let kubeconfig = process.env["PLUMB_E2E_KUBECONFIG"];
  let stop = async () => {};
  if (!kubeconfig) {
    const dir = join(ROOT, ".plumb/e2e-cluster");
    const cluster = (verb: "start" | "stop") =>
      execFileSync("bash", [join(ROOT, "test/cluster/cluster.sh"), verb, dir], {
        stdio: "inherit",
        // These tests rely on the simulated node's conventions (any image runs); the real node's
        // tests (PLUMB_CLUSTER_NODE=kubelet) start a cluster of their own (node/support.ts).
        env: { ...process.env, PLUMB_CLUSTER_NODE: "sim" },
      });
    // A fresh control plane every run: cluster.sh keeps etcd data across starts of one DIR.
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
  project.provide("kubeconfig", kubeconfig);
  return stop;
}
