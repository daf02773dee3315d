// The Worker in workerd (wrangler dev) against the local control plane and Git server:
// a signed push, the cron handler and the queue consumer; a Kustomize overlay rendered
// by the render Worker, and the condition a Helm source gets there.
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reconcileApp } from "../../src/reconcile/index.ts";
import type { FaultProxy } from "../support/fault-proxy.ts";
import {
  fixtureFiles,
  type GitServer,
  REAL_FIXTURES,
  startGitServer,
  type TestRepo,
} from "../support/git-server.ts";
import { sendGithubPush } from "../support/github.ts";
import { startWorkerd, type Workerd } from "../support/workerd.ts";
import { pushAppliesCommit } from "./cases/push.case.ts";
import {
  awayFromSlot,
  createApp,
  createNamespace,
  deploymentImage,
  getApp,
  inventoryRefs,
  kubeconfig,
  realPorts,
  waitFor,
} from "./support.ts";

const SECRET = "worker-webhook-secret";

let git: GitServer;
let workerd: Workerd;
let proxy: FaultProxy;
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
    PLUMB_ALLOWED_DESTINATIONS: "worker-kz",
    PLUMB_API_TOKENS: JSON.stringify([{ name: "admin", token: "worker-admin-token-0123" }]),
  });
  base = workerd.base;
  proxy = workerd.proxy;
});

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
      diagnostics: () => workerd.output().slice(-6000),
    });
  });

  it("renders podinfo's Kustomize overlay in the render Worker and applies it; Helm sources are refused clearly", async () => {
    const kz = await git.createRepo(
      "worker-kz",
      {
        ...fixtureFiles(join(REAL_FIXTURES, "podinfo-kustomize-overlays")),
        // The dev overlay, moved to a namespace no other test uses.
        "worker/kustomization.yaml":
          "namespace: worker-kz\nresources:\n  - ../deploy/overlays/dev\n",
        "chart/Chart.yaml": "apiVersion: v2\nname: web\nversion: 1.0.0\n",
      },
      { allowSha1InWant: true },
    );
    await createNamespace("worker-apps");
    await createApp("worker-apps", "overlay", {
      source: { git: { url: kz.url, path: "worker" } },
      destination: { namespace: "worker-kz" },
    });
    await createApp("worker-apps", "chart", { source: { git: { url: kz.url, path: "chart" } } });
    await createApp("worker-apps", "repo-chart", {
      source: { chart: { repository: "https://charts.example.com", name: "web" } },
    });
    const sha = await kz.head();
    const res = await sendGithubPush(base, SECRET, kz.url, sha);
    expect(res.status).toBe(202);
    const app = await waitFor("overlay applied by the Worker", async () => {
      const a = await getApp("worker-apps", "overlay");
      return a.status?.syncStatus === "Synced" && a.status.revision === sha ? a : undefined;
    }).catch((err) => {
      throw new Error(`${String(err)}\n${workerd.output().slice(-6000)}`);
    });
    expect(app.status?.inventory).toHaveLength(25);
    expect(inventoryRefs(app)).toContainEqual({
      apiVersion: "v1",
      kind: "Namespace",
      name: "worker-kz",
    });
    expect(await deploymentImage("worker-kz", "backend")).toBe(
      "ghcr.io/stefanprodan/podinfo:6.14.1",
    );
    const chart = await waitFor("the Helm App's condition", async () => {
      const a = await getApp("worker-apps", "chart");
      return a.status?.conditions?.find((c) => c.type === "Ready") ? a : undefined;
    });
    expect(chart.status?.conditions?.find((c) => c.type === "Ready")).toMatchObject({
      status: "False",
      reason: "RenderFailed",
      message: expect.stringContaining("chart: Helm charts need the Node runtime"),
    });
    // A chart repository source is refused before anything is downloaded.
    await fetch(`${base}/__scheduled?cron=*+*+*+*+*`);
    const repoChart = await waitFor("the chart App's condition", async () => {
      const a = await getApp("worker-apps", "repo-chart");
      return a.status?.conditions?.find((c) => c.type === "Ready") ? a : undefined;
    });
    expect(repoChart.status?.conditions?.find((c) => c.type === "Ready")).toMatchObject({
      reason: "RenderFailed",
      message: expect.stringMatching(/^Helm charts need the Node runtime/),
    });
  });

  it("the scheduled handler reconciles exactly the due Apps through the queue; 503s are retried in the run, a failed run by the queue", async () => {
    // Apps on one repository and ref travel in one message (one fetch): a message is
    // retried whole, and the Apps that had succeeded find nothing new and write nothing again.
    await createNamespace("cron");
    const cm = (name: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}}\n`;
    const r = await git.createRepo("cron", {
      "due/cm.yaml": cm("due"),
      "flaky/cm.yaml": cm("flaky"),
      "denied/cm.yaml": cm("denied"),
      "fresh/cm.yaml": cm("fresh"),
    });
    for (const name of ["due", "flaky", "denied", "fresh"]) {
      await createApp("cron", name, { source: { git: { url: r.url, path: name } } });
    }
    // "fresh" is reconciled and its slot is nowhere near this tick (an interval whose slot,
    // derived from its uid, lies more than 10 minutes away), so it is not due.
    await awayFromSlot("cron", "fresh");
    await reconcileApp({ namespace: "cron", name: "fresh" }, realPorts(), new Date());
    // Two 503s: the transport's retries absorb them within the run.
    const flaky = proxy.inject({
      method: "GET",
      path: "/namespaces/cron/apps/flaky",
      times: 2,
      fault: { status: 503 },
    });
    // A 403 is not retried: the run fails and the queue delivers the message again.
    const denied = proxy.inject({
      method: "GET",
      path: "/namespaces/cron/apps/denied",
      fault: { status: 403, reason: "Forbidden", message: "apps is forbidden (injected)" },
    });
    const seen = proxy.requests.length;
    const gets = (name: string) =>
      proxy.requests
        .slice(seen)
        .filter(
          (x) =>
            x.method === "GET" &&
            x.path.startsWith(`/apis/plumb.dev/v1alpha1/namespaces/cron/apps/${name}`),
        ).length;
    const res = await fetch(`${base}/__scheduled?cron=*+*+*+*+*`);
    expect(res.status).toBe(200);
    // Until the second delivery (denied's) has run all three: denied is Synced once its run
    // in it is done, which may come before due's and flaky's runs in it.
    await waitFor("due, flaky and denied reconciled, twice delivered", async () => {
      const apps = await Promise.all(["due", "flaky", "denied"].map((n) => getApp("cron", n)));
      return (
        apps.every((a) => a.status?.syncStatus === "Synced") &&
        gets("due") >= 2 &&
        gets("flaky") >= 4
      );
    }).catch((err) => {
      throw new Error(`${String(err)}\n${workerd.output().slice(-6000)}`);
    });
    // denied is Synced once the message came again; its other Apps run after it: wait for
    // every run of both deliveries (one line each) before counting their requests.
    const runs = (name: string) =>
      workerd
        .output()
        .split("\n")
        .filter((l) => l.includes(`"app":"cron/${name}"`) && l.includes('"requests"')).length;
    await waitFor("both deliveries' runs", async () =>
      ["due", "flaky", "denied"].every((n) => runs(n) >= 2),
    );
    const after = proxy.requests.slice(seen);
    const statusWrites = (name: string) =>
      after.filter(
        (x) =>
          x.method === "PUT" &&
          x.path === `/apis/plumb.dev/v1alpha1/namespaces/cron/apps/${name}/status`,
      ).length;
    // One delivery, then one more for denied's 403 (the message comes back whole).
    // A run that applies reads its App once: its tracking write, conditional on the App it
    // read, stands for a re-read under the Lease (a run another one overtook starts over).
    expect(gets("fresh")).toBe(0);
    // due and flaky: one run that applies (1 read), then one that finds nothing new (1).
    expect(gets("due")).toBe(2);
    expect(flaky.hits()).toBe(2);
    expect(gets("flaky")).toBe(4);
    expect(denied.hits()).toBe(1);
    expect(gets("denied")).toBe(2);
    // due and flaky: two status writes in the first delivery (the inventory     // applying; then the outcome); the second found nothing new and wrote nothing.
    expect(statusWrites("due")).toBe(2);
    expect(statusWrites("flaky")).toBe(2);
  });

  it("sync windows are read in workerd as in Node: a deny window in Asia/Kathmandu holds a new App back", async () => {
    // A window that opened at the start of this hour in Kathmandu (UTC+5:45) and lasts 2 h.
    const now = new Date();
    const part = (type: string) =>
      Number(
        new Intl.DateTimeFormat("en-US", {
          timeZone: "Asia/Kathmandu",
          hour: "numeric",
          minute: "numeric",
          hourCycle: "h23",
        })
          .formatToParts(now)
          .find((p) => p.type === type)?.value,
      );
    const opened = new Date(
      now.getTime() -
        part("minute") * 60_000 -
        now.getUTCSeconds() * 1000 -
        now.getUTCMilliseconds(),
    );
    await createNamespace("worker-windows");
    await createApp("worker-windows", "held", {
      source: { git: { url: repo.url } },
      syncWindows: [
        {
          kind: "deny",
          schedule: `0 ${part("hour")} * * *`,
          duration: "2h",
          timeZone: "Asia/Kathmandu",
        },
      ],
    });
    const res = await fetch(`${base}/__scheduled?cron=*+*+*+*+*`);
    expect(res.status).toBe(200);
    const app = await waitFor("the App held back by its window", async () => {
      const a = await getApp("worker-windows", "held");
      return a.status?.syncStatus ? a : undefined;
    }).catch((err) => {
      throw new Error(`${String(err)}\n${workerd.output().slice(-6000)}`);
    });
    expect(app.status?.syncStatus).toBe("OutOfSync");
    expect(app.status?.revision).toBeUndefined();
    expect(app.status?.nextSyncWindow).toBe(new Date(opened.getTime() + 7_200_000).toISOString());
    expect(app.status?.conditions?.find((c) => c.type === "Ready")?.reason).toBe(
      "OutsideSyncWindow",
    );
  });
});
