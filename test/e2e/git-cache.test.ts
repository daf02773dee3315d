// The disk cache of fetched commits as a user meets it: `plumb reconcile NS/NAME` run twice
// on the revision it applied fetches nothing the second time (the Git server sees only the
// ls-refs that resolves the branch), and a push is still applied by the next run.
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GitServer, startGitServer } from "../support/git-server.ts";
import { createApp, createNamespace, getObject, kubeconfig } from "./support.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const exec = promisify(execFile);
const NS = "git-cache";

let git: GitServer;
let cacheDir: string;
beforeAll(async () => {
  git = await startGitServer();
  cacheDir = mkdtempSync(join(tmpdir(), "plumb-e2e-git-cache-"));
});
afterAll(async () => {
  await git?.stop();
  rmSync(cacheDir, { recursive: true, force: true });
});

/** Runs the CLI as a user would (a new process each time) over the test's cache directory. */
async function plumb(...args: string[]): Promise<Array<Record<string, unknown>>> {
  const { stdout } = await exec(
    process.execPath,
    [join(ROOT, "functions/cli.ts"), ...args, "--kubeconfig", kubeconfig()],
    { env: { ...process.env, PLUMB_CACHE_DIR: cacheDir } },
  );
  return stdout
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** The Git requests since `from`, with the protocol each asked for. */
const since = (from: number) =>
  git.requests.slice(from).map((r, i) => `${r} ${git.protocols[from + i] ?? "v1"}`);

const configMap = (cm: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  colour: ${cm}\n`;

describe("the disk cache of fetched commits", () => {
  it("a second manual run of the applied revision makes no fetch; a push is still applied", async () => {
    const repo = await git.createRepo(NS, { "cm.yaml": configMap("blue") });
    await createNamespace(NS);
    await createApp(NS, "app", { source: { git: { url: repo.url, ref: "main" } }, interval: "1h" });
    const path = `/api/v1/namespaces/${NS}/configmaps/settings`;

    let from = git.requests.length;
    expect((await plumb("reconcile", `${NS}/app`))[0]).toMatchObject({ outcome: "Reconciled" });
    expect((await getObject(path))?.["data"]).toEqual({ colour: "blue" });
    // The first run fetched (a protocol v1 upload-pack) and stored the pack.
    expect(since(from).filter((r) => r.startsWith("POST") && r.endsWith(" v1"))).toHaveLength(1);
    expect(readdirSync(cacheDir).filter((n) => n.endsWith(".pack"))).toHaveLength(1);

    from = git.requests.length;
    const again = await plumb("reconcile", `${NS}/app`);
    expect(again[0]).toMatchObject({ outcome: "Reconciled", syncStatus: "Synced" });
    // Only the ls-refs that resolves main: the advertisement and the ls-refs command, both v2.
    expect(since(from)).toEqual([
      `GET /${NS}.git/info/refs?service=git-upload-pack version=2`,
      `POST /${NS}.git/git-upload-pack version=2`,
    ]);

    await repo.commit({ "cm.yaml": configMap("green") });
    from = git.requests.length;
    expect((await plumb("reconcile", `${NS}/app`))[0]).toMatchObject({ outcome: "Reconciled" });
    expect((await getObject(path))?.["data"]).toEqual({ colour: "green" });
    expect(since(from).filter((r) => r.startsWith("POST") && r.endsWith(" v1"))).toHaveLength(1);
  });
});
