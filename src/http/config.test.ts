import { describe, expect, it } from "vitest";
import { httpSecrets, parseHttpConfig } from "./config.ts";

const TOKEN = "s3cr3t-token-value-0123456789";

describe("parseHttpConfig", () => {
  it("reads everything", () => {
    const config = parseHttpConfig({
      PLUMB_API_TOKENS: JSON.stringify([
        { name: "ci", token: TOKEN, namespaces: ["team-a", "team-b"] },
        { name: "admin", token: `${TOKEN}-2` },
      ]),
      GITHUB_WEBHOOK_SECRET: "gh",
      GITLAB_WEBHOOK_TOKEN: "gl",
      GITEA_WEBHOOK_SECRET: "gt",
      PLUMB_ALLOWED_DESTINATIONS: " team-a, shared ,,",
      UNRELATED_BINDING: { send() {} },
    });
    expect(config).toEqual({
      apiTokens: [
        { name: "ci", token: TOKEN, namespaces: ["team-a", "team-b"] },
        { name: "admin", token: `${TOKEN}-2` },
      ],
      githubWebhookSecret: "gh",
      gitlabWebhookToken: "gl",
      giteaWebhookSecret: "gt",
      allowedDestinations: ["team-a", "shared"],
    });
  });

  it("everything is optional; empty values count as unset", () => {
    expect(parseHttpConfig({})).toEqual({ apiTokens: [] });
    expect(parseHttpConfig({ GITHUB_WEBHOOK_SECRET: "", PLUMB_API_TOKENS: "" })).toEqual({
      apiTokens: [],
    });
  });

  it.each([
    [
      "not JSON",
      `ci:${TOKEN}:team-a`,
      "PLUMB_API_TOKENS: expected a JSON array of {name, token, namespaces?} (not valid JSON)",
    ],
    [
      "an object",
      JSON.stringify({ name: "ci", token: TOKEN }),
      "PLUMB_API_TOKENS: expected a JSON array of {name, token, namespaces?} ((top): ",
    ],
    [
      "a short token",
      JSON.stringify([{ name: "ci", token: "short-secret" }]),
      "[0].token: must be at least 16 characters",
    ],
    ["a missing name", JSON.stringify([{ token: TOKEN }]), "[0].name: "],
    [
      "a bad namespace",
      JSON.stringify([{ name: "ci", token: TOKEN, namespaces: ["Team_A"] }]),
      "[0].namespaces[0]: must be a namespace name",
    ],
    [
      "an empty namespace list",
      JSON.stringify([{ name: "ci", token: TOKEN, namespaces: [] }]),
      "[0].namespaces: ",
    ],
    [
      "duplicate tokens",
      JSON.stringify([
        { name: "a", token: TOKEN },
        { name: "b", token: TOKEN },
      ]),
      "tokens must be unique",
    ],
    [
      "an unknown key",
      JSON.stringify([{ name: "ci", token: TOKEN, namespace: "x" }]),
      'Unrecognized key: "namespace"',
    ],
  ])("rejects %s, naming the variable and never echoing the secret", (_, value, fragment) => {
    let message = "";
    try {
      parseHttpConfig({ PLUMB_API_TOKENS: value });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/^PLUMB_API_TOKENS: /);
    expect(message).toContain(fragment);
    expect(message).not.toContain(TOKEN);
    expect(message).not.toContain("short-secret");
  });

  it("rejects bad destinations and non-string bindings by name", () => {
    expect(() => parseHttpConfig({ PLUMB_ALLOWED_DESTINATIONS: "team-a,Bad_NS" })).toThrow(
      'PLUMB_ALLOWED_DESTINATIONS: expected "*" or namespace names, comma-separated (bad: Bad_NS)',
    );
    expect(() => parseHttpConfig({ GITHUB_WEBHOOK_SECRET: 42 })).toThrow(
      "GITHUB_WEBHOOK_SECRET: expected a string",
    );
    expect(parseHttpConfig({ PLUMB_ALLOWED_DESTINATIONS: "*" }).allowedDestinations).toEqual(["*"]);
  });
});

describe("httpSecrets", () => {
  it("lists every secret value of the configuration and nothing else", () => {
    const config = parseHttpConfig({
      PLUMB_API_TOKENS: JSON.stringify([
        { name: "ci", token: TOKEN, namespaces: ["team-a"] },
        { name: "admin", token: `${TOKEN}-2` },
      ]),
      GITHUB_WEBHOOK_SECRET: "github-hook-secret",
      GITLAB_WEBHOOK_TOKEN: "gitlab-hook-token",
      GITEA_WEBHOOK_SECRET: "gitea-hook-secret",
      PLUMB_SESSION_KEY: "k".repeat(32),
      PLUMB_SLACK_SIGNING_SECRET: "slack-signing-secret",
      PLUMB_SLACK_APPROVERS: JSON.stringify({ U0123ABCD: ["team-a"] }),
      PLUMB_NAMESPACE: "plumb-system",
      PLUMB_ALLOWED_DESTINATIONS: "team-a",
    });
    expect(httpSecrets(config)).toEqual([
      "github-hook-secret",
      "gitlab-hook-token",
      "gitea-hook-secret",
      "k".repeat(32),
      "slack-signing-secret",
      TOKEN,
      `${TOKEN}-2`,
    ]);
    expect(httpSecrets(parseHttpConfig({}))).toEqual([]);
  });
});
