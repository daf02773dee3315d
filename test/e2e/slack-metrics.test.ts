// Approvals, Slack and metrics against the real control plane, through `plumb serve`: approving and rejecting a
// held revision from its Slack alert (signed as Slack signs), and /metrics against the statuses.
import { execFileSync } from "node:child_process";
import { createHmac } from "node:crypto";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { App } from "../../src/app/index.ts";
import {
  fixtureFiles,
  type GitServer,
  REAL_FIXTURES,
  startGitServer,
  type TestRepo,
} from "../support/git-server.ts";
import { sendGithubPush } from "../support/github.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { type Served, startServe } from "../support/serve.ts";
import {
  api,
  createApp,
  createNamespace,
  deploymentImage,
  getApp,
  kubeconfig,
  kubePort,
  waitFor,
} from "./support.ts";

/** Unique per run, so a reused control plane (PLUMB_E2E_KUBECONFIG) works too. */
const RUN = Date.now().toString(36);
const NS = `slack-${RUN}`;
const BROKEN = `metrics-${RUN}`;
const SIGNING = "e2e-slack-signing-secret-0123456789";
const HOOK = "e2e-github-hook-secret";
const TOKEN = "metrics-token-0123456789abcdef";
const APPROVER = "U0APPROVER";

let git: GitServer;
let slack: Receiver;
let server: Served;
let repo: TestRepo;

beforeAll(async () => {
  git = await startGitServer();
  slack = await startReceiver();
  repo = await git.createRepo(NS, fixtureFiles(join(REAL_FIXTURES, "guestbook")));
  await createNamespace(NS);
  await api("POST", `/api/v1/namespaces/${NS}/secrets`, {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "slack" },
    stringData: { webhookURL: `${slack.url}/services/T0/B0/alerts` },
  });
  await createApp(NS, "app", {
    source: { git: { url: repo.url, ref: "main" } },
    syncPolicy: { requiresApproval: true },
    notifications: { slack: { secretRef: { name: "slack" }, on: ["Held", "Synced"] } },
  });
  server = await startServe(kubeconfig(), {
    GITHUB_WEBHOOK_SECRET: HOOK,
    PLUMB_API_TOKENS: JSON.stringify([{ name: "prometheus", token: TOKEN }]),
    PLUMB_SLACK_SIGNING_SECRET: SIGNING,
    PLUMB_SLACK_APPROVERS: JSON.stringify({ [APPROVER]: [NS] }),
    PLUMB_SLACK_RESPONSE_ORIGINS: slack.url,
  });
});

afterAll(async () => {
  await server?.stop();
  await git?.stop();
  await slack?.stop();
});

/** Slack's interaction request for pressing `actionId` on the alert, signed as Slack signs. */
function press(
  alert: SlackAlert,
  actionId: string,
  opts: { user?: string; ts?: number; secret?: string; responsePath?: string } = {},
) {
  const button = alert.blocks.at(-1)?.elements?.find((e) => e.action_id === actionId);
  if (!button) throw new Error(`no ${actionId} button in the alert`);
  const payload = {
    type: "block_actions",
    user: { id: opts.user ?? APPROVER, username: "approver", team_id: "T0" },
    response_url: `${slack.url}${opts.responsePath ?? "/actions/T0/1/response"}`,
    actions: [{ action_id: actionId, block_id: "plumb_approval", value: button.value }],
  };
  const body = `payload=${encodeURIComponent(JSON.stringify(payload))}`;
  const ts = opts.ts ?? Math.floor(Date.now() / 1000);
  const signature = `v0=${createHmac("sha256", opts.secret ?? SIGNING)
    .update(`v0:${ts}:${body}`)
    .digest("hex")}`;
  return fetch(`${server.base}/slack/interactions`, {
    method: "POST",
    body,
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      "x-slack-request-timestamp": String(ts),
      "x-slack-signature": signature,
    },
  });
}

interface SlackAlert {
  text: string;
  blocks: Array<{
    type: string;
    text?: { text: string };
    elements?: Array<{ action_id: string; value: string }>;
  }>;
}

const received = (path: string) =>
  slack.received.filter((r) => r.path === path).map((r) => r.body as Record<string, unknown>);

async function heldAlert(revision: string): Promise<SlackAlert> {
  return waitFor(
    `Held alert for ${revision.slice(0, 7)}`,
    async () =>
      received("/services/T0/B0/alerts").find((b) =>
        String(b["text"]).includes(`Held: revision ${revision.slice(0, 7)}`),
      ) as SlackAlert | undefined,
  );
}

