import { createHmac } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { FakeKube, testApp } from "../../test/support/fake-kube.ts";
import { KubeApiError } from "../core/index.ts";
import { createHttpApp } from "./app.ts";
import type { HttpConfig } from "./config.ts";
import { parsePush } from "./webhooks.ts";

const ROOT = path.resolve(import.meta.dirname, "../..");
const SHARED = path.resolve(ROOT, "test/fixtures/webhooks");
const shared = (name: string) => new Uint8Array(readFileSync(path.join(SHARED, name)));
const GITHUB_BODY = new Uint8Array(
  readFileSync(path.join(import.meta.dirname, "testdata/github-push.json")),
);

const GITHUB_SECRET = "gh-secret-of-the-test";
const GITLAB_TOKEN = "gl-token-of-the-test";
const GITEA_SECRET = "gitea-secret-of-the-test";
const CONFIG: HttpConfig = {
  apiTokens: [],
  githubWebhookSecret: GITHUB_SECRET,
  gitlabWebhookToken: GITLAB_TOKEN,
  giteaWebhookSecret: GITEA_SECRET,
};

/** Independent of the code under test: node:crypto over the exact bytes. */
const hmac = (secret: string, body: Uint8Array) =>
  createHmac("sha256", secret).update(body).digest("hex");

function setup(apps = APPS, config: HttpConfig = CONFIG) {
  const kube = new FakeKube(apps);
  const log: Array<Record<string, unknown>> = [];
  const app = createHttpApp({
    apps: kube,
    config,
    trigger: kube.trigger,
    now: () => new Date("2026-03-04T05:06:07Z"),
    log: (e) => log.push(e),
  });
  const post = (
    p: string,
    body: Uint8Array<ArrayBuffer> | string,
    headers: Record<string, string>,
  ) =>
    app.request(p, {
      method: "POST",
      body,
      headers: { "content-type": "application/json", ...headers },
    });
  return { kube, app, post, log };
}

const APPS = [
  testApp("team-a", "web", { url: "https://github.com/octo-org/demo.git", ref: "main" }),
  testApp("team-a", "web-ssh-url", { url: "https://GitHub.com/octo-org/demo/", ref: "HEAD" }),
  testApp("team-b", "copy", { url: "https://github.com/octo-org/demo-copy.git", ref: "main" }),
  testApp("team-b", "tagged", { url: "https://github.com/octo-org/demo", ref: "refs/tags/v1" }),
  testApp("team-b", "pinned", {
    url: "https://github.com/octo-org/demo",
    ref: "0d1a26e67d8f5eaf1f6ba5c57fc3c7d91ac0fd1c",
  }),
  {
    ...testApp("team-c", "image"),
    spec: { source: { image: { repository: "github.com/octo-org/demo" } } },
  },
];

const WEB_SOURCE = { url: "https://github.com/octo-org/demo.git", ref: "main" };
const WEB_SSH_SOURCE = { url: "https://GitHub.com/octo-org/demo/", ref: "HEAD" };

const githubHeaders = (body: Uint8Array, event = "push", secret = GITHUB_SECRET) => ({
  "X-GitHub-Event": event,
  "X-GitHub-Delivery": "72d3162e-cc78-11e3-81ab-4c9367dc0958",
  "X-Hub-Signature-256": `sha256=${hmac(secret, body)}`,
});

