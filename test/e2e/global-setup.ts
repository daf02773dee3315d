// e2e global setup: one local control plane per run (test/cluster), the App CRD installed.
// Set PLUMB_E2E_KUBECONFIG to run against a control plane that is already up.
import { execFileSync } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import type { TestProject } from "vitest/node";
import { parse } from "yaml";
import {
  configurationFromKubeConfig,
  createKubePort,
  transportFromConfiguration,
} from "../../src/kube/index.ts";
import type { KubeObject } from "../../src/reconcile/index.ts";

declare module "vitest" {
  export interface ProvidedContext {
    kubeconfig: string;
  }
}

const ROOT = resolve(import.meta.dirname, "../..");

export default async function setup(project: TestProject) {
  let kubeconfig = process.env["PLUMB_E2E_KUBECONFIG"];
  let stop = async () => {};
  if (!kubeconfig) {
    const dir = join(ROOT, ".plumb/e2e-cluster");
    const cluster = (verb: "start" | "stop") =>
      execFileSync("bash", [join(ROOT, "test/cluster/cluster.sh"), verb, dir], {
        stdio: "inherit",
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
  const kube = createKubePort(transportFromConfiguration(configurationFromKubeConfig(kubeconfig)));
  const crd = parse(
    readFileSync(join(ROOT, "infra/crds/apps.plumb.dev.yaml"), "utf8"),
  ) as KubeObject;
  await kube.apply(crd);
  for (let i = 0; i < 100; i++) {
    if (await kube.resourceFor("plumb.dev/v1alpha1", "App")) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  project.provide("kubeconfig", kubeconfig);
  return stop;
}
