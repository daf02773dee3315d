// announceAndRedeliver against the fake API server: the queue in status, its write and the
// merge when another run wrote status meanwhile.
import { describe, expect, it } from "vitest";
import { addApp, createFakeKube } from "../../test/support/fake-kube.ts";
import type { PendingNotification } from "../app/index.ts";
import type { Transition } from "../plan/index.ts";
import { runContext } from "./context.ts";
import type { Ports } from "./ports.ts";
import { announceAndRedeliver } from "./redeliver.ts";

const NOW = new Date("2026-12-01T10:00:00.000Z");
const SYNCED: Transition = { event: "Synced", message: "applied revision abc1234" };

function setup(slackUp: boolean) {
  const kube = createFakeKube();
  addApp(kube, "team-a", "web", {
    source: { git: { url: "https://git.example/org/repo.git" } },
    notifications: { slack: { secretRef: { name: "slack" } } },
  });
  kube.secrets.set("team-a/slack", { webhookURL: "https://hooks.slack.example/T/B/X" });
  const sent: string[] = [];
  const ports: Ports = {
    kube,
    git: { resolve: async () => "a".repeat(40), fetch: async () => [] },
    notify: {
      async post(_url, body) {
        if (!slackUp) throw new Error("Slack answered HTTP 500");
        sent.push(String(JSON.parse(body)["text"]));
      },
    },
    holder: "test",
  };
  const app = () => kube.apps.get("team-a/web")!;
  return { kube, ports, sent, app };
}

