// Alerts on the real control plane: Recovered once after a problem however many runs
// it takes, and what each run tells Slack.
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createNotifier } from "../../src/notify/index.ts";
import { reconcileApp } from "../../src/reconcile/index.ts";
import {
  fixtureFiles,
  type GitServer,
  REAL_FIXTURES,
  startGitServer,
} from "../support/git-server.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import {
  api,
  createApp,
  createNamespace,
  getApp,
  getObject,
  kubectl,
  realPorts,
  waitFor,
} from "./support.ts";

let git: GitServer;
let slack: Receiver;
beforeAll(async () => {
  git = await startGitServer();
  slack = await startReceiver();
});
afterAll(async () => {
  await git?.stop();
  await slack?.stop();
});

const guestbook = () => fixtureFiles(join(REAL_FIXTURES, "guestbook"));
const run = (ns: string) =>
  reconcileApp({ namespace: ns, name: "app" }, realPorts({ notify: createNotifier() }), new Date());
/** The Slack texts received for namespace `ns`, in order. */
const texts = (ns: string) =>
  slack.received
    .map((r) => (r.body as { text: string }).text)
    .filter((t) => t.startsWith(`[${ns}/app]`));

async function subscribedApp(ns: string, url: string): Promise<void> {
  await createNamespace(ns);
  await api("POST", `/api/v1/namespaces/${ns}/secrets`, {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "slack" },
    stringData: { webhookURL: `${slack.url}/services/${ns}` },
  });
  await createApp(ns, "app", {
    source: { git: { url } },
    notifications: { slack: { secretRef: { name: "slack" } } },
  });
}

/**
 * guestbook's Deployment with `image`; with `fastDeadline`, a progress deadline of 1 s
 * (Degraded fast). Only for an image that never runs: a good rollout on a loaded machine may
 * take longer than 1 s, which would make it Degraded too.
 */
function deployment(image: string, fastDeadline = false): string {
  const yaml = guestbook()["guestbook-ui-deployment.yaml"]!.replace(
    "image: gcr.io/google-samples/gb-frontend:v5",
    `image: ${image}`,
  );
  return fastDeadline
    ? yaml.replace("replicas: 1", "replicas: 1\n  progressDeadlineSeconds: 1")
    : yaml;
}

