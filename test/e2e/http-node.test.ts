// Triggers and the HTTP API on Node: `plumb serve` against the local control plane.
import { type ChildProcess, spawn } from "node:child_process";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AppSummary } from "../../src/http/index.ts";
import { reconcileApp } from "../../src/reconcile/index.ts";
import {
  fixtureFiles,
  type GitServer,
  REAL_FIXTURES,
  startGitServer,
  type TestRepo,
} from "../support/git-server.ts";
import { githubHeaders, githubPush, sendGithubPush } from "../support/github.ts";
import { pushAppliesCommit } from "./cases/push.case.ts";
import {
  createApp,
  createNamespace,
  deploymentImage,
  getApp,
  getObject,
  kubeconfig,
  patchAppSpec,
  realPorts,
  waitFor,
} from "./support.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const SECRET = "e2e-webhook-secret";
const ADMIN = "admin-token-0123456789";
const TEAM = "team-token-0123456789";
const PORT = 18000 + Math.floor(Math.random() * 1000);
const base = `http://127.0.0.1:${PORT}`;

let git: GitServer;
let server: ChildProcess;
let repo: TestRepo;
let output = "";

beforeAll(async () => {
  git = await startGitServer();
  repo = await git.createRepo("hooked", fixtureFiles(join(REAL_FIXTURES, "guestbook")), {
    allowSha1InWant: true,
  });
  await createNamespace("hooked");
  await createApp("hooked", "app", { source: { git: { url: repo.url, ref: "main" } } });
  await createApp("hooked", "other", {
    source: { git: { url: `${repo.url.replace("hooked.git", "hooked-copy.git")}` } },
  });
  server = spawn(
    process.execPath,
    [
      join(ROOT, "functions/plumb.mjs"),
      "serve",
      "--port",
      String(PORT),
      "--kubeconfig",
      kubeconfig(),
    ],
    {
      env: {
        ...process.env,
        GITHUB_WEBHOOK_SECRET: SECRET,
        PLUMB_API_TOKENS: JSON.stringify([
          { name: "admin", token: ADMIN },
          { name: "team-b", token: TEAM, namespaces: ["team-b"] },
        ]),
      },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  server.stdout?.on("data", (d) => (output += d));
  server.stderr?.on("data", (d) => (output += d));
  await waitFor(
    "server up",
    async () => (await fetch(`${base}/healthz`).catch(() => undefined))?.ok,
  );
});

afterAll(async () => {
  server?.kill();
  await git?.stop();
});

describe("plumb serve", () => {
  it("a signed GitHub push makes the matching App apply the new commit", async () => {
    await pushAppliesCommit({
      base,
      secret: SECRET,
      repo,
      namespace: "hooked",
      name: "app",
      tag: "v7",
      diagnostics: () => output.slice(-6000),
    });
  });

  it("a form-encoded signed GitHub push (the hook API's default) is handled like JSON", async () => {
    const file = "guestbook-ui-deployment.yaml";
    const sha = await repo.commit({
      [file]: fixtureFiles(join(REAL_FIXTURES, "guestbook"))[file]!.replace(":v5", ":v8"),
    });
    const res = await sendGithubPush(base, SECRET, repo.url, sha, "refs/heads/main", {
      form: true,
    });
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({
      apps: ["hooked/app"],
      revision: sha,
      ref: "refs/heads/main",
    });
    await waitFor(
      "form-pushed image live",
      async () =>
        (await deploymentImage("hooked", "guestbook-ui")) ===
        "gcr.io/google-samples/gb-frontend:v8",
    );
    expect((await getApp("hooked", "app")).status?.revision).toBe(sha);
  });

  it("a delivery with one flipped byte is refused with 401 and reconciles nothing", async () => {
    const before = (await getApp("hooked", "app")).metadata.resourceVersion;
    const body = githubPush(repo.url, "refs/heads/main", "f".repeat(40));
    const headers = githubHeaders(body, SECRET);
    const res = await fetch(`${base}/webhooks/github`, {
      method: "POST",
      headers,
      body: body.replace('"ref"', '"reF"'),
    });
    expect(res.status).toBe(401);
    expect(await res.json()).toHaveProperty("message");
    await new Promise((r) => setTimeout(r, 500));
    expect((await getApp("hooked", "app")).metadata.resourceVersion).toBe(before);
  });

  it("the API refuses a missing token (401) and another namespace's token (403) without writing", async () => {
    const before = (await getApp("hooked", "app")).metadata.resourceVersion;
    const url = `${base}/api/v1/namespaces/hooked/apps/app/operations`;
    const body = JSON.stringify({ type: "sync" });
    expect((await fetch(url, { method: "POST", body })).status).toBe(401);
    const forbidden = await fetch(url, {
      method: "POST",
      body,
      headers: { authorization: `Bearer ${TEAM}` },
    });
    expect(forbidden.status).toBe(403);
    expect((await getApp("hooked", "app")).metadata.resourceVersion).toBe(before);
  });

  it("a held revision shows its preview over HTTP; a stale approval is refused and the right one applies", async () => {
    const held = await git.createRepo("held", fixtureFiles(join(REAL_FIXTURES, "guestbook")));
    await createNamespace("held");
    await createApp("held", "app", {
      source: { git: { url: held.url } },
      syncPolicy: { requiresApproval: true },
    });
    const sha = await held.head();
    const hook = await sendGithubPush(base, SECRET, held.url, sha);
    expect(await hook.json()).toMatchObject({ apps: ["held/app"] });
    const auth = { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" };
    const url = `${base}/api/v1/namespaces/held/apps/app`;
    type Summary = {
      heldRevision: string | null;
      revision: string | null;
      resources: Array<{ kind: string; message?: string }>;
    };
    const summary = await waitFor("held", async () => {
      const body = (await (await fetch(url, { headers: auth })).json()) as Summary;
      return body.heldRevision ? body : undefined;
    });
    expect(summary.heldRevision).toBe(sha);
    expect(summary.resources.map((r) => [r.kind, r.message])).toEqual([
      ["Service", "will be created"],
      ["Deployment", "will be created"],
    ]);
    const stale = await fetch(`${url}/approve`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ revision: "0".repeat(40) }),
    });
    expect(stale.status).toBe(409);
    expect(await stale.json()).toEqual({
      message: `stale revision: held is ${sha.slice(0, 7)}, not "${"0".repeat(40)}"`,
      heldRevision: sha,
    });
    const ok = await fetch(`${url}/approve`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ revision: sha }),
    });
    expect(ok.status).toBe(202);
    await waitFor("approved revision applied", async () => {
      const body = (await (await fetch(url, { headers: auth })).json()) as Summary;
      return body.revision === sha;
    });
    expect(await deploymentImage("held", "guestbook-ui")).toBe(
      "gcr.io/google-samples/gb-frontend:v5",
    );
  });

  it("the approval preview over HTTP lists every change with desired and live values", async () => {
    const cm = (greeting: string) =>
      `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: greeting}\ndata:\n  GREETING: ${greeting}\n`;
    const deployment = (replicas: number) =>
      fixtureFiles(join(REAL_FIXTURES, "guestbook"))["guestbook-ui-deployment.yaml"]!.replace(
        "replicas: 1",
        `replicas: ${replicas}`,
      );
    const files = { "cm.yaml": cm("hello-v5"), "deploy.yaml": deployment(3) };
    const preview = await git.createRepo("preview", files, { allowSha1InWant: true });
    await createNamespace("preview");
    await createApp("preview", "app", { source: { git: { url: preview.url } }, interval: "1s" });
    const ref = { namespace: "preview", name: "app" };
    expect(await reconcileApp(ref, realPorts(), new Date())).toMatchObject({
      syncStatus: "Synced",
    });
    await patchAppSpec("preview", "app", { syncPolicy: { requiresApproval: true } });
    const next = await preview.commit({ "cm.yaml": cm("hello-v6"), "deploy.yaml": deployment(4) });
    const held = await reconcileApp(ref, realPorts(), new Date(Date.now() + 5_000));
    expect(held).toMatchObject({ syncStatus: "Held" });

    const res = await fetch(`${base}/api/v1/namespaces/preview/apps/app`, {
      headers: { authorization: `Bearer ${ADMIN}` },
    });
    const summary = (await res.json()) as AppSummary;
    expect(summary.heldRevision).toBe(next);
    expect(summary.resources.filter((r) => r.status !== "Synced")).toEqual([
      {
        apiVersion: "v1",
        kind: "ConfigMap",
        namespace: "preview",
        name: "greeting",
        status: "OutOfSync",
        health: "Healthy",
        message: "will change: data.GREETING",
        changes: [{ path: "data.GREETING", desired: "hello-v6", live: "hello-v5" }],
      },
      {
        apiVersion: "apps/v1",
        kind: "Deployment",
        namespace: "preview",
        name: "guestbook-ui",
        status: "OutOfSync",
        health: expect.any(String),
        message: "will change: spec.replicas",
        changes: [{ path: "spec.replicas", desired: "4", live: "3" }],
      },
    ]);
    expect(summary.drift).toEqual([]);
    // Nothing was applied: the preview only.
    const live = await getObject("/api/v1/namespaces/preview/configmaps/greeting");
    expect(live?.["data"]).toEqual({ GREETING: "hello-v5" });
  });

  it("a restart operation over HTTP is recorded and carried out", async () => {
    const res = await fetch(`${base}/api/v1/namespaces/hooked/apps/app/operations`, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
      body: JSON.stringify({ type: "restart" }),
    });
    expect(res.status).toBe(202);
    const { operation } = (await res.json()) as { operation: { id: string } };
    const app = await waitFor("operation done", async () => {
      const a = await getApp("hooked", "app");
      return a.status?.operationState?.id === operation.id ? a : undefined;
    });
    expect(app.status?.operationState).toMatchObject({
      type: "Restart",
      phase: "Succeeded",
      requestedBy: "admin",
    });
    const d = await getObject("/apis/apps/v1/namespaces/hooked/deployments/guestbook-ui");
    const spec = d?.["spec"] as
      | { template: { metadata: { annotations?: Record<string, string> } } }
      | undefined;
    const annotations = spec?.template.metadata.annotations;
    expect(annotations?.["plumb.dev/restartedAt"]).toBeDefined();
  });
});
