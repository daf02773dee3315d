// Slack on transitions only, and drift reported field by field, corrected with selfHeal.
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
  patchAppSpec,
  realPorts,
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
const minutes = (m: number) => new Date(Date.now() + m * 60_000);
/** A run; `compare`: a scheduled run whose slot came (a full comparison, drift included). */
const run = (ns: string, at = new Date(), compare = false) =>
  reconcileApp({ namespace: ns, name: "app" }, realPorts({ notify: createNotifier() }), at, {
    compare,
  });
const texts = () => slack.received.map((r) => (r.body as { text: string }).text);

async function secret(ns: string, data: Record<string, string>) {
  await api("POST", `/api/v1/namespaces/${ns}/secrets`, {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "slack" },
    stringData: data,
  });
}

describe("Slack notifications", () => {
  it("announce transitions once, never a steady state, and never leak the webhook URL", async () => {
    const repo = await git.createRepo("notify", guestbook());
    await createNamespace("notify");
    const hook = `${slack.url}/services/T000/B000/XXXX`;
    await secret("notify", { webhookURL: hook });
    await createApp("notify", "app", {
      source: { git: { url: repo.url } },
      notifications: { slack: { secretRef: { name: "slack" }, channel: "#deploys" } },
    });
    const c1 = await repo.head();
    await run("notify");
    expect(slack.received).toHaveLength(1);
    expect(slack.received[0]?.path).toBe("/services/T000/B000/XXXX");
    expect(slack.received[0]?.body).toMatchObject({
      channel: "#deploys",
      text: `[notify/app] Synced: applied revision ${c1.slice(0, 7)}`,
    });
    await run("notify");
    expect(slack.received).toHaveLength(1);

    await repo.commit({ "guestbook-ui-svc.yaml": "kind: [\n" });
    await run("notify");
    await run("notify");
    expect(texts().slice(1)).toEqual([
      expect.stringMatching(/^\[notify\/app\] Failed: RenderFailed: guestbook-ui-svc\.yaml:\d+: /),
    ]);

    const fixed = await repo.commit({
      "guestbook-ui-svc.yaml": guestbook()["guestbook-ui-svc.yaml"]!,
    });
    await run("notify");
    // The fix renders the objects already applied: nothing to apply, the recovery is announced
    //, and the App is healthy again after the failure.
    expect(texts().slice(2)).toEqual([
      `[notify/app] Synced: in sync again at revision ${fixed.slice(0, 7)}`,
      expect.stringMatching(
        /^\[notify\/app\] Recovered: healthy again after Failed: RenderFailed: guestbook-ui-svc\.yaml:\d+: /,
      ),
    ]);
    await run("notify");
    expect(texts()).toHaveLength(4);
    expect(JSON.stringify(slack.received.map((r) => r.body))).not.toContain("services/T000");
  });
});

describe("drift", () => {
  it("is reported field by field with the manager that changed it, and corrected with selfHeal", async () => {
    const repo = await git.createRepo("drift", guestbook());
    await createNamespace("drift");
    await createApp("drift", "app", { source: { git: { url: repo.url } } });
    await run("drift");
    // Someone edits the live Deployment (as `kubectl edit` or `kubectl scale` would).
    await api(
      "PATCH",
      "/apis/apps/v1/namespaces/drift/deployments/guestbook-ui?fieldManager=kubectl-edit",
      { spec: { replicas: 3 } },
      "application/merge-patch+json",
    );
    // A scheduled run (its slot came) compares the full desired state.
    await run("drift", minutes(10), true);
    const status = (await getApp("drift", "app")).status;
    expect(status?.syncStatus).toBe("OutOfSync");
    expect(status?.drift).toEqual([
      {
        apiVersion: "apps/v1",
        kind: "Deployment",
        namespace: "drift",
        name: "guestbook-ui",
        fields: [{ path: "spec.replicas", desired: "1", live: "3", manager: "kubectl-edit" }],
      },
    ]);
    expect(status?.resources?.find((r) => r.kind === "Deployment")?.message).toBe(
      "drifted: spec.replicas",
    );
    const replicas = async () =>
      (
        (await getObject("/apis/apps/v1/namespaces/drift/deployments/guestbook-ui"))!["spec"] as {
          replicas: number;
        }
      ).replicas;
    expect(await replicas()).toBe(3);

    await patchAppSpec("drift", "app", { syncPolicy: { selfHeal: true } });
    await run("drift", minutes(11), true);
    expect(await replicas()).toBe(1);
    const healed = (await getApp("drift", "app")).status;
    expect(healed?.drift).toBeUndefined();
    expect(healed?.syncStatus).toBe("Synced");
    const events = await api("GET", "/api/v1/namespaces/drift/events");
    expect(events.items.map((e: { reason: string }) => e.reason)).toContain("DriftCorrected");

    // A deleted object is drift too: selfHeal recreates it.
    await api("DELETE", "/api/v1/namespaces/drift/services/guestbook-ui");
    await run("drift", minutes(12), true);
    expect(await getObject("/api/v1/namespaces/drift/services/guestbook-ui")).toBeDefined();
    expect((await getApp("drift", "app")).status?.syncStatus).toBe("Synced");
  });
});