describe("Recovered", () => {
  it("is sent once when a Git outage clears (Ready False SourceFailed → True)", async () => {
    const repo = await git.createRepo("outage", guestbook());
    await subscribedApp("alert-outage", repo.url);
    await run("alert-outage");
    const c1 = (await repo.head()).slice(0, 7);
    expect(texts("alert-outage")).toEqual([`[alert-outage/app] Synced: applied revision ${c1}`]);

    git.setFault({ status: 503 });
    try {
      await run("alert-outage");
      await run("alert-outage");
    } finally {
      git.setFault(undefined);
    }
    const failing = (await getApp("alert-outage", "app")).status;
    expect(failing?.conditions?.find((c) => c.type === "Ready")).toMatchObject({
      status: "False",
      reason: "SourceFailed",
    });
    expect(failing?.openAlert).toMatchObject({ event: "Failed" });

    // Runs as the schedule would make them, until healthy again (how many depends on how fast
    // the Pods are Ready again on a loaded machine); then each message was sent once.
    const recovered = await waitFor("Ready and healthy again", async () => {
      await run("alert-outage");
      const status = (await getApp("alert-outage", "app")).status;
      return status?.healthStatus === "Healthy" && status.openAlert === undefined && status;
    });
    expect(recovered.conditions?.find((c) => c.type === "Ready")?.status).toBe("True");
    await run("alert-outage");
    const sent = texts("alert-outage").slice(1);
    expect(sent).toHaveLength(3);
    expect(sent[0]).toMatch(/^\[alert-outage\/app\] Failed: SourceFailed: .*503/);
    // Nothing new to apply: in sync again, and healthy again.
    expect(sent[1]).toBe(`[alert-outage/app] Synced: in sync again at revision ${c1}`);
    expect(sent[2]).toMatch(
      /^\[alert-outage\/app\] Recovered: healthy again after Failed: SourceFailed: .*503/,
    );
  });

  it("is sent once after Degraded → Progressing → Healthy", async () => {
    // kubelet-sim leaves an image tagged :bad in ImagePullBackOff; with a progress deadline of
    // 1 s the Deployment controller marks the rollout ProgressDeadlineExceeded: Degraded.
    const repo = await git.createRepo("degraded", {
      ...guestbook(),
      "guestbook-ui-deployment.yaml": deployment("gcr.io/google-samples/gb-frontend:bad", true),
    });
    await subscribedApp("alert-degraded", repo.url);
    const health: string[] = [];
    await waitFor("Degraded", async () => {
      const r = await run("alert-degraded");
      health.push(r.healthStatus ?? "");
      return r.healthStatus === "Degraded";
    });
    expect(texts("alert-degraded")).toEqual([
      expect.stringMatching(/^\[alert-degraded\/app\] Synced: applied revision /),
      expect.stringMatching(/^\[alert-degraded\/app\] Degraded: Deployment .*guestbook-ui/),
    ]);

    await repo.commit({
      "guestbook-ui-deployment.yaml": deployment("gcr.io/google-samples/gb-frontend:v5"),
    });
    const after: string[] = [];
    await waitFor("Healthy", async () => {
      const r = await run("alert-degraded");
      after.push(r.healthStatus ?? "");
      return r.healthStatus === "Healthy";
    });
    await run("alert-degraded");
    // The run that applied the fix saw the rollout in progress; a later one saw it done.
    expect(after[0]).toBe("Progressing");
    expect(texts("alert-degraded").slice(2)).toEqual([
      expect.stringMatching(/^\[alert-degraded\/app\] Synced: applied revision /),
      expect.stringMatching(
        /^\[alert-degraded\/app\] Recovered: healthy again after Degraded: Deployment .*guestbook-ui/,
      ),
    ]);
    expect((await getApp("alert-degraded", "app")).status?.openAlert).toBeUndefined();
  });
});

describe("Slack redelivery", () => {
  it("keeps an undelivered notification in status and sends it once when Slack works again, for up to 1 hour", async () => {
    const repo = await git.createRepo("redeliver", guestbook());
    await subscribedApp("alert-redeliver", repo.url);
    const c1 = (await repo.head()).slice(0, 7);
    const events = async () =>
      (await api("GET", "/api/v1/namespaces/alert-redeliver/events")).items
        .filter((e: { reason: string }) => e.reason === "NotificationFailed")
        .map((e: { message: string }) => e.message);

    slack.setStatus(500);
    const t0 = new Date();
    let t1 = t0;
    try {
      await run("alert-redeliver");
      await run("alert-redeliver");
    } finally {
      t1 = new Date();
      slack.setStatus(200);
    }
    expect(slack.refused.filter((r) => r.path === "/services/alert-redeliver")).toHaveLength(2);
    const waiting = (await getApp("alert-redeliver", "app")).status;
    expect(waiting?.pendingNotifications).toEqual([
      {
        target: "slack",
        event: "Synced",
        message: `applied revision ${c1}`,
        at: expect.any(String),
        attempts: 2,
        revision: waiting?.revision,
      },
    ]);
    expect(waiting?.revision?.startsWith(c1)).toBe(true);
    const at = waiting?.pendingNotifications?.[0]?.at ?? "";
    // A tick comes back for it (30 s after the first attempt, 60 s after the second, which
    // ended by t1 however long the runs took; status times have whole seconds).
    expect(Date.parse(waiting?.redeliverAt ?? "")).toBeLessThanOrEqual(t1.getTime() + 61_000);
    expect(Date.parse(waiting?.redeliverAt ?? "")).toBeGreaterThan(t0.getTime());
    expect(await events()).toEqual([
      "Slack: HTTP 500 from the webhook; 1 notification(s) kept in status.pendingNotifications and sent on a later run, for up to 1h after each happened",
      "Slack: HTTP 500 from the webhook; 1 notification(s) kept in status.pendingNotifications and sent on a later run, for up to 1h after each happened",
    ]);

    await run("alert-redeliver");
    await run("alert-redeliver");
    expect(texts("alert-redeliver")).toEqual([
      `[alert-redeliver/app] Synced: applied revision ${c1} (delayed: happened at ${at})`,
    ]);
    expect((await getApp("alert-redeliver", "app")).status?.pendingNotifications).toBeUndefined();

    // Undelivered for longer than an hour: given up, with an Event, never sent.
    const c2 = await repo.commit({
      "extra.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: extra}\n",
    });
    slack.setStatus(500);
    try {
      await run("alert-redeliver");
    } finally {
      slack.setStatus(200);
    }
    const kept = (await getApp("alert-redeliver", "app")).status?.pendingNotifications;
    expect(kept?.map((p) => p.message)).toEqual([`applied revision ${c2.slice(0, 7)}`]);
    await reconcileApp(
      { namespace: "alert-redeliver", name: "app" },
      realPorts({ notify: createNotifier() }),
      new Date(Date.now() + 61 * 60_000),
    );
    expect(texts("alert-redeliver")).toHaveLength(1);
    expect((await getApp("alert-redeliver", "app")).status?.pendingNotifications).toBeUndefined();
    expect((await events()).at(-1)).toBe(
      `Slack: gave up on 1 undelivered notification(s): Synced at ${kept?.[0]?.at}`,
    );
  });
});

