import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { FakeKube, testApp } from "../../test/support/fake-kube.ts";
import type { AppStatus } from "../app/index.ts";
import { createHttpApp } from "./app.ts";
import { type HttpConfig, parseHttpConfig } from "./config.ts";

const SECRET = "8f742231b10e8888abcd99yyyzzz85a5";
const HELD = "4444444444444444444444444444444444444444";
const OTHER = "5555555555555555555555555555555555555555";
const NOW = new Date("2026-03-04T05:06:07Z");
const TS = Math.floor(NOW.getTime() / 1000);
const RESPONSE_URL = "https://hooks.slack.com/actions/T0/123/abcSECRETxyz";
const CONFIG: HttpConfig = {
  apiTokens: [],
  slack: {
    signingSecret: SECRET,
    approvers: { U0ALICE: ["team-a"], U0ROOT: ["*"] },
    responseOrigins: ["https://hooks.slack.com"],
  },
};
const status: AppStatus = { syncStatus: "Held", revision: OTHER, heldRevision: HELD };

/** Signs as Slack does, independently of the code under test (node:crypto). */
const sign = (body: string, ts = TS, secret = SECRET) =>
  `v0=${createHmac("sha256", secret).update(`v0:${ts}:${body}`).digest("hex")}`;

function payload(opts: {
  action?: string;
  user?: string;
  namespace?: string;
  revision?: string;
  responseUrl?: string;
  value?: string;
}): string {
  const value =
    opts.value ??
    JSON.stringify({
      namespace: opts.namespace ?? "team-a",
      name: "web",
      revision: opts.revision ?? HELD,
    });
  const p = {
    type: "block_actions",
    user: { id: opts.user ?? "U0ALICE", username: "alice", team_id: "T0" },
    response_url: opts.responseUrl ?? RESPONSE_URL,
    actions: [{ action_id: opts.action ?? "plumb_approve", block_id: "plumb_approval", value }],
  };
  return `payload=${encodeURIComponent(JSON.stringify(p))}`;
}

function setup(config: HttpConfig = CONFIG) {
  const kube = new FakeKube([
    testApp("team-a", "web", { status }),
    testApp("team-b", "web", { status }),
  ]);
  const deferred: Promise<unknown>[] = [];
  const responses: Array<{ url: string; payload: Record<string, unknown> }> = [];
  const log: Array<Record<string, unknown>> = [];
  const app = createHttpApp({
    apps: kube,
    config,
    trigger: kube.trigger,
    now: () => NOW,
    log: (e) => log.push(e),
    defer: (t) => deferred.push(t),
    async slackRespond(url, p) {
      responses.push({ url, payload: p });
    },
  });
  const post = async (body: string, headers: Record<string, string> = {}) => {
    const res = await app.request("/slack/interactions", {
      method: "POST",
      body,
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        "x-slack-request-timestamp": String(TS),
        "x-slack-signature": sign(body),
        ...headers,
      },
    });
    await Promise.all(deferred);
    return res;
  };
  return { kube, post, responses, log, deferred };
}

