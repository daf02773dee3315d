// Encoded credentials never leak: a secret that comes back
// in an error — a Git server echoing the request's Authorization header, an API server echoing
// a rendered Secret's value — is redacted, in every encoding, from status, Events, the CLI's
// line, the HTTP API and Slack. The Git server is test/support/git-server.ts refusing with the
// pack protocol's ERR line (its `refuse` fault), spelling what the client sent in the scanner's
// forms (test/support/secret-forms.ts). The CLI runs as an operator runs it; the HTTP API is
// `plumb serve` in its own process (it shows status as stored); Slack is a local receiver.
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GitServer, startGitServer } from "../support/git-server.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { SECRET_FORMS } from "../support/secret-forms.ts";
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

let refusing: GitServer;
let git: GitServer;
let slack: Receiver;
let server: ChildProcess;

/** The user and secret of a Basic Authorization header. */
function basic(header: string | undefined): { user: string; secret: string } {
  const pair = Buffer.from((header ?? "").replace(/^Basic /, ""), "base64").toString();
  const colon = pair.indexOf(":");
  return { user: pair.slice(0, colon), secret: pair.slice(colon + 1) };
}

/**
 * What the refusing Git server says in its ERR line, by repository path: /team/ quotes the
 * Authorization header; /echo-all/ also spells out what it decoded, as a careless server
 * might; /forms/ spells the credential in each of the scanner's forms, labelled [fNN].
 */
function refusal({ authorization, path }: { authorization: string | undefined; path: string }) {
  const auth = authorization ?? "nothing";
  const { user, secret } = basic(authorization);
  if (path.includes("/forms/")) {
    const forms = SECRET_FORMS.map(([, encode], i) => `[${label(i)}] ${encode(secret, user)}`);
    return `access denied; you sent ${forms.join(" ")} [end]`;
  }
  const decoded = `${user}:${secret}`;
  const more = path.includes("/echo-all/")
    ? `; decoded as URL ${encodeURIComponent(decoded)}, as JSON ${JSON.stringify(decoded)}, as JSON in JSON ${JSON.stringify(JSON.stringify(decoded))}`
    : "";
  return `access denied (you sent ${auth}${more})`;
}

const label = (i: number) => `f${String(i).padStart(2, "0")}`;