describe("POST /webhooks/github", () => {
  it("the fixture's raw body has non-ASCII text and an upper-case \\u001B escape", () => {
    const text = new TextDecoder().decode(GITHUB_BODY);
    expect(text).toContain("café ✓ 日本");
    expect(text).toContain("\\u001B[32m");
    expect(GITHUB_BODY.length).toBeGreaterThan(text.length); // multi-byte UTF-8
    // Re-serializing changes the bytes, so a signature over re-serialized JSON would not verify.
    expect(JSON.stringify(JSON.parse(text))).not.toContain("\\u001B");
  });

  it("accepts a signed push and triggers exactly the matching Apps", async () => {
    const { kube, post, log } = setup();
    const res = await post("/webhooks/github", GITHUB_BODY, githubHeaders(GITHUB_BODY));
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({
      apps: ["team-a/web", "team-a/web-ssh-url"],
      revision: "0d1a26e67d8f5eaf1f6ba5c57fc3c7d91ac0fd1c",
      ref: "refs/heads/main",
    });
    // Each App with its Git source as written: the runtime looks each source up once.
    expect(kube.calls.trigger).toEqual([
      {
        apps: [
          { namespace: "team-a", name: "web", source: WEB_SOURCE },
          { namespace: "team-a", name: "web-ssh-url", source: WEB_SSH_SOURCE },
        ],
        reason: "webhook: push refs/heads/main 0d1a26e67d8f5eaf1f6ba5c57fc3c7d91ac0fd1c",
      },
    ]);
    expect(kube.calls.listApps).toEqual([undefined]);
    expect(JSON.stringify(log)).not.toContain(GITHUB_SECRET);
  });

  it("rejects one flipped byte in the body with 401 and triggers nothing", async () => {
    const { kube, post } = setup();
    const tampered = GITHUB_BODY.slice();
    const at =
      new TextDecoder().decode(GITHUB_BODY).indexOf("refs/heads/main") + "refs/heads/".length;
    tampered[at] = "n".charCodeAt(0); // main → nain
    const res = await post("/webhooks/github", tampered, githubHeaders(GITHUB_BODY));
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ message: "missing or invalid X-Hub-Signature-256 header" });
    expect(kube.calls.trigger).toEqual([]);
    expect(kube.calls.listApps).toEqual([]);
  });

  it.each([
    ["missing", undefined],
    ["empty", ""],
    ["not hex", `sha256=${"z".repeat(64)}`],
    ["short", `sha256=${hmac(GITHUB_SECRET, GITHUB_BODY).slice(0, 40)}`],
    ["sha1 form", `sha1=${hmac(GITHUB_SECRET, GITHUB_BODY)}`],
    ["wrong secret", `sha256=${hmac("another-secret", GITHUB_BODY)}`],
  ])("rejects a %s signature with 401", async (_, signature) => {
    const { kube, post } = setup();
    const headers: Record<string, string> = { "X-GitHub-Event": "push" };
    if (signature !== undefined) headers["X-Hub-Signature-256"] = signature;
    const res = await post("/webhooks/github", GITHUB_BODY, headers);
    expect(res.status).toBe(401);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(kube.calls.trigger).toEqual([]);
  });

  it("rejects a signature over re-serialized JSON: the HMAC is over the raw bytes", async () => {
    const { kube, post } = setup();
    const reserialized = new TextEncoder().encode(
      JSON.stringify(JSON.parse(new TextDecoder().decode(GITHUB_BODY))),
    );
    const res = await post("/webhooks/github", GITHUB_BODY, githubHeaders(reserialized));
    expect(res.status).toBe(401);
    expect(kube.calls.trigger).toEqual([]);
  });

  it("accepts an upper-case hex signature (same bytes)", async () => {
    const { post } = setup();
    const headers = {
      ...githubHeaders(GITHUB_BODY),
      "X-Hub-Signature-256": `sha256=${hmac(GITHUB_SECRET, GITHUB_BODY).toUpperCase()}`,
    };
    expect((await post("/webhooks/github", GITHUB_BODY, headers)).status).toBe(202);
  });

  it("answers a signed ping with pong", async () => {
    const { kube, post } = setup();
    const body = new TextEncoder().encode('{"zen":"Keep it logically awesome.","hook_id":1}');
    const res = await post("/webhooks/github", body, githubHeaders(body, "ping"));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ message: "pong" });
    expect(kube.calls.listApps).toEqual([]);
  });

  it("does not answer an unsigned ping", async () => {
    const { post } = setup();
    const res = await post("/webhooks/github", "{}", { "X-GitHub-Event": "ping" });
    expect(res.status).toBe(401);
  });

  it("ignores other events with 202", async () => {
    const { kube, post } = setup();
    const body = new TextEncoder().encode('{"action":"opened"}');
    const res = await post("/webhooks/github", body, githubHeaders(body, "issues"));
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ ignored: true, event: "issues" });
    expect(kube.calls.trigger).toEqual([]);
  });

  it("ignores a push that deletes the branch", async () => {
    const { kube, post } = setup();
    const text = new TextDecoder()
      .decode(GITHUB_BODY)
      .replace(
        '"after": "0d1a26e67d8f5eaf1f6ba5c57fc3c7d91ac0fd1c"',
        `"after": "${"0".repeat(40)}"`,
      );
    const body = new TextEncoder().encode(text);
    const res = await post("/webhooks/github", body, githubHeaders(body));
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({
      ignored: true,
      event: "push",
      reason: "ref refs/heads/main deleted",
    });
    expect(kube.calls.trigger).toEqual([]);
  });

  it("answers 202 with no Apps and no trigger when nothing matches, saying what it compared", async () => {
    // team-b/copy follows octo-org/demo-copy: not this repository (equality, never a prefix).
    const { kube, post, log } = setup([APPS[2]!]);
    const res = await post("/webhooks/github", GITHUB_BODY, githubHeaders(GITHUB_BODY));
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({
      apps: [],
      revision: "0d1a26e67d8f5eaf1f6ba5c57fc3c7d91ac0fd1c",
      ref: "refs/heads/main",
      reason:
        'no App\'s spec.source.git.url is this repository (compared as github.com/octo-org/demo: scheme, credentials, default port, a trailing "/" and ".git" aside)',
      repositories: ["github.com/octo-org/demo"],
    });
    expect(kube.calls.trigger).toEqual([]);
    expect(log.at(-1)).toMatchObject({
      msg: "webhook push",
      apps: 0,
      repositories: ["github.com/octo-org/demo"],
    });
  });

  it("when Apps follow the repository on other refs, says how many, never which", async () => {
    // team-b/tagged follows refs/tags/v1, team-b/pinned a commit; the push is to main.
    const { kube, post } = setup([APPS[3]!, APPS[4]!, APPS[2]!]);
    const res = await post("/webhooks/github", GITHUB_BODY, githubHeaders(GITHUB_BODY));
    expect(res.status).toBe(202);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body["apps"]).toEqual([]);
    expect(body["reason"]).toBe(
      "2 Apps follow this repository, none on refs/heads/main (spec.source.git.ref: a branch, refs/heads/…, a tag or refs/tags/…, or HEAD; HEAD follows the default branch, main; an App pinned to a commit never matches a push)",
    );
    expect(JSON.stringify(body)).not.toMatch(/team-b|tagged|copy|refs\/tags\/v1/);
    expect(kube.calls.trigger).toEqual([]);
  });

  it("400 for signed malformed JSON and for a signed body that is not a push", async () => {
    const { kube, post } = setup();
    const bad = new TextEncoder().encode('{"ref": "refs/heads/main",');
    const r1 = await post("/webhooks/github", bad, githubHeaders(bad));
    expect(r1.status).toBe(400);
    expect(await r1.json()).toEqual({ message: "malformed JSON body" });

    const notPush = new TextEncoder().encode('{"ref":"main","after":"abc"}');
    const r2 = await post("/webhooks/github", notPush, githubHeaders(notPush));
    expect(r2.status).toBe(400);
    const j = (await r2.json()) as { message: string; issues: Array<{ path: string }> };
    expect(j.message).toBe("not a push payload");
    expect(j.issues.map((i) => i.path).sort()).toEqual(["body.ref", "body.repository"]);
    expect(kube.calls.trigger).toEqual([]);
  });

  it("400 when the event header is missing from a signed delivery", async () => {
    const { post } = setup();
    const headers: Record<string, string> = { ...githubHeaders(GITHUB_BODY) };
    delete headers["X-GitHub-Event"];
    const res = await post("/webhooks/github", GITHUB_BODY, headers);
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ message: "missing X-GitHub-Event header" });
  });

  it("404 when GitHub webhooks are not configured", async () => {
    const { post } = setup(APPS, { apiTokens: [] });
    const res = await post("/webhooks/github", GITHUB_BODY, githubHeaders(GITHUB_BODY));
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ message: "github webhooks are not configured" });
  });

  it("413 for a body over 1 MiB, announced or streamed, before anything is triggered", async () => {
    const { kube, app } = setup();
    const big = new Uint8Array(1024 * 1024 + 1).fill(0x20);
    const announced = await app.request("/webhooks/github", {
      method: "POST",
      body: big,
      headers: { ...githubHeaders(big), "content-length": String(big.length) },
    });
    expect(announced.status).toBe(413);
    expect(await announced.json()).toEqual({
      message: "request body exceeds 1048576 bytes (1 MiB)",
    });

    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 5; i++) controller.enqueue(big.subarray(0, 256 * 1024 + 1));
        controller.close();
      },
    });
    const streamed = await app.request("/webhooks/github", {
      method: "POST",
      body: stream,
      headers: githubHeaders(big),
      duplex: "half",
    } as RequestInit);
    expect(streamed.status).toBe(413);
    expect(kube.calls.trigger).toEqual([]);
  });

  it("a body of exactly 1 MiB is read (and here fails the signature check)", async () => {
    const { post } = setup();
    const max = new Uint8Array(1024 * 1024).fill(0x20);
    const res = await post("/webhooks/github", max, {
      "X-GitHub-Event": "push",
      "X-Hub-Signature-256": "sha256=00",
    });
    expect(res.status).toBe(401);
  });

  it("maps a Kubernetes API failure while listing Apps to 502", async () => {
    const { kube, post } = setup();
    kube.fail.listAppRows = new KubeApiError(
      403,
      "Forbidden",
      "apps.plumb.dev is forbidden: User cannot list",
    );
    const res = await post("/webhooks/github", GITHUB_BODY, githubHeaders(GITHUB_BODY));
    expect(res.status).toBe(502);
    expect(await res.json()).toEqual({
      message: "kubernetes API error",
      status: 403,
      reason: "Forbidden",
    });
    expect(kube.calls.trigger).toEqual([]);
  });

  it("maps an unexpected trigger failure to a generic 500", async () => {
    const kube = new FakeKube(APPS);
    const log: Array<Record<string, unknown>> = [];
    const app = createHttpApp({
      apps: kube,
      config: CONFIG,
      trigger: () => Promise.reject(new Error("queue send failed")),
      now: () => new Date(),
      log: (e) => log.push(e),
    });
    const res = await app.request("/webhooks/github", {
      method: "POST",
      body: GITHUB_BODY,
      headers: githubHeaders(GITHUB_BODY),
    });
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ message: "internal error" });
    expect(log).toEqual([
      {
        msg: "unexpected error",
        error: "Error",
        detail: "queue send failed",
        method: "POST",
        path: "/webhooks/github",
      },
    ]);
  });
});

