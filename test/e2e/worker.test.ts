// The Worker in workerd (wrangler dev) against the local control plane and Git server:
// a signed push, the cron handler and the queue consumer (issue #4).
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reconcileApp } from "../../src/reconcile/index.ts";
import {
  fixtureFiles,
  type GitServer,
  REAL_FIXTURES,
  startGitServer,
  type TestRepo,
} from "../support/git-server.ts";
import type { KubeProxy } from "../support/kube-proxy.ts";
import { startWorkerd, type Workerd } from "../support/workerd.ts";
import { pushAppliesCommit } from "./cases/push.case.ts";
import { createApp, createNamespace, getApp, kubeconfig, realPorts, waitFor } from "./support.ts";

const SECRET = "worker-webhook-secret";

let git: GitServer;
let workerd: Workerd;
let proxy: KubeProxy;
let base: string;
let repo: TestRepo;

beforeAll(async () => {
  git = await startGitServer();
  repo = await git.createRepo("worker", fixtureFiles(join(REAL_FIXTURES, "guestbook")), {
    allowSha1InWant: true,
  });
  await createNamespace("worker");
  await createApp("worker", "pushed", { source: { git: { url: repo.url } } });
  workerd = await startWorkerd(kubeconfig(), {
    GITHUB_WEBHOOK_SECRET: SECRET,
    PLUMB_API_TOKENS: JSON.stringify([{ name: "admin", token: "worker-admin-token-0123" }]),
  });
  base = workerd.base;
  proxy = workerd.proxy;
}, 150_000);

afterAll(async () => {
  await workerd?.stop();
  await git?.stop();
});

describe("plumb in workerd", () => {
  it("a signed push makes the App apply the new commit", async () => {
    await reconcileApp({ namespace: "worker", name: "pushed" }, realPorts(), new Date());
    await pushAppliesCommit({
      base,
      secret: SECRET,
      repo,
      namespace: "worker",
      name: "pushed",
      tag: "v8",
      timeoutMs: 60_000,
      diagnostics: () => workerd.output().slice(-6000),
    });
  });

  it("the scheduled handler reconciles exactly the due Apps through the queue, retrying a failed message", async () => {
    await createNamespace("cron");
    const cm = (name: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}}\n`;
    const r = await git.createRepo("cron", {
      "due/cm.yaml": cm("due"),
      "flaky/cm.yaml": cm("flaky"),
      "fresh/cm.yaml": cm("fresh"),
    });
    for (const name of ["due", "flaky", "fresh"]) {
      await createApp("cron", name, { source: { git: { url: r.url, path: name } } });
    }
    await reconcileApp({ namespace: "cron", name: "fresh" }, realPorts(), new Date());
    proxy.failNext("/namespaces/cron/apps/flaky", 2);
    const seen = proxy.requests.length;
    const res = await fetch(`${base}/__scheduled?cron=*+*+*+*+*`);
    expect(res.status).toBe(200);
    await waitFor(
      "due and flaky reconciled",
      async () => {
        const [due, flaky] = await Promise.all([getApp("cron", "due"), getApp("cron", "flaky")]);
        return due.status?.syncStatus === "Synced" && flaky.status?.syncStatus === "Synced";
      },
      60_000,
    ).catch((err) => {
      throw new Error(`${String(err)}\n${workerd.output().slice(-6000)}`);
    });
    const after = proxy.requests.slice(seen);
    const gets = (name: string) =>
      after.filter((x) => x.startsWith(`GET /apis/plumb.dev/v1alpha1/namespaces/cron/apps/${name}`))
        .length;
    expect(gets("fresh")).toBe(0);
    expect(gets("due")).toBe(1);
    expect(gets("flaky")).toBe(3);
  });
});
