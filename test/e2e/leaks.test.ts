// Encoded credentials never leak (issue 12, kind 6; issue 11, item 6): a secret that comes back
// in an error — a Git server echoing the request's Authorization header, an API server echoing
// a rendered Secret's value — is redacted, in every encoding, from status, Events, the CLI's
// line, the HTTP API and Slack. The CLI runs as an operator runs it; the HTTP API is `plumb
// serve` in its own process (it shows status as stored); Slack is a local receiver.
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GitServer, startGitServer } from "../support/git-server.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { api, createApp, createNamespace, getApp, kubeconfig, waitFor } from "./support.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const CLI = join(ROOT, "functions/cli.ts");
const run = promisify(execFile);
const API_TOKEN = "leaks-api-token-0123456789";
const PORT = 19000 + Math.floor(Math.random() * 1000);
/** A token with characters that base64 and percent-encoding both change. */
const USER = "deploy";
const TOKEN = "glpat-9x/Q+z=Kp7mW2v";
const S = Date.now().toString(36);

let evil: Server;
let evilUrl: string;
let git: GitServer;
let slack: Receiver;
let server: ChildProcess;

/** A Git server that refuses every request with a protocol ERR line quoting its Authorization. */
async function startEchoingGitServer(): Promise<void> {
  const pkt = (s: string) => (Buffer.byteLength(s) + 4).toString(16).padStart(4, "0") + s;
  evil = createServer((req, res) => {
    res.writeHead(200, { "content-type": "application/x-git-upload-pack-advertisement" });
    const auth = req.headers.authorization ?? "nothing";
    // Under /echo-all/ it also spells out what it decoded, as a careless server might.
    const decoded = Buffer.from(auth.replace(/^Basic /, ""), "base64").toString();
    const more = req.url?.includes("/echo-all/")
      ? `; decoded as URL ${encodeURIComponent(decoded)}, as JSON ${JSON.stringify(decoded)}, as JSON in JSON ${JSON.stringify(JSON.stringify(decoded))}`
      : "";
    res.end(
      `${pkt("# service=git-upload-pack\n")}0000${pkt(`ERR access denied (you sent ${auth}${more})\n`)}`,
    );
  });
  await new Promise<void>((r) => evil.listen(0, "127.0.0.1", r));
  evilUrl = `http://127.0.0.1:${(evil.address() as AddressInfo).port}/team/app.git`;
}

