// One redactor per run: status, Events, the run line and logs, also when the
// composition root passed no redactor; identity fields are never rewritten.
import { describe, expect, it } from "vitest";
import { addApp, createFakeKube } from "../../test/support/fake-kube.ts";
import type { AppStatus } from "../app/index.ts";
import { Redactor, SourceError } from "../core/index.ts";
import type { Ports } from "./index.ts";
import { reconcileApp } from "./index.ts";
import { redactStatus } from "./redaction.ts";

const TOKEN = "glpat-9x/Q+z=Kp7mW2v";
const BASIC = Buffer.from(`deploy:${TOKEN}`).toString("base64");

describe("a run redacts what it writes with one redactor", () => {
  it("a source error echoing the Basic header: status, Events, line and logs carry [redacted]", async () => {
    const kube = createFakeKube();
    kube.secrets.set("team-a/git", { username: "deploy", token: TOKEN });
    addApp(kube, "team-a", "web", {
      source: { git: { url: "https://git.example/org/repo.git", secretRef: { name: "git" } } },
    });
    const logs: unknown[] = [];
    const ports: Ports = {
      kube,
      git: {
        async resolve() {
          throw new SourceError(`ERR access denied (you sent Basic ${BASIC})`, true);
        },
        async fetch() {
          return [];
        },
      },
      holder: "test",
      log: (e) => logs.push(e),
    };
    const r = await reconcileApp({ namespace: "team-a", name: "web" }, ports, new Date());
    expect(r.error).toBe("SourceFailed: ERR access denied (you sent Basic [redacted])");
    const status = kube.apps.get("team-a/web")!.status!;
    expect(status.conditions?.find((c) => c.type === "Ready")?.message).toBe(
      "ERR access denied (you sent Basic [redacted])",
    );
    expect(kube.events).toEqual([
      { reason: "SourceFailed", message: "ERR access denied (you sent Basic [redacted])" },
    ]);
    expect(JSON.stringify([r, status, kube.events, logs])).not.toContain(BASIC);
  });
});

/** A password with characters every encoding changes: quotes, backslash, non-ASCII, emoji. */
const PASSWORD = 'pä$$ "wörd" \\ 🔑/+=';
const b64 = (s: string) => Buffer.from(s).toString("base64");
/** The forms of a credential a peer may echo, by name. */
const ECHOES: Record<string, string> = {
  plain: PASSWORD,
  "base64 of user:password (Basic)": b64(`deploy:${PASSWORD}`),
  "base64 of user:password, unpadded": b64(`deploy:${PASSWORD}`).replace(/=+$/, ""),
  base64: b64(PASSWORD),
  base64url: b64(PASSWORD).replaceAll("+", "-").replaceAll("/", "_"),
  "URL-encoded": encodeURIComponent(PASSWORD),
  "URL-encoded userinfo": `deploy:${encodeURIComponent(PASSWORD)}@git.example`,
  "form-encoded": new URLSearchParams({ p: PASSWORD }).toString().slice(2),
  "JSON-escaped": JSON.stringify(PASSWORD),
  "JSON-escaped, ASCII only": JSON.stringify(PASSWORD).replace(
    /[\u007f-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  ),
  "JSON in JSON": JSON.stringify(JSON.stringify(PASSWORD)),
};

describe("every encoding of a credential, wherever a run says something", () => {
  it("a source error echoing them: none in status, Events, the line, logs or Slack", async () => {
    const kube = createFakeKube();
    kube.secrets.set("team-a/git", { username: "deploy", password: PASSWORD });
    kube.secrets.set("team-a/slack", { webhookURL: "https://hooks.slack.example/T1/B2/xyz" });
    addApp(kube, "team-a", "web", {
      source: { git: { url: "https://git.example/org/repo.git", secretRef: { name: "git" } } },
      notifications: { slack: { secretRef: { name: "slack" }, on: ["Failed"] } },
    });
    const logs: unknown[] = [];
    const slack: Array<Record<string, unknown>> = [];
    const echoed = Object.entries(ECHOES)
      .map(([name, form]) => `${name}: ${form}`)
      .join("; ");
    const ports: Ports = {
      kube,
      git: {
        async resolve() {
          throw new SourceError(`ERR access denied (${echoed})`, true);
        },
        async fetch() {
          return [];
        },
      },
      notify: {
        async post(_url, body) {
          slack.push(JSON.parse(body));
        },
      },
      holder: "test",
      log: (e) => logs.push(e),
    };
    const r = await reconcileApp({ namespace: "team-a", name: "web" }, ports, new Date());
    const status = kube.apps.get("team-a/web")!.status!;
    const said = {
      line: JSON.stringify(r),
      status: JSON.stringify(status),
      events: JSON.stringify(kube.calls.emitEvent),
      logs: JSON.stringify(logs),
      slack: JSON.stringify(slack),
    };
    // Each place said something about the failure, so the check below can fail.
    expect(r.error).toMatch(/^SourceFailed: ERR access denied \(plain: \[redacted\]; /);
    expect(status.conditions?.find((c) => c.type === "Ready")?.reason).toBe("SourceFailed");
    expect(kube.calls.emitEvent.map((e) => e.reason)).toContain("SourceFailed");
    expect(slack).toHaveLength(1);
    for (const [where, text] of Object.entries(said)) {
      // Written as JSON: a form is found as JSON would spell it there.
      for (const [name, form] of Object.entries(ECHOES)) {
        const spelled = JSON.stringify(form).slice(1, -1);
        expect(text.includes(spelled), `${where} holds the ${name} form`).toBe(false);
      }
      expect(text).not.toContain("w\\u00f6rd");
    }
    // Every form became [redacted] (the message still names each one).
    for (const name of Object.keys(ECHOES)) {
      expect(r.error).toContain(`${name}: `);
    }
    expect(r.error?.match(/\[redacted\]/g)?.length).toBeGreaterThanOrEqual(
      Object.keys(ECHOES).length,
    );
  });
});

describe("redactStatus", () => {
  it("redacts text but never the inventory, resource refs, revisions or hashes", () => {
    const secret = "web-config-abc"; // a Secret value that is also an object's name
    const redactor = new Redactor([secret]);
    const ref = { apiVersion: "v1", kind: "ConfigMap", name: secret, namespace: "team-a" };
    const status: AppStatus = {
      revision: "a".repeat(40),
      objectHash: "h1",
      inventory: [ref],
      resources: [{ ...ref, status: "Failed", message: `value ${secret} refused` }],
      drift: [{ ...ref, fields: [{ path: "data.k", desired: secret, live: "other" }] }],
      healthReason: `ConfigMap ${secret} missing`,
    };
    const shown = redactStatus(status, redactor);
    expect(shown.inventory).toEqual([ref]);
    expect(shown.resources).toEqual([
      { ...ref, status: "Failed", message: "value [redacted] refused" },
    ]);
    expect(shown.drift).toEqual([
      { ...ref, fields: [{ path: "data.k", desired: "[redacted]", live: "other" }] },
    ]);
    expect(shown.healthReason).toBe("ConfigMap [redacted] missing");
    expect(shown.revision).toBe("a".repeat(40));
    // The input is left alone.
    expect(status.healthReason).toBe(`ConfigMap ${secret} missing`);
  });
});
