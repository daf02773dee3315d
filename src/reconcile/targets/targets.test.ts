// What each notification target sends, exactly, held against the provider's documented
// payloads (test/fixtures/notifications/SOURCES.md); secrets only where they belong.
import { createHmac } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { addApp, createFakeKube, type FakeKube } from "../../../test/support/fake-kube.ts";
import type { App, AppStatus } from "../../app/index.ts";
import type { Transition } from "../../plan/index.ts";
import { announce } from "../announce.ts";
import type { Ports } from "../ports.ts";

const FIXTURES = join(import.meta.dirname, "../../../test/fixtures/notifications");
const fixture = (name: string) => readFileSync(join(FIXTURES, name), "utf8");

const SHA = "0123456789abcdef0123456789abcdef01234567";
const HOOK = "https://hooks.example/services/T000/XXXXsecretXXXX";
const TOKEN = "ghp_XXXXtokenXXXX";
const HMAC_KEY = "XXXXhmacXXXX";

interface Sent {
  url: string;
  headers: Record<string, string>;
  raw: string;
  body: Record<string, unknown>;
  settled?: ((status: number, answer: string) => boolean) | undefined;
}

interface Setup {
  kube: FakeKube;
  app: App;
  ports: Ports;
  sent: Sent[];
  logs: Array<Record<string, unknown>>;
}

/** An App team-a/web with `notifications`, its source `gitUrl`, its status `status`. */
function setup(
  notifications: Record<string, unknown>,
  status: AppStatus = { revision: SHA, healthStatus: "Progressing" },
  source: Record<string, unknown> = { git: { url: "https://github.com/acme/web.git" } },
): Setup {
  const kube = createFakeKube();
  addApp(kube, "team-a", "web", { source, notifications });
  const app = { ...kube.apps.get("team-a/web")!, status };
  kube.secrets.set("team-a/hook", { address: HOOK, token: HMAC_KEY });
  kube.secrets.set("team-a/forge", { token: TOKEN });
  const sent: Sent[] = [];
  const logs: Setup["logs"] = [];
  const ports: Ports = {
    kube,
    git: { resolve: async () => SHA, fetch: async () => [] },
    notify: {
      async post(url, raw, headers, options) {
        const req: Sent = { url, headers: headers ?? {}, raw, body: JSON.parse(raw) };
        if (options?.settled) req.settled = options.settled;
        sent.push(req);
      },
    },
    holder: "test",
    log: (entry) => logs.push(entry),
  };
  return { kube, app, ports, sent, logs };
}

const SYNCED: Transition = { event: "Synced", message: "applied revision 0123456" };
const FAILED: Transition = { event: "Failed", message: "ApplyFailed: Deployment web: invalid" };
const HEALTHY: Transition = { event: "Healthy", message: "revision 0123456 is healthy" };

/** Everything people can read: Events and log lines. */
const shown = (s: Setup) => JSON.stringify([s.kube.events, s.logs]);

describe("generic webhook", () => {
  it("POSTs the documented JSON event, unsigned without signingSecretRef", async () => {
    const s = setup({ generic: { secretRef: { name: "hook" } } });
    await announce(s.app, [SYNCED], s.ports);
    expect(s.sent).toEqual([
      {
        url: HOOK,
        headers: { "content-type": "application/json" },
        raw: `{"app":{"namespace":"team-a","name":"web"},"event":"Synced","severity":"info","message":"applied revision 0123456","revision":"${SHA}"}`,
        body: expect.any(Object),
      },
    ]);
  });

  it("signs the bytes it sends: X-Signature sha256=<hex HMAC-SHA256> (Flux's generic-hmac)", async () => {
    const s = setup({
      generic: { secretRef: { name: "hook" }, signingSecretRef: { name: "hook" } },
    });
    await announce(s.app, [FAILED], s.ports);
    const [req] = s.sent;
    const expected = createHmac("sha256", HMAC_KEY).update(req!.raw).digest("hex");
    expect(req!.headers).toEqual({
      "content-type": "application/json",
      "x-signature": `sha256=${expected}`,
    });
    expect(req!.body).toEqual({
      app: { namespace: "team-a", name: "web" },
      event: "Failed",
      severity: "error",
      message: "ApplyFailed: Deployment web: invalid",
      revision: SHA,
    });
  });

  it("reports a missing signing key and sends nothing unsigned", async () => {
    const s = setup({
      generic: { secretRef: { name: "hook" }, signingSecretRef: { name: "hmac", key: "k" } },
    });
    s.kube.secrets.set("team-a/hmac", { other: HMAC_KEY });
    await announce(s.app, [SYNCED], s.ports);
    expect(s.sent).toEqual([]);
    expect(s.kube.events).toEqual([
      { reason: "NotificationFailed", message: 'Webhook: Secret team-a/hmac has no key "k"' },
    ]);
    expect(shown(s)).not.toContain("XXXX");
  });
});

