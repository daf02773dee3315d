// The kubeconfig forms an operator uses, against the real API server through the bin: client
// certificates (the admin kubeconfig the other tests use), a bearer token with the CA as a
// relative file path, a token file, and an exec credential plugin (client-node, loaded then).
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { type GitServer, startGitServer } from "../support/git-server.ts";
import { createApp, createNamespace, kubeconfig } from "./support.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const BIN = join(ROOT, "functions/plumb.mjs");
const NS = "kube-access";
const run = promisify(execFile);

let git: GitServer;
let dir: string;
let server: string;
let token: string;

/** Writes a kubeconfig with one cluster (`cluster` fields) and one user (`user` fields). */
function write(name: string, cluster: Record<string, unknown>, user: Record<string, unknown>) {
  const file = join(dir, name);
  writeFileSync(
    file,
    JSON.stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [{ name: "c", cluster: { server, ...cluster } }],
      users: [{ name: "u", user }],
      contexts: [{ name: "x", context: { cluster: "c", user: "u" } }],
      "current-context": "x",
    }),
  );
  return file;
}

async function reconcile(file: string, name: string) {
  const r = await run(process.execPath, [
    BIN,
    "reconcile",
    `${NS}/${name}`,
    "--kubeconfig",
    file,
  ]).then(
    (x) => ({ code: 0, stdout: x.stdout, stderr: x.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => e,
  );
  return { ...r, line: JSON.parse(r.stdout.trim().split("\n").pop() ?? "{}") };
}

beforeAll(async () => {
  const clusterDir = dirname(kubeconfig());
  const kc = parse(readFileSync(kubeconfig(), "utf8")) as {
    clusters: Array<{ cluster: { server: string } }>;
  };
  server = kc.clusters[0]!.cluster.server;
  token = readFileSync(join(clusterDir, "token"), "utf8").trim();
  dir = mkdtempSync(join(tmpdir(), "plumb-kube-access-"));
  writeFileSync(join(dir, "ca.crt"), readFileSync(join(clusterDir, "ca.crt")));
  writeFileSync(join(dir, "token"), `${token}\n`);
  git = await startGitServer();
  const cm = (n: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${n}}\n`;
  const repo = await git.createRepo("kube-access", {
    "token/cm.yaml": cm("token"),
    "file/cm.yaml": cm("file"),
    "exec/cm.yaml": cm("exec"),
  });
  await createNamespace(NS);
  for (const n of ["token", "file", "exec"]) {
    await createApp(NS, n, { source: { git: { url: repo.url, path: n } } });
  }
});

afterAll(async () => {
  await git?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("kubeconfig forms against the real API server", () => {
  it("a bearer token, with the CA as a file path relative to the kubeconfig", async () => {
    const r = await reconcile(
      write("token.yaml", { "certificate-authority": "ca.crt" }, { token }),
      "token",
    );
    expect(r.line).toMatchObject({
      app: `${NS}/token`,
      outcome: "Reconciled",
      syncStatus: "Synced",
    });
    expect(r.code).toBe(0);
  });

  it("a token file", async () => {
    const r = await reconcile(
      write(
        "tokenfile.yaml",
        { "certificate-authority": join(dir, "ca.crt") },
        { tokenFile: join(dir, "token") },
      ),
      "file",
    );
    expect(r.line).toMatchObject({ outcome: "Reconciled", syncStatus: "Synced" });
  });

  it("an exec credential plugin, through client-node", async () => {
    const marker = join(dir, "exec-ran");
    const credential = JSON.stringify({
      apiVersion: "client.authentication.k8s.io/v1",
      kind: "ExecCredential",
      status: { token },
    });
    const r = await reconcile(
      write(
        "exec.yaml",
        { "certificate-authority": join(dir, "ca.crt") },
        {
          exec: {
            apiVersion: "client.authentication.k8s.io/v1",
            command: "sh",
            args: ["-c", `touch '${marker}'; printf '%s' '${credential}'`],
            interactiveMode: "Never",
          },
        },
      ),
      "exec",
    );
    expect(r.line).toMatchObject({ outcome: "Reconciled", syncStatus: "Synced" });
    expect(existsSync(marker)).toBe(true);
  });

  it("a wrong token: the API server's 401, named", async () => {
    const r = await reconcile(
      write("bad.yaml", { "certificate-authority": "ca.crt" }, { token: "not-the-token" }),
      "token",
    );
    expect(r.code).toBe(1);
    expect(r.line.error).toBe(`get App ${NS}/token: Unauthorized`);
  });
});
