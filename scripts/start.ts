// npm start: the main job. With KUBECONFIG: `plumb reconcile --all` against that cluster.
// Without: start the local control plane (test/cluster), install the CRD, serve the guestbook
// example from a local Git server, create the example App and reconcile until it is Healthy.

import { execFileSync, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parse } from "yaml";
import type { KubeObject } from "../src/core/index.ts";
import { createKubePort } from "../src/kube/index.ts";
import { nodeKubeTransport } from "../src/kube/node.ts";
import { fixtureFiles, startGitServer } from "../test/support/git-server.ts";
import { installAppCrd } from "../test/support/kube-api.ts";

const ROOT = resolve(import.meta.dirname, "..");
const CLI = join(ROOT, "functions/plumb.mjs");

/** Runs the CLI in a child process (asynchronously: the Git server lives in this one). */
function plumb(args: string[], kubeconfig: string): Promise<number> {
  const child = spawn(process.execPath, [CLI, ...args, "--kubeconfig", kubeconfig], {
    stdio: "inherit",
  });
  return new Promise((resolve) => child.on("exit", (code) => resolve(code ?? 1)));
}

async function main(): Promise<number> {
  const existing = process.env["KUBECONFIG"];
  if (existing) return plumb(["reconcile", "--all"], existing);

  const dir = join(ROOT, ".plumb/cluster");
  console.error(
    "no KUBECONFIG: starting the local control plane (first build takes several minutes)",
  );
  execFileSync("bash", [join(ROOT, "test/cluster/cluster.sh"), "start", dir], { stdio: "inherit" });
  const kubeconfig = join(dir, "kubeconfig");
  const transport = nodeKubeTransport(kubeconfig);
  await installAppCrd(transport);
  const kube = createKubePort(transport);

  const git = await startGitServer();
  try {
    const files = Object.fromEntries(
      Object.entries(fixtureFiles(join(ROOT, "infra/examples/guestbook"))).map(([p, c]) => [
        `guestbook/${p}`,
        c,
      ]),
    );
    const repo = await git.createRepo("apps", files);
    const app = parse(
      readFileSync(join(ROOT, "infra/examples/app-guestbook.yaml"), "utf8"),
    ) as KubeObject & {
      spec: { source: { git: { url: string } } };
    };
    app.spec.source.git.url = repo.url;
    await kube.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: "guestbook" } });
    await kube.apply(app);
    console.error(`example App guestbook/guestbook → ${repo.url}`);
    for (let i = 0; i < 30; i++) {
      const code = await plumb(["reconcile", "guestbook/guestbook"], kubeconfig);
      const status = (await kube.getApp("guestbook", "guestbook"))?.status;
      if (code === 0 && status?.healthStatus === "Healthy") break;
      await new Promise((r) => setTimeout(r, 2000));
    }
    const code = await plumb(["reconcile", "--all", "--force"], kubeconfig);
    console.error(
      `\nThe control plane keeps running: KUBECONFIG=${kubeconfig}\nStop it with: npm run cluster:stop`,
    );
    return code;
  } finally {
    await git.stop();
  }
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