describe("selfHeal in a steady App", () => {
  it("records, emits and announces every correction, naming who changed what", async () => {
    const repo = await git.createRepo("heal", guestbook());
    await createNamespace("alert-heal");
    await api("POST", "/api/v1/namespaces/alert-heal/secrets", {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "slack" },
      stringData: { webhookURL: `${slack.url}/services/alert-heal` },
    });
    await createApp("alert-heal", "app", {
      source: { git: { url: repo.url } },
      syncPolicy: { selfHeal: true },
      notifications: { slack: { secretRef: { name: "slack" }, on: ["DriftCorrected"] } },
    });
    await run("alert-heal");
    await run("alert-heal");
    const steady = (await getApp("alert-heal", "app")).metadata.resourceVersion;
    // A steady run wrote nothing: the next correction is all that changes.
    expect((await getApp("alert-heal", "app")).metadata.resourceVersion).toBe(steady);

    kubectl(["scale", "deployment/guestbook-ui", "--replicas=3", "-n", "alert-heal"]);
    const t = new Date();
    await run("alert-heal");
    const replicas = async () =>
      (
        (await getObject("/apis/apps/v1/namespaces/alert-heal/deployments/guestbook-ui"))![
          "spec"
        ] as { replicas: number }
      ).replicas;
    expect(await replicas()).toBe(1);
    const status = (await getApp("alert-heal", "app")).status;
    expect(status?.lastDriftCorrection).toEqual({
      at: expect.any(String),
      count: 1,
      objects: ["Deployment alert-heal/guestbook-ui: spec.replicas by kubectl"],
    });
    expect(Date.parse(status?.lastDriftCorrection?.at ?? "")).toBeGreaterThanOrEqual(
      t.getTime() - 1000,
    );
    const events = (await api("GET", "/api/v1/namespaces/alert-heal/events")).items.filter(
      (e: { reason: string }) => e.reason === "DriftCorrected",
    );
    expect(events.map((e: { message: string }) => e.message)).toEqual([
      "re-applied Deployment alert-heal/guestbook-ui",
    ]);
    expect(texts("alert-heal")).toEqual([
      "[alert-heal/app] DriftCorrected: re-applied Deployment alert-heal/guestbook-ui: spec.replicas by kubectl",
    ]);

    // The second correction of the same kind is announced again.
    await api("DELETE", "/api/v1/namespaces/alert-heal/services/guestbook-ui");
    await run("alert-heal");
    expect(await getObject("/api/v1/namespaces/alert-heal/services/guestbook-ui")).toBeDefined();
    expect(texts("alert-heal").slice(1)).toEqual([
      "[alert-heal/app] DriftCorrected: re-applied Service alert-heal/guestbook-ui: deleted",
    ]);
  });
});