describe("Microsoft Teams", () => {
  it("POSTs an Adaptive Card in the envelope Microsoft documents", async () => {
    const s = setup({ msteams: { secretRef: { name: "hook" } } });
    await announce(s.app, [FAILED], s.ports);
    expect(s.sent).toHaveLength(1);
    const { url, headers, body } = s.sent[0]!;
    expect(url).toBe(HOOK);
    expect(headers).toEqual({ "content-type": "application/json" });
    expect(body).toEqual({
      type: "message",
      attachments: [
        {
          contentType: "application/vnd.microsoft.card.adaptive",
          contentUrl: null,
          content: {
            $schema: "http://adaptivecards.io/schemas/adaptive-card.json",
            type: "AdaptiveCard",
            version: "1.4",
            body: [
              {
                type: "TextBlock",
                text: "team-a/web — Failed",
                size: "Medium",
                weight: "Bolder",
                color: "Attention",
                wrap: true,
              },
              { type: "TextBlock", text: "ApplyFailed: Deployment web: invalid", wrap: true },
              { type: "FactSet", facts: [{ title: "Revision", value: "0123456" }] },
            ],
            msteams: { width: "Full" },
          },
        },
      ],
    });
    // The documented example (read as YAML: as published it has a trailing comma).
    const doc = parse(fixture("teams-adaptive-card.txt"));
    const ours = body as typeof doc;
    expect(Object.keys(ours)).toEqual(Object.keys(doc));
    expect(ours.type).toBe(doc.type);
    const [mine, theirs] = [ours.attachments[0], doc.attachments[0]];
    expect(Object.keys(mine)).toEqual(Object.keys(theirs));
    expect(mine.contentType).toBe(theirs.contentType);
    expect(mine.contentUrl).toBe(theirs.contentUrl);
    expect(mine.content.$schema).toBe(theirs.content.$schema);
    expect(mine.content.type).toBe(theirs.content.type);
    expect(mine.content.body[0].type).toBe(theirs.content.body[0].type);
  });
});

describe("Discord", () => {
  it("executes the webhook with documented params only: content, an embed, no mentions", async () => {
    const s = setup({ discord: { secretRef: { name: "hook" }, username: "plumb" } });
    await announce(s.app, [SYNCED], s.ports);
    const { url, body } = s.sent[0]!;
    expect(url).toBe(HOOK);
    expect(body).toEqual({
      content: "[team-a/web] Synced: applied revision 0123456",
      embeds: [
        {
          title: "team-a/web — Synced",
          description: "applied revision 0123456",
          color: 0x2eb67d,
          fields: [{ name: "Revision", value: "0123456", inline: true }],
        },
      ],
      allowed_mentions: { parse: [] },
      username: "plumb",
    });
    const params = tableKeys(fixture("discord-execute-webhook.md"));
    expect(params).toContain("allowed_mentions");
    for (const key of Object.keys(body)) expect(params).toContain(key);
    const fields = tableKeys(fixture("discord-embed-object.md"));
    for (const key of Object.keys((body["embeds"] as object[])[0]!)) expect(fields).toContain(key);
  });

  it("keeps content within Discord's 2000 characters", async () => {
    const s = setup({ discord: { secretRef: { name: "hook" } } });
    await announce(s.app, [{ event: "Failed", message: "x".repeat(5000) }], s.ports);
    const body = s.sent[0]!.body;
    expect((body["content"] as string).length).toBe(2000);
    expect(body["username"]).toBeUndefined();
  });
});