describe("POST /webhooks/gitlab (real GitLab payloads)", () => {
  const gitlabApps = [
    testApp("mike", "diaspora-master", {
      url: "https://example.com/mike/diaspora.git",
      ref: "master",
    }),
    testApp("mike", "diaspora-head", { url: "https://example.com/mike/diaspora" }),
    testApp("mike", "diaspora-main", { url: "https://example.com/mike/diaspora.git", ref: "main" }),
    testApp("mike", "diaspora-fork", {
      url: "https://example.com/mike/diaspora-fork.git",
      ref: "master",
    }),
    testApp("js", "example-tag", {
      url: "https://example.com/jsmith/example.git",
      ref: "refs/tags/v1.0.0",
    }),
    testApp("js", "example-short-tag", {
      url: "https://example.com/jsmith/example",
      ref: "v1.0.0",
    }),
    testApp("js", "example-master", { url: "https://example.com/jsmith/example", ref: "master" }),
  ];
  const headers = (event: string, token = GITLAB_TOKEN) => ({
    "X-Gitlab-Event": event,
    "X-Gitlab-Token": token,
  });

  it("Push Hook triggers the Apps on mike/diaspora at master or HEAD", async () => {
    const { kube, post } = setup(gitlabApps);
    const res = await post("/webhooks/gitlab", shared("gitlab-push-1.json"), headers("Push Hook"));
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({
      apps: ["mike/diaspora-master", "mike/diaspora-head"],
      revision: "da1560886d4f094c3e6c9ef40349f7d38b5d27d7",
      ref: "refs/heads/master",
    });
    expect(kube.calls.trigger).toHaveLength(1);
    expect(kube.calls.trigger[0]?.reason).toBe(
      "webhook: push refs/heads/master da1560886d4f094c3e6c9ef40349f7d38b5d27d7",
    );
  });

  it("Tag Push Hook triggers only the Apps on jsmith/example at tag v1.0.0", async () => {
    const { kube, post } = setup(gitlabApps);
    const res = await post(
      "/webhooks/gitlab",
      shared("gitlab-tag-push-1.json"),
      headers("Tag Push Hook"),
    );
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({
      apps: ["js/example-tag", "js/example-short-tag"],
      revision: "82b3d5ae55f7080f1e6022629cdb57bfae7cccc7",
      ref: "refs/tags/v1.0.0",
    });
    expect(kube.calls.trigger.map((t) => t.apps.length)).toEqual([2]);
  });

  it.each([
    ["a wrong token", { "X-Gitlab-Event": "Push Hook", "X-Gitlab-Token": "gl-token-of-the-tesT" }],
    ["a token prefix", { "X-Gitlab-Event": "Push Hook", "X-Gitlab-Token": "gl-token" }],
    ["no token", { "X-Gitlab-Event": "Push Hook" }],
  ])("401 for %s, nothing triggered", async (_, h) => {
    const { kube, post } = setup(gitlabApps);
    const res = await post("/webhooks/gitlab", shared("gitlab-push-1.json"), h);
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ message: "missing or invalid X-Gitlab-Token header" });
    expect(kube.calls.trigger).toEqual([]);
  });

  it("ignores other GitLab events with 202", async () => {
    const { kube, post } = setup(gitlabApps);
    const res = await post(
      "/webhooks/gitlab",
      '{"object_kind":"merge_request"}',
      headers("Merge Request Hook"),
    );
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ ignored: true, event: "Merge Request Hook" });
    expect(kube.calls.trigger).toEqual([]);
  });
});

