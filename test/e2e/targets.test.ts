// Notification targets besides Slack on the real control plane: one App announcing to a
// signed generic webhook, Microsoft Teams and GitHub commit statuses at once, what each
// received, and a commit status redelivered after the forge's outage.
import { createHmac } from "node:crypto";
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
import { type Received, type Receiver, startReceiver } from "../support/receiver.ts";
import { api, createApp, createNamespace, getApp, realPorts, waitFor } from "./support.ts";

const HMAC_KEY = "hmac-key-XXXXsecretXXXX";
const TOKEN = "ghp_XXXXtokenXXXX";

let git: GitServer;
let rx: Receiver;
beforeAll(async () => {
  git = await startGitServer();
  rx = await startReceiver();
});
afterAll(async () => {
  await git?.stop();
  await rx?.stop();
});

const guestbook = () => fixtureFiles(join(REAL_FIXTURES, "guestbook"));
const run = (ns: string) =>
  reconcileApp({ namespace: ns, name: "web" }, realPorts({ notify: createNotifier() }), new Date());
const to = (ns: string, prefix: string): Received[] =>
  rx.received.filter((r) => r.path.startsWith(`/${ns}/${prefix}`));
const header = (r: Received, name: string) => r.headers[name] as string | undefined;

async function secret(ns: string, name: string, stringData: Record<string, string>) {
  await api("POST", `/api/v1/namespaces/${ns}/secrets`, {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name },
    stringData,
  });
}

/** An App in `ns` on the Git repository acme/`ns`, announcing to the three targets. */
async function announcingApp(ns: string): Promise<string> {
  const repo = await git.createRepo(`acme/${ns}`, guestbook());
  await createNamespace(ns);
  await secret(ns, "hooks", {
    address: `${rx.url}/${ns}/hook/XXXXpathXXXX`,
    hmac: HMAC_KEY,
    teams: `${rx.url}/${ns}/teams/workflows/XXXXsigXXXX`,
  });
  await secret(ns, "github", { token: TOKEN });
  await createApp(ns, "web", {
    source: { git: { url: repo.url } },
    notifications: {
      generic: {
        secretRef: { name: "hooks" },
        signingSecretRef: { name: "hooks", key: "hmac" },
      },
      msteams: { secretRef: { name: "hooks", key: "teams" } },
      github: { secretRef: { name: "github" }, apiUrl: `${rx.url}/${ns}/github/api/v3` },
    },
  });
  return repo.head();
}

describe("notification targets", () => {
  it("a signed webhook, a Teams card and GitHub statuses pending → success for one sync", async () => {
    const ns = "targets-all";
    const sha = await announcingApp(ns);
    await run(ns);
    // Runs as the schedule would make them, until the rollout is healthy.
    await waitFor("Healthy", async () => {
      await run(ns);
      return (await getApp(ns, "web")).status?.healthStatus === "Healthy";
    });
    await run(ns);

    const hooks = to(ns, "hook/XXXXpathXXXX");
    expect(hooks.map((r) => r.body)).toEqual([
      {
        app: { namespace: ns, name: "web" },
        event: "Synced",
        severity: "info",
        message: `applied revision ${sha.slice(0, 7)}`,
        revision: sha,
      },
    ]);
    // The receiver's check: the HMAC of the bytes received, with the shared key.
    for (const r of hooks) {
      const expected = createHmac("sha256", HMAC_KEY).update(r.raw).digest("hex");
      expect(header(r, "x-signature")).toBe(`sha256=${expected}`);
      expect(header(r, "content-type")).toBe("application/json");
    }

    const cards = to(ns, "teams/workflows/XXXXsigXXXX").map((r) => r.body as TeamsMessage);
    expect(cards).toHaveLength(1);
    expect(cards[0]!.type).toBe("message");
    expect(cards[0]!.attachments[0]!.contentType).toBe("application/vnd.microsoft.card.adaptive");
    expect(cards[0]!.attachments[0]!.content.body.map((b) => b.text ?? b.facts)).toEqual([
      `${ns}/web — Synced`,
      `applied revision ${sha.slice(0, 7)}`,
      [{ title: "Revision", value: sha.slice(0, 7) }],
    ]);

    const statuses = to(ns, "github/");
    expect(statuses.map((r) => r.path)).toEqual([
      `/${ns}/github/api/v3/repos/acme/${ns}/statuses/${sha}`,
      `/${ns}/github/api/v3/repos/acme/${ns}/statuses/${sha}`,
    ]);
    expect(statuses.map((r) => r.body)).toEqual([
      {
        state: "pending",
        description: `Synced: applied revision ${sha.slice(0, 7)}`,
        context: `plumb/${ns}/web`,
      },
      {
        state: "success",
        description: `Healthy: revision ${sha.slice(0, 7)} is healthy`,
        context: `plumb/${ns}/web`,
      },
    ]);
    for (const r of statuses) {
      expect(header(r, "authorization")).toBe(`Bearer ${TOKEN}`);
      expect(header(r, "accept")).toBe("application/vnd.github+json");
    }
    // No token, key or webhook path anywhere else.
    expect(rx.received.filter((r) => r.raw.includes("XXXX"))).toEqual([]);
    const app = await getApp(ns, "web");
    const events = await api("GET", `/api/v1/namespaces/${ns}/events`);
    expect(JSON.stringify([app, events])).not.toContain("XXXX");
  });

  it("a commit status GitHub refused waits in status for its target and is set on a later run", async () => {
    const ns = "targets-redeliver";
    const sha = await announcingApp(ns);
    rx.setStatus(503);
    try {
      await run(ns);
    } finally {
      rx.setStatus(200);
    }
    const waiting = (await getApp(ns, "web")).status?.pendingNotifications ?? [];
    expect(waiting.map((p) => [p.target, p.event, p.revision, p.attempts])).toEqual([
      ["generic", "Synced", sha, 1],
      ["msteams", "Synced", sha, 1],
      ["github", "Synced", sha, 1],
    ]);
    const refused = rx.refused.filter((r) => r.path.startsWith(`/${ns}/github/`));
    expect(refused).toHaveLength(1);

    await run(ns);
    const status = (await getApp(ns, "web")).status;
    expect(status?.pendingNotifications).toBeUndefined();
    // The redelivered Synced carries the state of the commit now (the run may also have seen
    // the rollout finish, and set success for Healthy after it).
    const set = to(ns, "github/").map((r) => [r.path, r.body] as const);
    const synced = set.filter(([, b]) =>
      (b as { description: string }).description.startsWith("Synced"),
    );
    expect(synced).toEqual([
      [
        `/${ns}/github/api/v3/repos/acme/${ns}/statuses/${sha}`,
        {
          state: status?.healthStatus === "Healthy" ? "success" : "pending",
          description: expect.stringMatching(
            /^Synced: applied revision [0-9a-f]{7} \(delayed: happened at /,
          ),
          context: `plumb/${ns}/web`,
        },
      ],
    ]);
    const others = set.filter(([, b]) => !synced.some(([, c]) => c === b));
    expect(others.length).toBeLessThanOrEqual(1);
    for (const [, b] of others) {
      expect(b).toEqual({
        state: "success",
        description: `Healthy: revision ${sha.slice(0, 7)} is healthy`,
        context: `plumb/${ns}/web`,
      });
    }
  });
});

interface TeamsMessage {
  type: string;
  attachments: Array<{
    contentType: string;
    content: { body: Array<{ text?: string; facts?: unknown }> };
  }>;
}