beforeAll(async () => {
  await startEchoingGitServer();
  git = await startGitServer();
  slack = await startReceiver();
  server = spawn(
    process.execPath,
    [CLI, "serve", "--port", String(PORT), "--kubeconfig", kubeconfig()],
    {
      env: { ...process.env, PLUMB_API_TOKENS: JSON.stringify([{ name: "t", token: API_TOKEN }]) },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  await waitFor(
    "plumb serve up",
    async () => (await fetch(`http://127.0.0.1:${PORT}/healthz`).catch(() => undefined))?.ok,
  );
});

afterAll(async () => {
  server?.kill();
  await slack?.stop();
  await git?.stop();
  await new Promise((r) => evil?.close(r));
});

/** `plumb reconcile NS/NAME`: its stdout and stderr. */
async function cli(ns: string, name: string): Promise<string> {
  const out = await run(
    process.execPath,
    [CLI, "reconcile", `${ns}/${name}`, "--kubeconfig", kubeconfig()],
    { env: process.env },
  ).then(
    (r) => r,
    (e: { stdout: string; stderr: string }) => e,
  );
  return `${out.stdout}\n${out.stderr}`;
}

/** Everything a person can read about App ns/name, by where they read it. */
async function surfaces(ns: string, name: string, cliOutput: string) {
  const app = await getApp(ns, name);
  const events = await api(
    "GET",
    `/api/v1/namespaces/${ns}/events?fieldSelector=involvedObject.name=${name}`,
  );
  const http = await fetch(`http://127.0.0.1:${PORT}/api/v1/namespaces/${ns}/apps/${name}`, {
    headers: { authorization: `Bearer ${API_TOKEN}` },
  });
  expect(http.status).toBe(200);
  return {
    status: JSON.stringify(app.status),
    events: JSON.stringify(events.items.map((e: { message: string }) => e.message)),
    cli: cliOutput,
    api: await http.text(),
    slack: JSON.stringify(slack.received.filter((r) => r.path === `/${ns}`).map((r) => r.body)),
  };
}

/**
 * Every encoding of `secret` issue 12 names: plain, base64 (also of user:secret), URL-encoded,
 * JSON-escaped (alone, and as JSON in JSON: how a JSON body quoting a message spells it).
 */
function encodings(secret: string, user?: string): string[] {
  const b64 = (s: string) => Buffer.from(s).toString("base64");
  const json = (s: string) => JSON.stringify(s).slice(1, -1);
  const forms = [
    secret,
    b64(secret),
    b64(secret).replace(/=+$/, ""),
    encodeURIComponent(secret),
    json(secret),
    json(json(secret)),
  ];
  if (user) {
    const pair = `${user}:${secret}`;
    forms.push(b64(pair), b64(pair).replace(/=+$/, ""), encodeURIComponent(pair), json(pair));
  }
  return [...new Set(forms)];
}

async function secretIn(ns: string, name: string, data: Record<string, string>): Promise<void> {
  await api("POST", `/api/v1/namespaces/${ns}/secrets`, {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name },
    stringData: data,
  });
}

describe("secrets never leak, in any encoding (issue 12, kind 6)", () => {
  it("a Git server echoing the Authorization header in an ERR line: user:token's base64 reaches neither status, Events, the API, the CLI nor Slack", async () => {
    const ns = `leak-git-${S}`;
    await createNamespace(ns);
    await secretIn(ns, "git-creds", { username: USER, token: TOKEN });
    await secretIn(ns, "slack", { webhookURL: `${slack.url}/${ns}` });
    const res = await createApp(ns, "app", {
      source: { git: { url: evilUrl, secretRef: { name: "git-creds" } } },
      notifications: { slack: { secretRef: { name: "slack" }, on: ["Failed"] } },
    });
    expect(res.status).toBe(201);

    const out = await cli(ns, "app");
    const seen = await surfaces(ns, "app", out);
    for (const [where, text] of Object.entries(seen)) {
      for (const form of encodings(TOKEN, USER)) {
        expect(text, `${where} must not contain ${form}`).not.toContain(form);
      }
    }
    // The failure is there, with the echoed header redacted, where the author looks.
    const ready = (await getApp(ns, "app")).status?.conditions?.find((c) => c.type === "Ready");
    expect(ready).toMatchObject({ status: "False", reason: "SourceFailed" });
    expect(ready?.message).toMatch(/ERR access denied \(you sent Basic \[redacted\]\)/);
    expect(seen.events).toContain("you sent Basic [redacted]");
    expect(seen.cli).toContain("you sent Basic [redacted]");
    expect(seen.slack).toContain("you sent Basic [redacted]");
    expect(seen.api).toContain("you sent Basic [redacted]");
  });

  it("a password that every encoding changes, echoed decoded, URL-encoded and JSON-escaped: in none of them", async () => {
    const ns = `leak-enc-${S}`;
    const password = 'pä$$ "wörd" \\ x/+=';
    await createNamespace(ns);
    await secretIn(ns, "git-creds", { username: USER, password });
    await secretIn(ns, "slack", { webhookURL: `${slack.url}/${ns}` });
    const res = await createApp(ns, "app", {
      source: {
        git: { url: evilUrl.replace("/team/", "/echo-all/"), secretRef: { name: "git-creds" } },
      },
      notifications: { slack: { secretRef: { name: "slack" }, on: ["Failed"] } },
    });
    expect(res.status).toBe(201);

    const out = await cli(ns, "app");
    const seen = await surfaces(ns, "app", out);
    const forms = encodings(password, USER);
    // Each form differs from the plain one (so each is a check of its own).
    expect(new Set(forms).size).toBe(forms.length);
    for (const [where, text] of Object.entries(seen)) {
      for (const form of forms) {
        expect(text, `${where} must not contain ${form}`).not.toContain(form);
      }
    }
    const ready = (await getApp(ns, "app")).status?.conditions?.find((c) => c.type === "Ready");
    expect(ready).toMatchObject({ status: "False", reason: "SourceFailed" });
    expect(ready?.message).toContain(
      'ERR access denied (you sent Basic [redacted]; decoded as URL [redacted], as JSON "[redacted]", as JSON in JSON "\\"[redacted]\\"")',
    );
    for (const text of [seen.events, seen.cli, seen.slack, seen.api]) {
      expect(text).toContain("decoded as URL [redacted], as JSON");
    }
  });

  it("an API server error echoing a rendered Secret's stringData value is redacted everywhere", async () => {
    const ns = `leak-render-${S}`;
    const value = "8675309123456";
    const repo = await git.createRepo(`leak-render-${S}`, {
      "secret.yaml": `apiVersion: v1\nkind: Secret\nmetadata: {name: api-key}\nstringData: {key: ${value}}\n`,
      "cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: plain}\ndata: {k: v}\n",
      // Another object's error quoting the value (a new user's trial): redacted there too.
      "svc.yaml": `apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {ports: [{port: "${value}"}]}\n`,
    });
    await createNamespace(ns);
    await secretIn(ns, "slack", { webhookURL: `${slack.url}/${ns}` });
    const res = await createApp(ns, "app", {
      source: { git: { url: repo.url, ref: "main" } },
      notifications: { slack: { secretRef: { name: "slack" }, on: ["Failed"] } },
    });
    expect(res.status).toBe(201);

    const out = await cli(ns, "app");
    const seen = await surfaces(ns, "app", out);
    for (const [where, text] of Object.entries(seen)) {
      for (const form of encodings(value)) {
        expect(text, `${where} must not contain ${form}`).not.toContain(form);
      }
    }
    const ready = (await getApp(ns, "app")).status?.conditions?.find((c) => c.type === "Ready");
    expect(ready).toMatchObject({ status: "False", reason: "ApplyFailed" });
    expect(ready?.message).toContain("Secret");
    expect(ready?.message).toContain("got &value.valueUnstructured{Value:[redacted]}");
    expect(ready?.message).toContain("Service ");
    expect(ready?.message).toContain('.spec.ports[port="[redacted]",protocol="TCP"].port');
    expect(seen.slack).toContain("Value:[redacted]");
    expect(seen.cli).toContain("Value:[redacted]");
    expect(seen.api).toContain("Value:[redacted]");
  });
});