describe("POST /webhooks/gitea (real Gitea payload)", () => {
  const giteaApps = [
    testApp("g", "develop", { url: "http://localhost:3000/gitea/webhooks.git", ref: "develop" }),
    testApp("g", "develop-https", {
      url: "https://localhost:3000/gitea/webhooks",
      ref: "refs/heads/develop",
    }),
    testApp("g", "head", { url: "http://localhost:3000/gitea/webhooks.git" }),
    testApp("g", "other-port", { url: "http://localhost:3001/gitea/webhooks.git", ref: "develop" }),
  ];
  const body = shared("gitea-push-1.json");

  it("triggers the Apps on gitea/webhooks at develop, not the one on the remote HEAD (main)", async () => {
    const { kube, post } = setup(giteaApps);
    const res = await post("/webhooks/gitea", body, {
      "X-Gitea-Event": "push",
      "X-Gitea-Signature": hmac(GITEA_SECRET, body),
    });
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({
      apps: ["g/develop", "g/develop-https"],
      revision: "bffeb74224043ba2feb48d137756c8a9331c449a",
      ref: "refs/heads/develop",
    });
    expect(kube.calls.trigger[0]?.apps).toEqual([
      {
        namespace: "g",
        name: "develop",
        source: { url: "http://localhost:3000/gitea/webhooks.git", ref: "develop" },
      },
      {
        namespace: "g",
        name: "develop-https",
        source: { url: "https://localhost:3000/gitea/webhooks", ref: "refs/heads/develop" },
      },
    ]);
  });

  it("never takes the body's legacy secret field as authentication", async () => {
    const legacy = "3gEsCfjlV2ugRwgpU#w1*WaW*wa4NXgGmpCfkbG3";
    expect(new TextDecoder().decode(body)).toContain(legacy);
    const { kube, post } = setup(giteaApps, { apiTokens: [], giteaWebhookSecret: legacy });
    const res = await post("/webhooks/gitea", body, { "X-Gitea-Event": "push" });
    expect(res.status).toBe(401);
    expect(kube.calls.trigger).toEqual([]);
  });

  it("401 for a wrong signature or one flipped byte", async () => {
    const { kube, post } = setup(giteaApps);
    const wrong = await post("/webhooks/gitea", body, {
      "X-Gitea-Event": "push",
      "X-Gitea-Signature": hmac("nope", body),
    });
    expect(wrong.status).toBe(401);
    const flipped = body.slice();
    flipped[10] = (flipped[10] ?? 0) ^ 1;
    const res = await post("/webhooks/gitea", flipped, {
      "X-Gitea-Event": "push",
      "X-Gitea-Signature": hmac(GITEA_SECRET, body),
    });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ message: "missing or invalid X-Gitea-Signature header" });
    expect(kube.calls.trigger).toEqual([]);
  });

  it("ignores other Gitea events; 400 for signed bytes that are not UTF-8", async () => {
    const { post } = setup(giteaApps);
    const create = await post("/webhooks/gitea", body, {
      "X-Gitea-Event": "create",
      "X-Gitea-Signature": hmac(GITEA_SECRET, body),
    });
    expect(create.status).toBe(202);
    expect(await create.json()).toEqual({ ignored: true, event: "create" });
    const invalid = new Uint8Array([0x7b, 0xff, 0x7d]);
    const res = await post("/webhooks/gitea", invalid, {
      "X-Gitea-Event": "push",
      "X-Gitea-Signature": hmac(GITEA_SECRET, invalid),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ message: "body is not valid UTF-8" });
  });
});

