import { describe, expect, it } from "vitest";
import { configWarnings, unavailable } from "./readiness.ts";

describe("configWarnings", () => {
  it("names what leaves part of the API unusable, and nothing when all is set", () => {
    expect(configWarnings({ apiTokens: [] })).toEqual([
      "PLUMB_API_TOKENS is not set: every /api request and the web page's sign-in are refused (401)",
      "no webhook secret is set (GITHUB_WEBHOOK_SECRET, GITLAB_WEBHOOK_TOKEN, GITEA_WEBHOOK_SECRET): every /webhooks route answers 404",
    ]);
    expect(
      configWarnings({
        apiTokens: [{ name: "a", token: "t".repeat(16) }],
        gitlabWebhookToken: "x",
      }),
    ).toEqual([]);
  });
});

describe("unavailable", () => {
  it("is 503 naming each problem: a status at /healthz, a message elsewhere", async () => {
    const problems = ["KUBE_TOKEN is not set (wrangler secret put KUBE_TOKEN)"];
    const health = unavailable("/healthz", problems);
    expect(health.status).toBe(503);
    expect(await health.json()).toEqual({ status: "unavailable", problems });
    const api = unavailable("/api/v1/apps", problems);
    expect(api.status).toBe(503);
    expect(await api.json()).toEqual({
      message: "configuration error: KUBE_TOKEN is not set (wrangler secret put KUBE_TOKEN)",
      problems,
    });
  });
});
