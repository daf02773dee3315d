// npm start: the main job. With KUBECONFIG: `plumb reconcile --all` against that cluster.
// Without: start the local control plane (test/cluster) or reuse the one running, install the
// CRD, serve the guestbook example from a local Git server (kept running beside the control
// plane: scripts/example-git.ts), create the example Apps (the guestbook, and a spec.source.app
// one whose images are pinned by digest: no registry) and reconcile each until it is Healthy; the
// exit code is the examples' outcome.

import { execFileSync, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parse } from "yaml";
import type { KubeObject } from "../src/core/index.ts";
import { createKubePort } from "../src/kube/index.ts";
import { nodeKubeTransport } from "../src/kube/node.ts";
import { installAppCrd } from "../test/support/kube-api.ts";
import { ensureExampleGit, exampleRepoUrl } from "./example-git.ts";

const ROOT = resolve(import.meta.dirname, "..");
const CLI = join(ROOT, "functions/plumb.mjs");

/** Runs the CLI in a child process (asynchronously: the Git server lives in this one). */
function plumb(args: string[], kubeconfig: string): Promise<number> {
  const child = spawn(process.execPath, [CLI, ...args, "--kubeconfig", kubeconfig], {
    stdio: "inherit",
  });
  return new Promise((resolve) => child.on("exit", (code) => resolve(code ?? 1)));
}

/**
 * The local control plane's state and kubeconfig, and the example Git server's repositories
 * (gitignored; PLUMB_START_DIR moves both, as the e2e test of npm start does).
 */
const STATE_DIR = resolve(process.env["PLUMB_START_DIR"] ?? join(ROOT, ".plumb"));
const CLUSTER_DIR = join(STATE_DIR, "cluster");
const GIT_DIR = join(STATE_DIR, "git");
const CLUSTER_SH = join(ROOT, "test/cluster/cluster.sh");

/** True when the local control plane in CLUSTER_DIR runs and is ready (`cluster.sh status`). */
function clusterRunning(): boolean {
  try {
    execFileSync("bash", [CLUSTER_SH, "status", CLUSTER_DIR], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** Reconciles App namespace/name (`plumb reconcile`) until it is Healthy, at most 30 times. */
async function reconcileUntilHealthy(
  kube: ReturnType<typeof createKubePort>,
  kubeconfig: string,
  namespace: string,
  name: string,
): Promise<boolean> {
  for (let i = 0; i < 30; i++) {
    if (i > 0) await new Promise((r) => setTimeout(r, 2000));
    const code = await plumb(["reconcile", `${namespace}/${name}`], kubeconfig);
    const status = (await kube.getApp(namespace, name))?.status;
    if (code === 0 && status?.healthStatus === "Healthy") return true;
  }
  return false;
}

async function main(): Promise<number> {
  const existing = process.env["KUBECONFIG"];
  // The local control plane's own kubeconfig (as the `export KUBECONFIG=…` line below prints it)
  // means the local example again, not a `reconcile --all` of a cluster of one's own.
  if (existing && resolve(existing) !== resolve(CLUSTER_DIR, "kubeconfig")) {
    return plumb(["reconcile", "--all"], existing);
  }

  // A control plane a previous `npm start` left running is reused.
  if (clusterRunning()) {
    console.error(`no KUBECONFIG: reusing the local control plane in ${CLUSTER_DIR}`);
  } else {
    console.error(
      "no KUBECONFIG: starting the local control plane (the first build takes several minutes)",
    );
    try {
      execFileSync("bash", [CLUSTER_SH, "start", CLUSTER_DIR], { stdio: "inherit" });
    } catch {
      throw new Error(
        "the local control plane did not start (see above); `npm run cluster:stop` stops what is left of it, then run npm start again",
      );
    }
  }
  const kubeconfig = join(CLUSTER_DIR, "kubeconfig");
  const transport = nodeKubeTransport(kubeconfig);
  await installAppCrd(transport);
  const kube = createKubePort(transport);

  const repoUrl = exampleRepoUrl(await ensureExampleGit(GIT_DIR));
  const app = parse(
    readFileSync(join(ROOT, "infra/examples/app-guestbook.yaml"), "utf8"),
  ) as KubeObject & {
    spec: { source: { git: { url: string } } };
  };
  app.spec.source.git.url = repoUrl;
  await kube.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: "guestbook" } });
  await kube.apply(app);
  console.error(`example App guestbook/guestbook → ${repoUrl}`);
  // The service-spec example (spec.source.app): its images are pinned by digest, so it needs
  // no registry, and no Git server either (it keeps reconciling after npm start ends).
  const service = parse(
    readFileSync(join(ROOT, "infra/examples/app-service.yaml"), "utf8"),
  ) as KubeObject;
  await kube.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: "shop" } });
  await kube.apply(service);
  console.error("example App shop/shop → spec.source.app, images pinned by digest");
  // The examples' own outcomes decide the exit code, never other Apps in the cluster.
  const examples = [
    { namespace: "guestbook", name: "guestbook" },
    { namespace: "shop", name: "shop" },
  ];
  const healthy: string[] = [];
  for (const { namespace, name } of examples) {
    if (await reconcileUntilHealthy(kube, kubeconfig, namespace, name)) {
      healthy.push(`${namespace}/${name}`);
    } else {
      console.error(
        `\nThe example App ${namespace}/${name} did not become Healthy (see its lines above).`,
      );
    }
  }
  if (healthy.length > 0) {
    const which =
      healthy.length === 1 ? `App ${healthy[0]} is` : `Apps ${healthy.join(" and ")} are`;
    console.error(`\nThe example ${which} Synced and Healthy.`);
  }
  console.error(
    `The control plane and the example's Git server keep running. To use them:\n  export KUBECONFIG=${kubeconfig}\n  npm run plumb -- get -A\n  git clone ${repoUrl}   # push a change, then: npm run plumb -- reconcile guestbook/guestbook\nStop both with: npm run cluster:stop`,
  );
  return healthy.length === examples.length ? 0 : 1;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    console.error(err instanceof Error ? err.message : String(err));
    process.exitCode = 1;
  },
);