/**
 * Go's url.Values{"payload": {json}}.Encode() (net/url QueryEscape): only A-Z a-z 0-9 - _ . ~
 * stay, a space is "+", every other byte %XX in upper case. What Gitea sends for a form hook.
 */
const goFormEncode = (json: string) =>
  `payload=${encodeURIComponent(json)
    .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/%20/g, "+")}`;
const FORM = { "content-type": "application/x-www-form-urlencoded" };
const text = (b: Uint8Array) => new TextDecoder().decode(b);
const bytes = (s: string) => new TextEncoder().encode(s);

describe("form-encoded deliveries (Content-Type application/x-www-form-urlencoded)", () => {
  // GitHub: "payload" form field with the JSON; X-Hub-Signature-256 over the raw form body.
  const githubForm = bytes(new URLSearchParams({ payload: text(GITHUB_BODY) }).toString());

  it("a signed GitHub form push is handled exactly as the JSON one", async () => {
    const json = setup();
    const viaJson = await json.post("/webhooks/github", GITHUB_BODY, githubHeaders(GITHUB_BODY));
    const form = setup();
    const viaForm = await form.post("/webhooks/github", githubForm, {
      ...FORM,
      ...githubHeaders(githubForm),
    });
    expect(viaForm.status).toBe(202);
    expect(await viaForm.json()).toEqual(await viaJson.json());
    expect(form.kube.calls.trigger).toEqual(json.kube.calls.trigger);
    expect(form.kube.calls.trigger[0]?.apps).toEqual([
      { namespace: "team-a", name: "web", source: WEB_SOURCE },
      { namespace: "team-a", name: "web-ssh-url", source: WEB_SSH_SOURCE },
    ]);
  });

  it("GitHub's signature covers the form body: one over the JSON alone, or a flipped byte, is 401", async () => {
    const { kube, post } = setup();
    const overJson = await post("/webhooks/github", githubForm, {
      ...FORM,
      ...githubHeaders(GITHUB_BODY),
    });
    expect(overJson.status).toBe(401);
    const flipped = githubForm.slice();
    flipped[githubForm.length - 5] = "0".charCodeAt(0);
    const tampered = await post("/webhooks/github", flipped, {
      ...FORM,
      ...githubHeaders(githubForm),
    });
    expect(tampered.status).toBe(401);
    expect(kube.calls.trigger).toEqual([]);
  });

  it("GitHub: a signed form ping is pong; a signed form without payload or with bad JSON is 400", async () => {
    const { kube, post } = setup();
    const ping = bytes("payload=%7B%22zen%22%3A%22Keep+it+logically+awesome.%22%7D");
    const pong = await post("/webhooks/github", ping, { ...FORM, ...githubHeaders(ping, "ping") });
    expect(pong.status).toBe(200);
    const empty = bytes("other=1");
    const none = await post("/webhooks/github", empty, { ...FORM, ...githubHeaders(empty) });
    expect(none.status).toBe(400);
    expect(await none.json()).toEqual({ message: 'form body has no "payload" field' });
    const bad = bytes("payload=%7Bnot+json");
    const malformed = await post("/webhooks/github", bad, { ...FORM, ...githubHeaders(bad) });
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toEqual({ message: "malformed JSON in form field payload" });
    expect(kube.calls.trigger).toEqual([]);
  });

  const giteaApps = [
    testApp("g", "develop", { url: "http://localhost:3000/gitea/webhooks.git", ref: "develop" }),
    testApp("g", "head", { url: "http://localhost:3000/gitea/webhooks.git" }),
  ];
  const giteaJson = shared("gitea-push-1.json");
  const giteaForm = bytes(goFormEncode(text(giteaJson)));

  it("Gitea: the form as Gitea sends it (signature over the payload JSON) is handled as the JSON one", async () => {
    expect(text(giteaForm)).toContain(
      "payload=%7B%0A++%22secret%22%3A+%223gEsCfjlV2ugRwgpU%23w1%2AWaW",
    );
    const { kube, post } = setup(giteaApps);
    const res = await post("/webhooks/gitea", giteaForm, {
      ...FORM,
      "X-Gitea-Event": "push",
      "X-Gitea-Signature": hmac(GITEA_SECRET, giteaJson),
    });
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({
      apps: ["g/develop"],
      revision: "bffeb74224043ba2feb48d137756c8a9331c449a",
      ref: "refs/heads/develop",
    });
    expect(kube.calls.trigger[0]?.apps).toEqual([
      {
        namespace: "g",
        name: "develop",
        source: { url: "http://localhost:3000/gitea/webhooks.git", ref: "develop" },
      },
    ]);
  });

  it("Gitea: a signature over the form body (not what Gitea signs), or a changed payload, is 401", async () => {
    const { kube, post } = setup(giteaApps);
    const overForm = await post("/webhooks/gitea", giteaForm, {
      ...FORM,
      "X-Gitea-Event": "push",
      "X-Gitea-Signature": hmac(GITEA_SECRET, giteaForm),
    });
    expect(overForm.status).toBe(401);
    const changed = bytes(text(giteaForm).replace("develop", "develoq"));
    const res = await post("/webhooks/gitea", changed, {
      ...FORM,
      "X-Gitea-Event": "push",
      "X-Gitea-Signature": hmac(GITEA_SECRET, giteaJson),
    });
    expect(res.status).toBe(401);
    const none = await post("/webhooks/gitea", bytes("other=1"), {
      ...FORM,
      "X-Gitea-Event": "push",
      "X-Gitea-Signature": hmac(GITEA_SECRET, bytes("")),
    });
    expect(none.status).toBe(401);
    expect(kube.calls.trigger).toEqual([]);
  });

  it("GitLab has no form option (it always sends application/json): a form body is 400", async () => {
    const { kube, post } = setup();
    const glForm = bytes(goFormEncode(text(shared("gitlab-push-1.json"))));
    const res = await post("/webhooks/gitlab", glForm, {
      ...FORM,
      "X-Gitlab-Event": "Push Hook",
      "X-Gitlab-Token": GITLAB_TOKEN,
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      message:
        "GitLab delivers JSON: expected Content-Type application/json, got application/x-www-form-urlencoded",
    });
    expect(kube.calls.trigger).toEqual([]);
  });
});

