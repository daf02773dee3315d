// Redaction at the edges outside the loop's status and Events: a run registers its
// credentials and rendered Secrets with the process's Redactor; Slack payloads are redacted
// with it; credentials too short to redact are refused.
import { describe, expect, it } from "vitest";
import { addApp, createFakeKube, FakeKube } from "../../test/support/fake-kube.ts";
import type { SourceFile } from "../core/index.ts";
import { REDACTED, Redactor } from "../core/index.ts";
import { announce } from "./announce.ts";
import type { Ports } from "./index.ts";
import { reconcileApp } from "./index.ts";

const SHA = "a".repeat(40);
const TOKEN = "glpat-very-secret-token";
const SECRET_YAML = `apiVersion: v1
kind: Secret
metadata: {name: api}
stringData: {token: s3cr3t-from-git, port: "5432"}
data: {password: ${btoa("hunter2-hunter2")}}
`;

function setup(files: SourceFile[], creds: Record<string, string> = { token: TOKEN }) {
  const kube = createFakeKube();
  kube.secrets.set("team-a/git", creds);
  addApp(kube, "team-a", "web", {
    source: { git: { url: "https://git.example/org/repo.git", secretRef: { name: "git" } } },
  });
  const redactor = new Redactor();
  const seen: unknown[] = [];
  const ports: Ports = {
    kube,
    git: {
      async resolve(_s, auth) {
        seen.push(auth);
        return SHA;
      },
      async fetch() {
        return files;
      },
    },
    holder: "test",
    sleep: async () => {},
    redactor,
  };
  return { kube, ports, redactor, seen };
}

describe("a run registers its secrets with ports.redactor", () => {
  it("the source credentials and every value of the Secrets it renders", async () => {
    const { ports, redactor } = setup([{ path: "secret.yaml", content: SECRET_YAML }]);
    await reconcileApp({ namespace: "team-a", name: "web" }, ports, new Date());
    const text = `token ${TOKEN}; git s3cr3t-from-git; pw hunter2-hunter2 (${btoa("hunter2-hunter2")}); port "5432"`;
    expect(redactor.redact(text)).toBe(
      `token ${REDACTED}; git ${REDACTED}; pw ${REDACTED} (${REDACTED}); port "${REDACTED}"`,
    );
  });

  it("refuses a token too short to redact, without using it or printing it", async () => {
    const { kube, ports, seen } = setup([], { token: "abc12" });
    const r = await reconcileApp({ namespace: "team-a", name: "web" }, ports, new Date());
    expect(seen).toEqual([]);
    expect(r.outcome).toBe("Failed");
    expect(r.error).toBe(
      "SourceFailed: Secret team-a/git: the token is too short to be redacted from messages; plumb refuses it (use at least 6 characters)",
    );
    expect(JSON.stringify([r, kube.apps.get("team-a/web")?.status, kube.events])).not.toContain(
      "abc12",
    );
  });
});

describe("Slack payloads are redacted", () => {
  it("a transition message echoing a Secret value, and the webhook URL itself", async () => {
    const kube = new FakeKube();
    addApp(kube, "team-a", "web", {
      source: { git: { url: "https://git.example/org/repo.git" } },
      notifications: { slack: { secretRef: { name: "slack" }, on: ["Failed"] } },
    });
    const url = "https://hooks.slack.example/services/T0/B0/xoxb-secret-path";
    kube.secrets.set("team-a/slack", { webhookURL: url });
    const sent: unknown[] = [];
    const redactor = new Redactor().addSecretsOf([
      { apiVersion: "v1", kind: "Secret", stringData: { token: "8675309123" } },
    ]);
    const ports: Ports = {
      kube,
      git: { resolve: async () => SHA, fetch: async () => [] },
      notify: { post: async (_u, body) => void sent.push(JSON.parse(body)) },
      holder: "test",
      redactor,
    };
    const message = `ApplyFailed: .stringData.token: expected string, got &value.valueUnstructured{Value:8675309123}; see ${url}`;
    await announce(kube.apps.get("team-a/web")!, [{ event: "Failed", message }], ports);
    expect(JSON.stringify(sent)).not.toMatch(/8675309123|xoxb-secret-path/);
    expect(sent).toEqual([
      expect.objectContaining({
        text: `[team-a/web] Failed: ApplyFailed: .stringData.token: expected string, got &value.valueUnstructured{Value:${REDACTED}}; see ${REDACTED}`,
      }),
    ]);
  });
});