describe("approve from Slack", () => {
  it("the Held alert shows the preview with buttons; refused presses change nothing; Approve applies it", async () => {
    const sha = await repo.head();
    expect((await sendGithubPush(server.base, HOOK, repo.url, sha)).status).toBe(202);
    const alert = await heldAlert(sha);
    const sections = alert.blocks.filter((b) => b.type === "section").map((b) => b.text?.text);
    expect(sections).toEqual([
      `*${NS}/app* — *Held*\nrevision ${sha.slice(0, 7)} is waiting for approval`,
      `*Will create*\n• Service ${NS}/guestbook-ui\n• Deployment ${NS}/guestbook-ui`,
    ]);
    const before = (await getApp(NS, "app")).metadata.resourceVersion;

    // Refused: a wrong signature, an old timestamp (401), and a user who is no approver.
    expect((await press(alert, "plumb_approve", { secret: "not-the-secret" })).status).toBe(401);
    const old = Math.floor(Date.now() / 1000) - 301;
    expect((await press(alert, "plumb_approve", { ts: old })).status).toBe(401);
    expect(
      (
        await press(alert, "plumb_approve", {
          user: "U0STRANGER",
          responsePath: "/actions/stranger",
        })
      ).status,
    ).toBe(200);
    const refusal = await waitFor("refusal in Slack", async () => received("/actions/stranger")[0]);
    expect(refusal).toEqual({
      response_type: "ephemeral",
      replace_original: false,
      text: `<@U0STRANGER> may not approve or reject in namespace ${NS} (PLUMB_SLACK_APPROVERS).`,
    });
    await new Promise((r) => setTimeout(r, 500));
    const unchanged = await getApp(NS, "app");
    expect(unchanged.metadata.resourceVersion).toBe(before);
    expect((unchanged.spec as { operation?: unknown }).operation).toBeUndefined();

    // Approve: answered at once (Slack waits 3 s; the answer does not wait for the run), then
    // applied, recorded, the alert updated.
    const res = await press(alert, "plumb_approve", { responsePath: "/actions/approve" });
    expect(res.status).toBe(200);
    const applied = await waitFor("approved revision applied", async () => {
      const a = await getApp(NS, "app");
      return a.status?.revision === sha && a.status.syncStatus === "Synced" ? a : undefined;
    });
    expect(applied.status?.operationState).toMatchObject({
      type: "Approve",
      phase: "Succeeded",
      revision: sha,
      requestedBy: `slack:${APPROVER}`,
    });
    expect(await deploymentImage(NS, "guestbook-ui")).toBe("gcr.io/google-samples/gb-frontend:v5");
    const update = await waitFor("message update", async () => received("/actions/approve")[0]);
    expect(update).toMatchObject({
      replace_original: true,
      text: `[${NS}/app] Approved by ${APPROVER}: applying ${sha.slice(0, 7)}`,
    });

    // The same button again: that revision is no longer held.
    await press(alert, "plumb_approve", { responsePath: "/actions/again" });
    const again = await waitFor("stale refusal", async () => received("/actions/again")[0]);
    expect(again).toMatchObject({
      response_type: "ephemeral",
      text: `Revision ${sha.slice(0, 7)} of ${NS}/app is no longer held (nothing is held now): not approved.`,
    });
  });

  it("Reject records the rejection: the revision is not applied, not held again, not re-alerted", async () => {
    const file = "guestbook-ui-deployment.yaml";
    const sha = await repo.commit({
      [file]: fixtureFiles(join(REAL_FIXTURES, "guestbook"))[file]!.replace(":v5", ":v9"),
    });
    await sendGithubPush(server.base, HOOK, repo.url, sha);
    const alert = await heldAlert(sha);
    expect(alert.blocks.find((b) => b.text?.text.startsWith("*Will change*"))?.text?.text).toBe(
      [
        "*Will change*",
        `• Deployment ${NS}/guestbook-ui`,
        "    `spec.template.spec.containers[name=guestbook-ui].image`: `gcr.io/google-samples/gb-frontend:v5` → `gcr.io/google-samples/gb-frontend:v9`",
      ].join("\n"),
    );
    await press(alert, "plumb_reject", { responsePath: "/actions/reject" });
    const rejected = await waitFor("rejection recorded", async () => {
      const a = await getApp(NS, "app");
      return a.status?.rejectedRevision === sha ? a : undefined;
    });
    expect(rejected.status?.heldRevision).toBeUndefined();
    expect(rejected.status?.operationState).toMatchObject({
      type: "Reject",
      phase: "Succeeded",
      requestedBy: `slack:${APPROVER}`,
    });
    await waitFor("message update", async () => received("/actions/reject")[0]);
    // Another push of the same commit: nothing is held or announced again.
    const alerts = received("/services/T0/B0/alerts").length;
    await sendGithubPush(server.base, HOOK, repo.url, sha);
    await new Promise((r) => setTimeout(r, 2000));
    const after = await getApp(NS, "app");
    expect(after.status?.heldRevision).toBeUndefined();
    expect(after.status?.rejectedRevision).toBe(sha);
    expect(received("/services/T0/B0/alerts")).toHaveLength(alerts);
    expect(await deploymentImage(NS, "guestbook-ui")).toBe("gcr.io/google-samples/gb-frontend:v5");

    const events = await kubePort().listEvents(after as App, 50);
    expect(events.map((e) => e.reason)).toContain("Rejected");
    const times = events.map((e) => e.lastTimestamp ?? "");
    expect([...times].sort().reverse()).toEqual(times);
  });
});