describe("POST /slack/interactions", () => {
  it("Approve from an allowed user: 200 at once, then the operation with requestedBy slack:<id> and the alert updated", async () => {
    const { kube, post, responses, deferred } = setup();
    const res = await post(payload({}));
    expect(res.status).toBe(200);
    expect(deferred).toHaveLength(1);
    expect(kube.calls.setOperation).toEqual([
      {
        app: "team-a/web",
        operation: {
          id: expect.any(String),
          type: "Approve",
          revision: HELD,
          requestedBy: "slack:U0ALICE",
          requestedAt: NOW.toISOString(),
        },
      },
    ]);
    expect(kube.calls.trigger).toEqual([
      {
        apps: [{ namespace: "team-a", name: "web" }],
        reason: "slack: Approve requested by slack:U0ALICE",
      },
    ]);
    expect(responses).toEqual([
      {
        url: RESPONSE_URL,
        payload: expect.objectContaining({
          replace_original: true,
          text: "[team-a/web] Approved by U0ALICE: applying 4444444",
        }),
      },
    ]);
  });

  it("Reject writes a Reject of the held revision", async () => {
    const { kube, post, responses } = setup();
    expect(
      (await post(payload({ action: "plumb_reject", user: "U0ROOT", namespace: "team-b" }))).status,
    ).toBe(200);
    expect(kube.calls.setOperation[0]).toMatchObject({
      app: "team-b/web",
      operation: { type: "Reject", revision: HELD, requestedBy: "slack:U0ROOT" },
    });
    expect(responses[0]?.payload).toMatchObject({ replace_original: true });
  });

  it.each([
    [
      "a wrong signature",
      { "x-slack-signature": sign("other body") },
      "missing or invalid X-Slack-Signature header",
    ],
    [
      "another secret",
      { "x-slack-signature": sign(payload({}), TS, "another-secret") },
      "missing or invalid X-Slack-Signature header",
    ],
    ["no signature", { "x-slack-signature": "" }, "missing or invalid X-Slack-Signature header"],
    [
      "a timestamp over 5 minutes old",
      {
        "x-slack-request-timestamp": String(TS - 301),
        "x-slack-signature": sign(payload({}), TS - 301),
      },
      "missing or stale X-Slack-Request-Timestamp (over 5 minutes)",
    ],
    [
      "a timestamp over 5 minutes ahead",
      {
        "x-slack-request-timestamp": String(TS + 301),
        "x-slack-signature": sign(payload({}), TS + 301),
      },
      "missing or stale X-Slack-Request-Timestamp (over 5 minutes)",
    ],
    [
      "no timestamp",
      { "x-slack-request-timestamp": "" },
      "missing or stale X-Slack-Request-Timestamp (over 5 minutes)",
    ],
  ])("401 for %s; nothing read or changed", async (_, headers, message) => {
    const { kube, post, responses, deferred } = setup();
    const res = await post(payload({}), headers);
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ message });
    expect(deferred).toEqual([]);
    expect(kube.calls.getApp).toEqual([]);
    expect(kube.calls.setOperation).toEqual([]);
    expect(responses).toEqual([]);
  });

  it("a signature 4:59 old still verifies", async () => {
    const { post } = setup();
    const body = payload({});
    const res = await post(body, {
      "x-slack-request-timestamp": String(TS - 299),
      "x-slack-signature": sign(body, TS - 299),
    });
    expect(res.status).toBe(200);
  });

  it.each([
    ["an unknown user", { user: "U0MALLORY" }],
    ["a user of another namespace", { namespace: "team-b" }],
  ])("%s is refused in Slack and nothing changes", async (_, opts) => {
    const { kube, post, responses } = setup();
    const res = await post(payload(opts));
    expect(res.status).toBe(200);
    expect(kube.calls.getApp).toEqual([]);
    expect(kube.calls.setOperation).toEqual([]);
    expect(responses).toHaveLength(1);
    expect(responses[0]?.payload).toMatchObject({
      response_type: "ephemeral",
      replace_original: false,
    });
    expect(String(responses[0]?.payload["text"])).toMatch(
      /may not approve or reject in namespace team-[ab]/,
    );
  });

  it("a revision no longer held is refused with a message in Slack", async () => {
    const { kube, post, responses } = setup();
    await post(payload({ revision: OTHER }));
    expect(kube.calls.setOperation).toEqual([]);
    expect(responses[0]?.payload).toEqual({
      response_type: "ephemeral",
      replace_original: false,
      text: "Revision 5555555 of team-a/web is no longer held (revision 4444444 is held now): not approved.",
    });
    const stored = kube.app("team-a", "web")!;
    stored.status = { syncStatus: "Synced", revision: HELD };
    await post(payload({}));
    expect(responses[1]?.payload["text"]).toBe(
      "Revision 4444444 of team-a/web is no longer held (nothing is held now): not approved.",
    );
    expect(kube.calls.setOperation).toEqual([]);
  });

  it.each([
    ["no payload field", "foo=bar", "missing payload field"],
    ["malformed JSON", "payload=%7Bnope", "payload is not valid JSON"],
    [
      "a malformed block_actions",
      `payload=${encodeURIComponent('{"type":"block_actions"}')}`,
      "malformed block_actions payload",
    ],
    [
      "a forged button value",
      payload({ value: '{"namespace":"../x","name":"web","revision":"r"}' }),
      "malformed button value",
    ],
    [
      "a response_url elsewhere",
      payload({ responseUrl: "https://attacker.example/hook" }),
      "response_url is not a Slack URL",
    ],
  ])("400 for %s (signed), nothing changed", async (_, body, message) => {
    const { kube, post, responses } = setup();
    const res = await post(body);
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ message });
    expect(kube.calls.setOperation).toEqual([]);
    expect(responses).toEqual([]);
  });

  it("other interactions and other buttons are acknowledged and ignored", async () => {
    const { kube, post } = setup();
    const shortcut = `payload=${encodeURIComponent('{"type":"shortcut"}')}`;
    expect((await post(shortcut)).status).toBe(200);
    expect((await post(payload({ action: "someone_elses_button" }))).status).toBe(200);
    expect(kube.calls.getApp).toEqual([]);
  });

  it("404 when not configured; logs carry neither the secret nor the response_url", async () => {
    const off = setup({ apiTokens: [] });
    expect((await off.post(payload({}))).status).toBe(404);
    const { post, log } = setup();
    await post(payload({}));
    await post(payload({ user: "U0MALLORY" }));
    expect(log.length).toBeGreaterThan(0);
    expect(JSON.stringify(log)).not.toContain(SECRET);
    expect(JSON.stringify(log)).not.toContain("abcSECRETxyz");
  });
});

