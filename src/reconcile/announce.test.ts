// Slack notifications that cannot be sent: one Warning Event and one log line, naming what is
// wrong and never the webhook URL or any Secret value.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addApp, createFakeKube, type FakeKube } from "../../test/support/fake-kube.ts";
import type { App } from "../app/index.ts";
import { KubeApiError } from "../core/index.ts";
import { createNotifier } from "../notify/index.ts";
import type { Transition } from "../plan/index.ts";
import { announce } from "./announce.ts";
import type { NotifyPort, Ports } from "./index.ts";

const WEBHOOK = "https://hooks.slack.example/services/T000/B000/XXXXsecretXXXX";
const SYNCED: Transition[] = [{ event: "Synced", message: "applied revision abc1234" }];

interface Setup {
  kube: FakeKube;
  app: App;
  ports: Ports;
  sent: Array<{ url: string; payload: Record<string, unknown> }>;
  logs: Array<Record<string, unknown>>;
  types: string[];
}

function setup(
  notify: NotifyPort | "record",
  slack: Record<string, unknown> = { secretRef: { name: "slack" } },
): Setup {
  const kube = createFakeKube();
  addApp(kube, "team-a", "web", {
    source: { git: { url: "https://git.example/org/repo.git" } },
    notifications: { slack },
  });
  const app = kube.apps.get("team-a/web")!;
  const sent: Setup["sent"] = [];
  const logs: Setup["logs"] = [];
  const types: string[] = [];
  const emit = kube.emitEvent.bind(kube);
  kube.emitEvent = async (a, event) => {
    types.push(event.type);
    await emit(a, event);
  };
  const ports: Ports = {
    kube,
    git: {
      resolve: async () => "a".repeat(40),
      fetch: async () => [],
    },
    notify:
      notify === "record"
        ? {
            async post(url, body) {
              sent.push({ url, payload: JSON.parse(body) });
            },
          }
        : notify,
    holder: "test",
    log: (entry) => logs.push(entry),
  };
  return { kube, app, ports, sent, logs, types };
}

/** Everything a failure put where people can read it. */
const shown = (s: Setup) => JSON.stringify([s.kube.events, s.logs]);

describe("announce", () => {
  it("posts one message per subscribed transition and emits no Event", async () => {
    const s = setup("record", { secretRef: { name: "slack" }, channel: "#deploys" });
    s.kube.secrets.set("team-a/slack", { webhookURL: WEBHOOK });
    await announce(s.app, SYNCED, s.ports);
    expect(s.sent).toHaveLength(1);
    expect(s.sent[0]?.url).toBe(WEBHOOK);
    expect(s.sent[0]?.payload["channel"]).toBe("#deploys");
    expect(s.sent[0]?.payload["text"]).toBe("[team-a/web] Synced: applied revision abc1234");
    expect(s.kube.events).toEqual([]);
    expect(s.logs).toEqual([]);
  });

  it("reports a missing Secret", async () => {
    const s = setup("record");
    await announce(s.app, SYNCED, s.ports);
    expect(s.sent).toEqual([]);
    expect(s.kube.events).toEqual([
      { reason: "NotificationFailed", message: "Slack: Secret team-a/slack not found" },
    ]);
    expect(s.types).toEqual(["Warning"]);
    expect(s.logs).toEqual([{ app: "team-a/web", msg: "Slack: Secret team-a/slack not found" }]);
  });

  it("reports a missing key, the default one or a named one, without Secret values", async () => {
    const s = setup("record");
    s.kube.secrets.set("team-a/slack", { url: WEBHOOK });
    await announce(s.app, SYNCED, s.ports);
    expect(s.kube.events).toEqual([
      {
        reason: "NotificationFailed",
        message: 'Slack: Secret team-a/slack has no key "webhookURL"',
      },
    ]);
    expect(s.logs).toEqual([
      { app: "team-a/web", msg: 'Slack: Secret team-a/slack has no key "webhookURL"' },
    ]);

    const named = setup("record", { secretRef: { name: "slack", key: "hook" } });
    named.kube.secrets.set("team-a/slack", { webhookURL: WEBHOOK });
    await announce(named.app, SYNCED, named.ports);
    expect(named.kube.events.map((e) => e.message)).toEqual([
      'Slack: Secret team-a/slack has no key "hook"',
    ]);
    expect(shown(s) + shown(named)).not.toContain("XXXXsecretXXXX");
  });

  it("reports a Secret it may not read by status only", async () => {
    const s = setup("record");
    s.kube.getSecret = async () => {
      throw new KubeApiError(403, "Forbidden", 'secrets "slack" is forbidden: User "x" cannot get');
    };
    await announce(s.app, SYNCED, s.ports);
    expect(s.kube.events.map((e) => e.message)).toEqual([
      "Slack: could not read Secret team-a/slack (HTTP 403 Forbidden)",
    ]);
  });

  it("reports an HTTP error once, even with several transitions", async () => {
    let calls = 0;
    const s = setup({
      async post() {
        calls++;
        throw new Error("Slack answered HTTP 404");
      },
    });
    s.kube.secrets.set("team-a/slack", { webhookURL: WEBHOOK });
    const both: Transition[] = [...SYNCED, { event: "Degraded", message: "Deployment/web" }];
    await announce(s.app, both, s.ports);
    expect(calls).toBe(1);
    expect(s.kube.events).toEqual([
      { reason: "NotificationFailed", message: "Slack: HTTP 404 from the webhook" },
    ]);
    expect(s.types).toEqual(["Warning"]);
    expect(s.logs).toEqual([{ app: "team-a/web", msg: "Slack: HTTP 404 from the webhook" }]);
  });

  it("never shows a URL that fetch put in its error message", async () => {
    const s = setup({
      async post(url) {
        throw new TypeError(`Failed to parse URL from ${url}`, {
          cause: Object.assign(new TypeError("Invalid URL"), { code: "ERR_INVALID_URL" }),
        });
      },
    });
    s.kube.secrets.set("team-a/slack", { webhookURL: "hooks XXXXsecretXXXX" });
    await announce(s.app, SYNCED, s.ports);
    expect(s.kube.events.map((e) => e.message)).toEqual([
      'Slack: the webhook URL in Secret team-a/slack key "webhookURL" is not a valid URL',
    ]);
    expect(shown(s)).not.toContain("XXXXsecretXXXX");
  });

  it("swallows a failure to emit the Event and still logs", async () => {
    const s = setup("record");
    s.kube.emitEvent = async () => {
      throw new KubeApiError(403, "Forbidden", "events is forbidden");
    };
    await expect(announce(s.app, SYNCED, s.ports)).resolves.toEqual(SYNCED);
    expect(s.logs).toEqual([{ app: "team-a/web", msg: "Slack: Secret team-a/slack not found" }]);
  });

  it("does nothing when no transition is subscribed to", async () => {
    const s = setup("record", { secretRef: { name: "slack" }, on: ["Failed"] });
    await announce(s.app, SYNCED, s.ports);
    expect(s.kube.events).toEqual([]);
    expect(s.logs).toEqual([]);
  });
});