describe("Google Chat", () => {
  it("POSTs a {text} message, as the webhook quickstart does", async () => {
    const s = setup({ googlechat: { secretRef: { name: "hook" } } });
    await announce(s.app, [SYNCED, FAILED], s.ports);
    expect(s.sent.map((r) => r.body)).toEqual([
      { text: "[team-a/web] Synced: applied revision 0123456" },
      { text: "[team-a/web] Failed: ApplyFailed: Deployment web: invalid\nRevision: 0123456" },
    ]);
    expect(s.sent[0]!.headers).toEqual({ "content-type": "application/json; charset=UTF-8" });
    const doc = JSON.parse(fixture("googlechat-webhook.json"));
    expect(Object.keys(s.sent[0]!.body)).toEqual(Object.keys(doc));
  });
});

describe("commit statuses", () => {
  const CONTEXT = "plumb/team-a/web";

  it("GitHub: POST /repos/{owner}/{repo}/statuses/{sha}, pending while Progressing, then success", async () => {
    const s = setup({ github: { secretRef: { name: "forge" } } });
    await announce(s.app, [SYNCED], s.ports);
    const healthy = { ...s.app, status: { revision: SHA, healthStatus: "Healthy" as const } };
    await announce(healthy, [HEALTHY], s.ports);
    expect(s.sent.map(({ url, headers, body }) => ({ url, headers, body }))).toEqual([
      {
        url: `https://api.github.com/repos/acme/web/statuses/${SHA}`,
        headers: {
          "content-type": "application/json",
          accept: "application/vnd.github+json",
          authorization: `Bearer ${TOKEN}`,
          "x-github-api-version": "2022-11-28",
          "user-agent": "plumb",
        },
        body: {
          state: "pending",
          description: "Synced: applied revision 0123456",
          context: CONTEXT,
        },
      },
      {
        url: `https://api.github.com/repos/acme/web/statuses/${SHA}`,
        headers: expect.objectContaining({ authorization: `Bearer ${TOKEN}` }),
        body: {
          state: "success",
          description: "Healthy: revision 0123456 is healthy",
          context: CONTEXT,
        },
      },
    ]);
    expect(s.sent[0]!.settled?.(400, "Cannot transition status")).toBe(false);
    const doc = JSON.parse(fixture("github-create-commit-status.json"));
    for (const key of Object.keys(s.sent[0]!.body)) expect(Object.keys(doc)).toContain(key);
    expect(shown(s)).not.toContain("XXXX");
  });

  it("GitHub Enterprise: /api/v3 on the Git host, or apiUrl; failure on a failed sync", async () => {
    const s = setup(
      { github: { secretRef: { name: "forge" } } },
      { revision: SHA, observedRevision: SHA, healthStatus: "Healthy" },
      { git: { url: "https://ghe.example.com/acme/web" } },
    );
    await announce(s.app, [FAILED], s.ports);
    expect(s.sent[0]!.url).toBe(`https://ghe.example.com/api/v3/repos/acme/web/statuses/${SHA}`);
    expect(s.sent[0]!.body["state"]).toBe("failure");

    const local = setup(
      { github: { secretRef: { name: "forge" }, apiUrl: "http://127.0.0.1:9/gh/" } },
      { revision: SHA, healthStatus: "Degraded" },
    );
    await announce(local.app, [SYNCED], local.ports);
    expect(local.sent[0]!.url).toBe(`http://127.0.0.1:9/gh/repos/acme/web/statuses/${SHA}`);
    expect(local.sent[0]!.body["state"]).toBe("failure");
  });

  it("GitLab: the URL-encoded project path, PRIVATE-TOKEN, state failed, name as context", async () => {
    const s = setup(
      { gitlab: { secretRef: { name: "forge" } } },
      { revision: SHA, healthStatus: "Healthy" },
      { git: { url: "https://gitlab.example.com/group/sub/web.git" } },
    );
    await announce(
      s.app,
      [{ event: "Degraded", message: "Deployment web: ProgressDeadlineExceeded" }],
      s.ports,
    );
    expect(s.sent.map(({ url, headers, body }) => ({ url, headers, body }))).toEqual([
      {
        url: `https://gitlab.example.com/api/v4/projects/group%2Fsub%2Fweb/statuses/${SHA}`,
        headers: { "content-type": "application/json", "private-token": TOKEN },
        body: {
          state: "failed",
          name: CONTEXT,
          description: "Degraded: Deployment web: ProgressDeadlineExceeded",
        },
      },
    ]);
    // GitLab refuses a state the commit already has (400): that is done, not a failure.
    const settled = s.sent[0]!.settled!;
    const same = '{"message":"Cannot transition status via :enqueue from :pending"}';
    expect(settled(400, same)).toBe(true);
    expect(settled(400, '{"message":"state is invalid"}')).toBe(false);
    expect(settled(401, same)).toBe(false);
    const doc = fixture("gitlab-commit-status.md");
    expect(doc).toContain("POST /projects/:id/statuses/:sha");
    expect(doc).toContain('--header "PRIVATE-TOKEN: ');
    const attributes = tableKeys(doc);
    for (const key of Object.keys(s.sent[0]!.body)) expect(attributes.join(" ")).toContain(key);
    for (const state of ["pending", "success", "failed"]) expect(doc).toContain(`\`${state}\``);
  });

  it("Gitea: /api/v1 on the Git host, Authorization: token, CreateStatusOption's keys", async () => {
    const s = setup(
      { gitea: { secretRef: { name: "forge" } } },
      { revision: SHA, healthStatus: "Healthy" },
      { git: { url: "https://gitea.example.com/acme/web.git" } },
    );
    await announce(s.app, [{ event: "Recovered", message: "healthy again" }], s.ports);
    expect(s.sent.map(({ url, headers, body }) => ({ url, headers, body }))).toEqual([
      {
        url: `https://gitea.example.com/api/v1/repos/acme/web/statuses/${SHA}`,
        headers: { "content-type": "application/json", authorization: `token ${TOKEN}` },
        body: { state: "success", context: CONTEXT, description: "Recovered: healthy again" },
      },
    ]);
    const jsonKeys = [...fixture("gitea-create-status-option.go").matchAll(/json:"(\w+)"/g)].map(
      (m) => m[1],
    );
    for (const key of Object.keys(s.sent[0]!.body)) expect(jsonKeys).toContain(key);
  });

  it("a held revision is pending; a description is cut to GitHub's 140 characters", async () => {
    const s = setup({ github: { secretRef: { name: "forge" } } });
    const other = "f".repeat(40);
    await announce(
      s.app,
      [{ event: "Held", message: "y".repeat(300), held: { revision: other, preview: [] } }],
      s.ports,
    );
    expect(s.sent[0]!.url).toBe(`https://api.github.com/repos/acme/web/statuses/${other}`);
    expect(s.sent[0]!.body["state"]).toBe("pending");
    expect((s.sent[0]!.body["description"] as string).length).toBe(140);
  });

  it("sets nothing before a commit is known, and reports an App without a Git source", async () => {
    const none = setup({ github: { secretRef: { name: "forge" } } }, {});
    await announce(none.app, [FAILED], none.ports);
    expect(none.sent).toEqual([]);
    expect(none.kube.events).toEqual([]);

    const image = setup(
      { gitea: { secretRef: { name: "forge" } } },
      { revision: SHA },
      { image: { repository: "registry.example/web" } },
    );
    await announce(image.app, [SYNCED], image.ports);
    expect(image.sent).toEqual([]);
    expect(image.kube.events).toEqual([
      {
        reason: "NotificationFailed",
        message: "Gitea: Gitea commit statuses need a Git source (spec.source.git)",
      },
    ]);
  });

  it("does not announce DriftCorrected by default, nor Healthy to a chat target", async () => {
    const s = setup(
      { github: { secretRef: { name: "forge" } }, googlechat: { secretRef: { name: "hook" } } },
      { revision: SHA, healthStatus: "Healthy" },
    );
    await announce(s.app, [{ event: "DriftCorrected", message: "re-applied 1" }, HEALTHY], s.ports);
    expect(s.sent.map((r) => [r.url, r.body["state"] ?? r.body["text"]])).toEqual([
      [HOOK, "[team-a/web] DriftCorrected: re-applied 1\nRevision: 0123456"],
      [`https://api.github.com/repos/acme/web/statuses/${SHA}`, "success"],
    ]);
  });
});

/** The first column of every Markdown table row in `doc`, without "?" and backticks. */
function tableKeys(doc: string): string[] {
  return [...doc.matchAll(/^\|\s*([^|]+?)\s*\|/gm)].map((m) =>
    m[1]!.replace(/[`?*\\]/g, "").replace(/\s.*$/, ""),
  );
}