beforeAll(async () => {
  refusing = await startGitServer();
  refusing.setFault({ refuse: refusal });
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
  await refusing?.stop();
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
 * Every encoding of `secret` a message may carry: plain, base64 (also of user:secret), URL-encoded,
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

/** `text` as fingerprints are looked for in it: lower case, no whitespace, no ":". */
const squeezed = (text: string) => text.toLowerCase().replace(/[\s:]|\\[nrt]/g, "");

/**
 * Pieces of the secret no surface may hold, found independently of the redactor: the secret
 * and its hex, and 10-character pieces of the base64 of user:secret (any case, whitespace and
 * ":" ignored) — what is left of any of its spellings, also where a message was cut.
 */
function fingerprints(secret: string, user: string): string[] {
  const hex = Buffer.from(secret).toString("hex");
  const pair = Buffer.from(`${user}:${secret}`).toString("base64").replace(/=+$/, "");
  const tail = pair.slice(Math.ceil((user.length + 1) * (4 / 3)) + 1);
  const pieces = [secret.toLowerCase(), hex, hex.slice(0, 16)];
  for (let i = 0; i + 10 <= tail.length; i += 5) pieces.push(tail.slice(i, i + 10).toLowerCase());
  return pieces;
}

async function secretIn(ns: string, name: string, data: Record<string, string>): Promise<void> {
  await api("POST", `/api/v1/namespaces/${ns}/secrets`, {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name },
    stringData: data,
  });
}

describe("secrets never leak, in any encoding", () => {
  it("a Git server echoing the Authorization header in an ERR line: user:token's base64 reaches neither status, Events, the API, the CLI nor Slack", async () => {
    const ns = `leak-git-${S}`;
    await createNamespace(ns);
    await secretIn(ns, "git-creds", { username: USER, token: TOKEN });
    await secretIn(ns, "slack", { webhookURL: `${slack.url}/${ns}` });
    const res = await createApp(ns, "app", {
      source: { git: { url: `${refusing.url}/team/app.git`, secretRef: { name: "git-creds" } } },
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
        git: { url: `${refusing.url}/echo-all/app.git`, secretRef: { name: "git-creds" } },
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

  it("a Git server refusing with an ERR line that spells the credential in each of the scanner's forms (hex, lower-cased and split base64 among them): none reaches status, Events, the API, the CLI or Slack", async () => {
    const ns = `leak-forms-${S}`;
    await createNamespace(ns);
    // A password every form spells differently (case, quotes, "&", "<", "\\", non-ASCII, "+/=").
    const password = 'Pä$$ "Wörd" & <x> \\ 🔑/+=???~~~';
    await secretIn(ns, "git-creds", { username: USER, password });
    await secretIn(ns, "slack", { webhookURL: `${slack.url}/${ns}` });
    const res = await createApp(ns, "app", {
      source: { git: { url: `${refusing.url}/forms/app.git`, secretRef: { name: "git-creds" } } },
      notifications: { slack: { secretRef: { name: "slack" }, on: ["Failed"] } },
    });
    expect(res.status).toBe(201);

    const out = await cli(ns, "app");
    const seen = await surfaces(ns, "app", out);
    // The server did send every form, each differently spelt.
    const sent = SECRET_FORMS.map(([, encode]) => encode(password, USER));
    expect(new Set(sent).size).toBe(SECRET_FORMS.length);
    for (const [where, text] of Object.entries(seen)) {
      for (const [i, form] of sent.entries()) {
        const name = SECRET_FORMS[i]?.[0];
        expect(text, `${where} must not contain ${name}`).not.toContain(form);
        expect(text, `${where} must not contain ${name}, JSON-escaped`).not.toContain(
          JSON.stringify(form).slice(1, -1),
        );
      }
      for (const mark of fingerprints(password, USER)) {
        expect(squeezed(text), `${where} must not contain ${mark}`).not.toContain(mark);
      }
    }
    // The refusal is there, each form replaced, where the author looks.
    const ready = (await getApp(ns, "app")).status?.conditions?.find((c) => c.type === "Ready");
    expect(ready).toMatchObject({ status: "False", reason: "SourceFailed" });
    const message = ready?.message ?? "";
    expect(message).toContain("ERR access denied; you sent [f00] *** [f01] [redacted] [f02]");
    expect(message).toContain("[end]");
    for (const [i, [name]] of SECRET_FORMS.entries()) {
      const from = message.indexOf(`[${label(i)}] `);
      expect(from, `${name} is in the message`).toBeGreaterThan(0);
      const next = i + 1 < SECRET_FORMS.length ? `[${label(i + 1)}]` : "[end]";
      const to = message.indexOf(` ${next}`, from);
      const shown = message.slice(from + 6, to);
      // The Git port replaces the credential it sent, as sent, by "***" and drops a URL's
      // userinfo and query before the redactor sees the message.
      const stripped = /^https:\/\/git\.example\/repo\.git(\?…)?$/.test(shown);
      const redacted = shown.includes("[redacted]") || shown.includes("***") || stripped;
      expect({ name, shown, redacted }).toMatchObject({ redacted: true });
    }
    expect(seen.cli).toContain("ERR access denied; you sent [f00] *** [f01] [redacted]");
    expect(seen.events).toContain("ERR access denied; you sent [f00] *** [f01] [redacted]");
    expect(seen.api).toContain("ERR access denied; you sent [f00] *** [f01] [redacted]");
    expect(seen.slack).toContain("ERR access denied; you sent [f00] *** [f01] [redacted]");
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
