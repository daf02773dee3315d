import { describe, expect, it } from "vitest";
import { FakeKube, testApp } from "../../test/support/fake-kube.ts";
import { createHttpApp } from "./app.ts";
import { SECURITY_HEADERS, shownPath } from "./headers.ts";
import { unavailable } from "./readiness.ts";

const TOKEN = "ci-token-0123456789abcdef";

function app() {
  const kube = new FakeKube([testApp("team-a", "web")]);
  return createHttpApp({
    apps: kube,
    config: {
      apiTokens: [{ name: "ci", token: TOKEN }],
      sessionKey: "k".repeat(40),
      githubWebhookSecret: "webhook-secret",
    },
    trigger: kube.trigger,
    now: () => new Date("2026-03-04T05:06:07Z"),
  });
}

const bearer = { authorization: `Bearer ${TOKEN}` };

/** Every kind of answer: a route, a redirect, an HTML page, each error path, a 404, a 405. */
const ANSWERS: Array<[string, string, RequestInit, number]> = [
  ["health", "/healthz", {}, 200],
  ["an API answer", "/api/v1/namespaces/team-a/apps/web", { headers: bearer }, 200],
  ["an API 401", "/api/v1/apps", {}, 401],
  ["an API 404", "/api/v1/namespaces/team-a/apps/nope", { headers: bearer }, 404],
  ["a webhook refused", "/webhooks/github", { method: "POST", body: "{}" }, 401],
  ["a redirect to sign in", "/", {}, 303],
  ["the sign-in page", "/login", {}, 200],
  ["sign-out without a session (a redirect)", "/logout", { method: "POST" }, 303],
  ["an HTML error page", "/apps/team-a/web/operations", { method: "POST" }, 401],
  ["the stylesheet", "/assets/plumb.css", {}, 200],
  ["an unknown route", "/nope/<script>", {}, 404],
  ["a method a route does not serve", "/healthz", { method: "DELETE" }, 405],
  [
    "a body over the limit",
    "/webhooks/github",
    { method: "POST", body: "x".repeat(1024 * 1024 + 1) },
    413,
  ],
];

describe("every answer carries the same security headers", () => {
  it.each(ANSWERS)("%s", async (_, path, init, status) => {
    const res = await app().request(path, init);
    expect(res.status).toBe(status);
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) {
      expect({ name, value: res.headers.get(name) }).toEqual({ name, value });
    }
    // Nothing is cached but the stylesheet, which says so itself.
    expect(res.headers.get("cache-control")).toBe(
      path === "/assets/plumb.css" ? "public, max-age=3600" : "no-store",
    );
  });

  it("so does the answer of a Worker whose settings are invalid (made outside the app)", async () => {
    const res = unavailable("/healthz", ["PLUMB_API_TOKENS: not valid JSON"]);
    expect(res.status).toBe(503);
    expect(res.headers.get("x-frame-options")).toBe("DENY");
    expect(res.headers.get("content-security-policy")).toBe(
      SECURITY_HEADERS["content-security-policy"],
    );
  });
});

describe("a 404 or 405 never echoes the request path decoded", () => {
  it.each([
    ["/%3Cscript%3Ealert(1)%3C/script%3E", "/%3Cscript%3Ealert(1)%3C/script%3E"],
    ["/a%22b%0Ac%20d", "/a%22b%0Ac%20d"],
    ["/%E2%80%AEevil", "/%E2%80%AEevil"],
    ["/x'y", "/x%27y"],
  ])("%s", async (path, shown) => {
    const res = await app().request(path);
    expect(res.status).toBe(404);
    const body = (await res.json()) as { message: string };
    expect(body.message).toBe(`no route for GET ${shown}`);
    expect(body.message.slice("no route for GET ".length)).not.toMatch(/[<>"'\s\u202e]/);
  });

  it("a 405 quotes the path as the URL spells it", async () => {
    const res = await app().request("/apps/%3Cb%3E/x%22", { method: "PUT" });
    expect(res.status).toBe(405);
    expect(((await res.json()) as { message: string }).message).toBe(
      "PUT is not allowed on /apps/%3Cb%3E/x%22; use GET, HEAD",
    );
  });

  it("a long path is cut to 200 characters", () => {
    expect(shownPath(`http://h/${"a".repeat(500)}`)).toHaveLength(200);
  });
});