describe("parsePush", () => {
  const json = (b: Uint8Array) => JSON.parse(new TextDecoder().decode(b)) as unknown;

  it("reads GitHub's push", () => {
    expect(parsePush("github", json(GITHUB_BODY))).toEqual({
      ok: true,
      value: {
        provider: "github",
        ref: "refs/heads/main",
        after: "0d1a26e67d8f5eaf1f6ba5c57fc3c7d91ac0fd1c",
        defaultBranch: "main",
        repoUrls: [
          "https://github.com/octo-org/demo.git",
          "git@github.com:octo-org/demo.git",
          "git://github.com/octo-org/demo.git",
          "https://github.com/octo-org/demo",
        ],
      },
    });
  });

  it("reads GitLab's push and tag push, project and repository URLs", () => {
    const p = parsePush("gitlab", json(shared("gitlab-push-1.json")));
    expect(p).toEqual({
      ok: true,
      value: {
        provider: "gitlab",
        ref: "refs/heads/master",
        after: "da1560886d4f094c3e6c9ef40349f7d38b5d27d7",
        defaultBranch: "master",
        repoUrls: [
          "http://example.com/mike/diaspora.git",
          "git@example.com:mike/diaspora.git",
          "http://example.com/mike/diaspora",
        ],
      },
    });
    const t = parsePush("gitlab", json(shared("gitlab-tag-push-1.json")));
    expect(t.ok && t.value.repoUrls).toContain("ssh://git@example.com/jsmith/example.git");
    expect(t.ok && t.value.ref).toBe("refs/tags/v1.0.0");
  });

  it("reads Gitea's push", () => {
    expect(parsePush("gitea", json(shared("gitea-push-1.json")))).toEqual({
      ok: true,
      value: {
        provider: "gitea",
        ref: "refs/heads/develop",
        after: "bffeb74224043ba2feb48d137756c8a9331c449a",
        defaultBranch: "main",
        repoUrls: [
          "http://localhost:3000/gitea/webhooks.git",
          "ssh://gitea@localhost:2222/gitea/webhooks.git",
          "http://localhost:3000/gitea/webhooks",
        ],
      },
    });
  });

  it("returns issues for a payload that is not a push", () => {
    const r = parsePush("gitlab", {
      object_kind: "note",
      ref: "refs/heads/x",
      after: "a",
      project: {},
    });
    expect(r).toEqual({
      ok: false,
      error: [expect.objectContaining({ code: "InvalidRequest", path: "body.object_kind" })],
    });
  });
});