describe("Slack settings", () => {
  it("parses approvers and origins", () => {
    const config = parseHttpConfig({
      PLUMB_SLACK_SIGNING_SECRET: SECRET,
      PLUMB_SLACK_APPROVERS: '{"U0ALICE": ["team-a"], "W0ROOT": ["*"]}',
    });
    expect(config.slack).toEqual({
      signingSecret: SECRET,
      approvers: { U0ALICE: ["team-a"], W0ROOT: ["*"] },
      responseOrigins: ["https://hooks.slack.com"],
    });
  });

  it.each([
    [{ PLUMB_SLACK_APPROVERS: '{"U0A":["a"]}' }, /^PLUMB_SLACK_SIGNING_SECRET: required/],
    [{ PLUMB_SLACK_SIGNING_SECRET: SECRET }, /^PLUMB_SLACK_APPROVERS: required/],
    [{ PLUMB_SLACK_SIGNING_SECRET: SECRET, PLUMB_SLACK_APPROVERS: "{" }, /not valid JSON/],
    [
      { PLUMB_SLACK_SIGNING_SECRET: SECRET, PLUMB_SLACK_APPROVERS: '{"alice":["a"]}' },
      /alice: Invalid key in record/,
    ],
    [
      { PLUMB_SLACK_SIGNING_SECRET: SECRET, PLUMB_SLACK_APPROVERS: '{"U0A":["Team A"]}' },
      /namespace name or \*/,
    ],
    [
      { PLUMB_SLACK_SIGNING_SECRET: SECRET, PLUMB_SLACK_APPROVERS: '{"U0A":[]}' },
      /PLUMB_SLACK_APPROVERS/,
    ],
    [
      {
        PLUMB_SLACK_SIGNING_SECRET: SECRET,
        PLUMB_SLACK_APPROVERS: '{"U0A":["a"]}',
        PLUMB_SLACK_RESPONSE_ORIGINS: "hooks.slack.com",
      },
      /^PLUMB_SLACK_RESPONSE_ORIGINS: /,
    ],
  ])("refuses %j with a clear error that never quotes the secret", (env, message) => {
    let error = "";
    try {
      parseHttpConfig(env);
    } catch (err) {
      error = (err as Error).message;
    }
    expect(error).toMatch(message);
    expect(error).not.toContain(SECRET);
  });
});
