// The CLI verbs for people against the real control plane: no plumb server.
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import {
  fixtureFiles,
  type GitServer,
  REAL_FIXTURES,
  startGitServer,
} from "../support/git-server.ts";
import { createApp, createNamespace, getApp, kubeconfig } from "./support.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const run = promisify(execFile);
const NS = `verbs-${Date.now().toString(36)}`;

async function plumb(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return plumbWith(kubeconfig(), ...args);
}

async function plumbWith(
  kc: string,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [
      join(ROOT, "functions/plumb.mjs"),
      ...args,
      "--kubeconfig",
      kc,
    ]);
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

let git: GitServer;
beforeAll(async () => {
  git = await startGitServer();
});
afterAll(async () => {
  await git?.stop();
});

describe("plumb get / approve / sync / rollback / restart", () => {
  it("get shows a held App; approve writes the API's operation; the next reconcile applies it", async () => {
    const repo = await git.createRepo(NS, fixtureFiles(join(REAL_FIXTURES, "guestbook")));
    await createNamespace(NS);
    await createApp(NS, "app", {
      source: { git: { url: repo.url } },
      syncPolicy: { requiresApproval: true },
    });
    const small = await git.createRepo(`${NS}-cm`, {
      "cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {a: '1'}\n",
    });
    await createApp(NS, "other", { source: { git: { url: small.url } } });
    expect((await plumb("reconcile", "--all", "--namespace", NS)).code).toBe(0);
    const sha = await repo.head();

    const table = await plumb("get", "--namespace", NS);
    expect(table.code).toBe(0);
    const lines = table.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^NAME\s+REVISION\s+SYNC\s+HEALTH\s+HELD\s+LAST SYNC\s+MESSAGE$/);
    expect(lines[1]).toMatch(
      new RegExp(`^app\\s+-\\s+Held\\s+\\S+\\s+${sha.slice(0, 7)}\\s+-\\s+revision ${sha} is held`),
    );
    expect(lines[2]).toMatch(
      new RegExp(`^other\\s+${(await small.head()).slice(0, 7)}\\s+Synced\\s+`),
    );
    const all = await plumb("get", "-A");
    expect(all.stdout).toMatch(new RegExp(`\\n${NS}\\s+app\\s+`));
    const json = JSON.parse((await plumb("get", `${NS}/app`, "-o", "json")).stdout) as Record<
      string,
      unknown
    >;
    expect(json).toMatchObject({
      namespace: NS,
      name: "app",
      syncStatus: "Held",
      heldRevision: sha,
    });
    expect(json["resources"]).toEqual([
      expect.objectContaining({ kind: "Service", message: "will be created" }),
      expect.objectContaining({ kind: "Deployment", message: "will be created" }),
    ]);

    const stale = await plumb("approve", `${NS}/app`, "--revision", "0".repeat(40));
    expect(stale.code).toBe(1);
    expect(stale.stderr).toContain(
      `Approve of ${NS}/app refused: stale revision: held is ${sha.slice(0, 7)}, not "${"0".repeat(40)}"`,
    );
    const approved = await plumb("approve", `${NS}/app`);
    expect(approved.code).toBe(0);
    const line = JSON.parse(approved.stdout) as { operation: { id: string; requestedBy: string } };
    expect(line.operation).toMatchObject({
      type: "Approve",
      revision: sha,
      requestedBy: expect.stringMatching(/^cli(:.+)?$/),
    });
    const written = await getApp(NS, "app");
    expect((written.spec as { operation?: unknown }).operation).toEqual(line.operation);
    const pending = await plumb("sync", `${NS}/app`);
    expect(pending.code).toBe(1);
    expect(pending.stderr).toContain(`operation ${line.operation.id} (Approve) is still pending`);

    expect((await plumb("reconcile", `${NS}/app`)).code).toBe(0);
    const applied = await getApp(NS, "app");
    expect(applied.status).toMatchObject({ syncStatus: "Synced", revision: sha });
    expect(applied.status?.operationState).toMatchObject({
      id: line.operation.id,
      phase: "Succeeded",
      requestedBy: line.operation.requestedBy,
    });

    const nothing = await plumb("approve", `${NS}/app`);
    expect(nothing.code).toBe(1);
    expect(nothing.stderr).toContain("nothing is held for approval");
    const noRollback = await plumb("rollback", `${NS}/app`);
    expect(noRollback.code).toBe(1);
    expect(noRollback.stderr).toContain("nothing to roll back to");
    const restart = await plumb("restart", `${NS}/app`);
    expect(restart.code).toBe(0);
    expect((await getApp(NS, "app")).spec).toMatchObject({ operation: { type: "Restart" } });
  });

  it("a missing App exits 1; a usage error exits 2", async () => {
    const missing = await plumb("sync", `${NS}/nosuch`);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(`App ${NS}/nosuch not found`);
    const usage = await plumb("sync", "No/pe");
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('expected NAME or NAMESPACE/NAME, got "No/pe"');
  });

  it("takes kubectl's spellings: -n NS, NAME in the context's namespace, -A", async () => {
    const ns = `${NS}-n`;
    const repo = await git.createRepo(ns, {
      "cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {a: '1'}\n",
    });
    await createNamespace(ns);
    await createApp(ns, "web", { source: { git: { url: repo.url } } });
    const reconciled = await plumb("reconcile", "web", "-n", ns);
    expect(reconciled.code, reconciled.stderr).toBe(0);
    expect(JSON.parse(reconciled.stdout)).toMatchObject({
      app: `${ns}/web`,
      outcome: "Reconciled",
    });
    const list = await plumb("get", "-n", ns);
    expect(list.stdout.trimEnd().split("\n").slice(1)).toEqual([
      expect.stringMatching(new RegExp(`^web\\s+${(await repo.head()).slice(0, 7)}\\s+Synced\\s`)),
    ]);
    const one = JSON.parse((await plumb("get", "web", "--namespace", ns, "-o", "json")).stdout);
    expect(one).toMatchObject({ namespace: ns, name: "web", syncStatus: "Synced" });
    expect((await plumb("get", "-A")).stdout).toMatch(new RegExp(`\\n${ns}\\s+web\\s+`));
    // A kubeconfig whose context names the namespace: NAME alone means an App there.
    const config = parse(readFileSync(kubeconfig(), "utf8")) as {
      contexts: Array<{ context: Record<string, string> }>;
    };
    config.contexts[0]!.context["namespace"] = ns;
    const dir = mkdtempSync(join(tmpdir(), "plumb-ctx-"));
    const contextual = join(dir, "kubeconfig");
    writeFileSync(contextual, stringify(config), { mode: 0o600 });
    try {
      const restart = await plumbWith(contextual, "restart", "web");
      expect(restart.code, restart.stderr).toBe(0);
      expect(JSON.parse(restart.stdout)).toMatchObject({ app: `${ns}/web` });
      expect((await getApp(ns, "web")).spec).toMatchObject({ operation: { type: "Restart" } });
      const again = await plumbWith(contextual, "reconcile", "web");
      expect(JSON.parse(again.stdout)).toMatchObject({ app: `${ns}/web`, outcome: "Reconciled" });
      expect((await plumbWith(contextual, "get", "nosuch")).stderr).toContain(
        `App ${ns}/nosuch not found`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