describe("announce with the real Slack notifier", () => {
  let server: Server;
  let base: string;
  let closed: string;
  beforeAll(async () => {
    server = createServer((_req, res) => {
      res.statusCode = 404;
      res.end("no_service");
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const gone = createServer();
    await new Promise<void>((r) => gone.listen(0, "127.0.0.1", r));
    closed = `http://127.0.0.1:${(gone.address() as AddressInfo).port}`;
    await new Promise<void>((r) => gone.close(() => r()));
  });
  afterAll(async () => {
    await new Promise<void>((r) => server.close(() => r()));
  });

  it("names the HTTP status of the webhook's answer, not the URL", async () => {
    const s = setup(createNotifier());
    s.kube.secrets.set("team-a/slack", { webhookURL: `${base}/services/XXXXsecretXXXX` });
    await announce(s.app, SYNCED, s.ports);
    expect(s.kube.events).toEqual([
      { reason: "NotificationFailed", message: "Slack: HTTP 404 from the webhook" },
    ]);
    expect(shown(s)).not.toContain("XXXXsecretXXXX");
  });

  it("names the network error code when the connection fails", async () => {
    const s = setup(createNotifier());
    s.kube.secrets.set("team-a/slack", { webhookURL: `${closed}/services/XXXXsecretXXXX` });
    await announce(s.app, SYNCED, s.ports);
    expect(s.kube.events).toEqual([
      { reason: "NotificationFailed", message: "Slack: connection failed (ECONNREFUSED)" },
    ]);
    expect(s.logs).toEqual([{ app: "team-a/web", msg: "Slack: connection failed (ECONNREFUSED)" }]);
    expect(shown(s)).not.toContain("XXXXsecretXXXX");
    expect(shown(s)).not.toContain(closed);
  });

  it("names a webhook URL that fetch refuses without showing it", async () => {
    const s = setup(createNotifier());
    s.kube.secrets.set("team-a/slack", { webhookURL: "http://127.0.0.1:9/XXXXsecretXXXX" });
    await announce(s.app, SYNCED, s.ports);
    expect(s.kube.events.map((e) => e.message)).toEqual([
      'Slack: the webhook URL in Secret team-a/slack key "webhookURL" cannot be used (bad port)',
    ]);
  });
});