describe("announceAndRedeliver", () => {
  it("keeps what Slack refused, sets when a tick retries it and says so in an Event", async () => {
    const s = setup(false);
    s.app().status = { observedGeneration: 1 };
    const ctx = runContext(structuredClone(s.app()), s.ports, NOW);
    await announceAndRedeliver(ctx, structuredClone(s.app()), [SYNCED]);
    expect(s.app().status?.pendingNotifications).toEqual([
      {
        target: "slack",
        event: "Synced",
        message: "applied revision abc1234",
        at: NOW.toISOString(),
        attempts: 1,
      },
    ]);
    expect(s.app().status?.redeliverAt).toBe("2026-12-01T10:00:30.000Z");
    expect(s.kube.events.map((e) => e.message)).toEqual([
      "Slack: HTTP 500 from the webhook; 1 notification(s) kept in status.pendingNotifications and sent on a later run, for up to 1h after each happened",
    ]);
  });

  it("sends what waits first, marked late, then the new ones; an empty queue is written away", async () => {
    const s = setup(true);
    const waiting: PendingNotification = {
      event: "Failed",
      message: "SourceFailed: HTTP 503",
      at: "2026-12-01T09:30:00.000Z",
      attempts: 3,
    };
    s.app().status = { pendingNotifications: [waiting] };
    const ctx = runContext(structuredClone(s.app()), s.ports, NOW);
    await announceAndRedeliver(ctx, structuredClone(s.app()), [SYNCED]);
    expect(s.sent).toEqual([
      "[team-a/web] Failed: SourceFailed: HTTP 503 (delayed: happened at 2026-12-01T09:30:00.000Z)",
      "[team-a/web] Synced: applied revision abc1234",
    ]);
    expect(s.app().status?.pendingNotifications).toBeUndefined();
  });

  it("merges with a queue another run wrote meanwhile instead of losing or repeating it", async () => {
    const s = setup(false);
    const ours: PendingNotification = {
      event: "Failed",
      message: "ours",
      at: "2026-12-01T09:50:00.000Z",
      attempts: 1,
    };
    const theirs: PendingNotification = {
      event: "Degraded",
      message: "theirs",
      at: "2026-12-01T09:59:00.000Z",
      attempts: 1,
    };
    s.app().status = { pendingNotifications: [ours] };
    const read = structuredClone(s.app());
    // Another run writes status after this one read it: the resourceVersion moves on.
    await s.kube.writeStatus(structuredClone(s.app()), { pendingNotifications: [ours, theirs] });
    await announceAndRedeliver(runContext(read, s.ports, NOW), read, []);
    expect(s.app().status?.pendingNotifications).toEqual([{ ...ours, attempts: 2 }, theirs]);
  });

  it("records the target and the revision of what a target could not send", async () => {
    const s = setup(false);
    const REV = "b".repeat(40);
    s.app().status = { revision: REV, heldRevision: REV };
    const ctx = runContext(structuredClone(s.app()), s.ports, NOW);
    const held: Transition = {
      event: "Held",
      message: "revision bbbbbbb is waiting for approval",
      held: { revision: REV, preview: [] },
    };
    await announceAndRedeliver(ctx, structuredClone(s.app()), [SYNCED, held]);
    expect(s.app().status?.pendingNotifications).toEqual([
      {
        target: "slack",
        event: "Synced",
        message: SYNCED.message,
        at: NOW.toISOString(),
        attempts: 1,
        revision: REV,
      },
      {
        target: "slack",
        event: "Held",
        message: held.message,
        at: NOW.toISOString(),
        attempts: 1,
        revision: REV,
      },
    ]);
  });

  it("reads an entry written without a target as Slack's, and drops one for a target gone", async () => {
    const s = setup(true);
    const old: PendingNotification = {
      event: "Degraded",
      message: "Deployment web",
      at: "2026-12-01T09:59:00.000Z",
      attempts: 1,
    };
    s.app().status = { pendingNotifications: [old] };
    await announceAndRedeliver(
      runContext(structuredClone(s.app()), s.ports, NOW),
      structuredClone(s.app()),
      [],
    );
    expect(s.sent).toEqual([
      "[team-a/web] Degraded: Deployment web (delayed: happened at 2026-12-01T09:59:00.000Z)",
    ]);
    expect(s.app().status?.pendingNotifications).toBeUndefined();

    // The App no longer configures Slack: what waited for it is settled, not kept forever.
    s.app().spec = { source: { git: { url: "https://git.example/org/repo.git" } } };
    s.app().status = {
      pendingNotifications: [{ ...old, target: "slack" }],
      redeliverAt: NOW.toISOString(),
    };
    await announceAndRedeliver(
      runContext(structuredClone(s.app()), s.ports, NOW),
      structuredClone(s.app()),
      [],
    );
    expect(s.sent).toHaveLength(1);
    expect(s.app().status?.pendingNotifications).toBeUndefined();
    expect(s.app().status?.redeliverAt).toBeUndefined();
  });

  it("with several targets, queues only what the one that failed missed, and retries only it", async () => {
    const kube = createFakeKube();
    const REV = "c".repeat(40);
    addApp(kube, "team-a", "web", {
      source: { git: { url: "https://github.com/acme/web.git" } },
      notifications: {
        slack: { secretRef: { name: "slack" } },
        github: { secretRef: { name: "forge" }, apiUrl: "https://ghe.example/api/v3" },
      },
    });
    kube.secrets.set("team-a/slack", { webhookURL: "https://hooks.slack.example/T/B/X" });
    kube.secrets.set("team-a/forge", { token: "ghp_token" });
    let githubUp = false;
    const sent: string[] = [];
    const ports: Ports = {
      kube,
      git: { resolve: async () => REV, fetch: async () => [] },
      notify: {
        async post(url, body) {
          if (url.startsWith("https://ghe.example") && !githubUp) {
            throw Object.assign(new Error("HTTP 502"), { status: 502 });
          }
          const json = JSON.parse(body);
          sent.push(url.startsWith("https://ghe.example") ? `github ${json.state}` : json.text);
        },
      },
      holder: "test",
    };
    const app = () => kube.apps.get("team-a/web")!;
    app().status = { revision: REV, healthStatus: "Progressing" };
    await announceAndRedeliver(
      runContext(structuredClone(app()), ports, NOW),
      structuredClone(app()),
      [{ event: "Synced", message: "applied revision ccccccc" }],
    );
    expect(sent).toEqual(["[team-a/web] Synced: applied revision ccccccc"]);
    expect(app().status?.pendingNotifications).toEqual([
      {
        target: "github",
        event: "Synced",
        message: "applied revision ccccccc",
        at: NOW.toISOString(),
        attempts: 1,
        revision: REV,
      },
    ]);
    expect(kube.events.map((e) => e.message)).toEqual([
      "GitHub: HTTP 502 from the GitHub API; 1 notification(s) kept in status.pendingNotifications and sent on a later run, for up to 1h after each happened",
    ]);

    githubUp = true;
    const later = new Date(NOW.getTime() + 60_000);
    await announceAndRedeliver(
      runContext(structuredClone(app()), ports, later),
      structuredClone(app()),
      [],
    );
    expect(sent).toEqual(["[team-a/web] Synced: applied revision ccccccc", "github pending"]);
    expect(app().status?.pendingNotifications).toBeUndefined();
  });
});