/** Samples of the text exposition: "name{labels}" → value. */
function parseMetrics(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const at = line.lastIndexOf(" ");
    out.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return out;
}

describe("/metrics", () => {
  it("passes promtool and its values match the Apps' statuses", async () => {
    await createNamespace(BROKEN);
    await createApp(BROKEN, "broken", {
      source: { git: { url: "http://127.0.0.1:9/none.git" } },
    });
    await kubePortReconcile(BROKEN, "broken");
    expect((await fetch(`${server.base}/metrics`)).status).toBe(401);
    const res = await fetch(`${server.base}/metrics`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
    const text = await res.text();
    const promtool = inject("promtool");
    expect(execFileSync(promtool, ["check", "metrics"], { input: text, encoding: "utf8" })).toBe(
      "",
    );

    const samples = parseMetrics(text);
    const apps = (await api("GET", "/apis/plumb.dev/v1alpha1/apps")) as { items: App[] };
    expect(apps.items.length).toBeGreaterThan(1);
    for (const a of apps.items) {
      const id = `namespace="${a.metadata.namespace}",name="${a.metadata.name}"`;
      const s = a.status ?? {};
      expect(
        samples.get(`plumb_app_sync_status{${id},status="${s.syncStatus ?? "Unknown"}"}`),
      ).toBe(1);
      expect(
        samples.get(`plumb_app_health_status{${id},status="${s.healthStatus ?? "Unknown"}"}`),
      ).toBe(1);
      expect(samples.get(`plumb_app_consecutive_failures{${id}}`)).toBe(s.failures ?? 0);
      expect(samples.get(`plumb_app_held{${id}}`)).toBe(s.heldRevision ? 1 : 0);
      const drifted = (s.drift ?? []).reduce((n, d) => n + d.fields.length, 0);
      expect(samples.get(`plumb_app_drifted_fields{${id}}`)).toBe(drifted);
      const synced = samples.get(`plumb_app_last_synced_timestamp_seconds{${id}}`);
      expect(synced).toBe(s.lastSyncedAt ? Date.parse(s.lastSyncedAt) / 1000 : undefined);
    }
    const app = await getApp(NS, "app");
    expect(
      samples.get(
        `plumb_app_info{namespace="${NS}",name="app",source_type="git",source="${repo.url}",ref="main",revision="${app.status?.revision}"}`,
      ),
    ).toBe(1);
    expect(
      samples.get(`plumb_app_consecutive_failures{namespace="${BROKEN}",name="broken"}`),
    ).toBeGreaterThanOrEqual(1);
    expect(samples.get(`plumb_namespace_apps_failing{namespace="${BROKEN}"}`)).toBe(1);
    expect(samples.get(`plumb_namespace_apps{namespace="${NS}"}`)).toBe(1);
  });
});

/** One reconcile of ns/name in this process (the server only reconciles what it is asked to). */
async function kubePortReconcile(namespace: string, name: string) {
  const { reconcileApp } = await import("../../src/reconcile/index.ts");
  const { realPorts } = await import("./support.ts");
  await reconcileApp({ namespace, name }, realPorts(), new Date());
}