describe("rejected deliveries are logged", () => {
  it("names the route, status, reason and delivery id; never the body, signature or secret", async () => {
    const { post, log } = setup();
    const body = new TextEncoder().encode('{"ref":"refs/heads/main","secret":"BODY-VALUE"}');
    const bad = await post("/webhooks/github", body, {
      "x-github-event": "push",
      "x-github-delivery": "72d3162e-cc78-11e3-81ab-4c9367dc0958",
      "x-hub-signature-256": "sha256=deadbeef",
    });
    expect(bad.status).toBe(401);
    const signed = await post("/webhooks/github", "{not json", {
      "x-github-event": "push",
      "x-hub-signature-256": `sha256=${hmac(GITHUB_SECRET, new TextEncoder().encode("{not json"))}`,
    });
    expect(signed.status).toBe(400);
    const token = await post("/webhooks/gitlab", body, {
      "x-gitlab-event": "Push Hook",
      "x-gitlab-token": "wrong-token",
      "x-gitlab-event-uuid": "13792a34-cac6-4fda-95a8-c58e00a3954e",
    });
    expect(token.status).toBe(401);
    const unknown = await post("/webhooks/bitbucket", body, {});
    expect(unknown.status).toBe(404);
    expect(log.filter((e) => e["msg"] === "webhook rejected")).toEqual([
      {
        msg: "webhook rejected",
        route: "POST /webhooks/github",
        status: 401,
        reason: "missing or invalid X-Hub-Signature-256 header",
        delivery: "72d3162e-cc78-11e3-81ab-4c9367dc0958",
      },
      {
        msg: "webhook rejected",
        route: "POST /webhooks/github",
        status: 400,
        reason: "malformed JSON body",
        delivery: null,
      },
      {
        msg: "webhook rejected",
        route: "POST /webhooks/gitlab",
        status: 401,
        reason: "missing or invalid X-Gitlab-Token header",
        delivery: "13792a34-cac6-4fda-95a8-c58e00a3954e",
      },
      {
        msg: "webhook rejected",
        route: "POST /webhooks/bitbucket",
        status: 404,
        reason: "no such route",
        delivery: null,
      },
    ]);
    const logged = JSON.stringify(log);
    for (const secret of ["BODY-VALUE", "deadbeef", "wrong-token", GITHUB_SECRET, GITLAB_TOKEN]) {
      expect(logged).not.toContain(secret);
    }
  });

  it("logs a 413 and an unconfigured provider too; an accepted delivery is not a rejection", async () => {
    const { post, log } = setup(APPS, { apiTokens: [], githubWebhookSecret: GITHUB_SECRET });
    const big = await post("/webhooks/github", "x".repeat(1024 * 1024 + 1), {
      "x-github-event": "push",
      "x-github-delivery": "d1",
    });
    expect(big.status).toBe(413);
    const gitea = await post("/webhooks/gitea", "{}", { "x-gitea-delivery": "9f4c2a" });
    expect(gitea.status).toBe(404);
    const ping = await post("/webhooks/github", "{}", {
      "x-github-event": "ping",
      "x-hub-signature-256": `sha256=${hmac(GITHUB_SECRET, new TextEncoder().encode("{}"))}`,
    });
    expect(ping.status).toBe(200);
    expect(
      log
        .filter((e) => e["msg"] === "webhook rejected")
        .map((e) => [e["status"], e["reason"], e["delivery"]]),
    ).toEqual([
      [413, "request body exceeds 1048576 bytes (1 MiB)", "d1"],
      [404, "gitea webhooks are not configured", "9f4c2a"],
    ]);
  });
});
