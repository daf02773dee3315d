// Short revisions as people see them (Slack, kubectl get apps: 7 characters) are accepted back
// wherever a revision is asked for: approve and rollback over HTTP, through
// the CLI, and in spec.operation written with kubectl.
import { execFile } from "node:child_process";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHttpApp, parseHttpConfig } from "../../src/http/index.ts";
import { reconcileApp } from "../../src/reconcile/index.ts";
import {
  fixtureFiles,
  type GitServer,
  REAL_FIXTURES,
  startGitServer,
} from "../support/git-server.ts";
import {
  createApp,
  createNamespace,
  getApp,
  kubeconfig,
  kubePort,
  patchAppSpec,
  realPorts,
} from "./support.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const exec = promisify(execFile);
const TOKEN = "revisions-token-0123456789";
const NS = "short-revisions";

let git: GitServer;
beforeAll(async () => {
  git = await startGitServer();
});
afterAll(async () => {
  await git?.stop();
});

const run = () => reconcileApp({ namespace: NS, name: "app" }, realPorts(), new Date());
const http = () =>
  createHttpApp({
    apps: kubePort(),
    config: parseHttpConfig({ PLUMB_API_TOKENS: JSON.stringify([{ name: "ops", token: TOKEN }]) }),
    now: () => new Date(),
    trigger: async () => {},
  });
interface Answer {
  status: number;
  json: { message?: string; operation?: { revision?: string } };
}
async function post(path: string, body: unknown): Promise<Answer> {
  const res = await http().request(`/api/v1/namespaces/${NS}/apps/app/${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as Answer["json"] };
}

describe("a short revision", () => {
  it("approves and rolls back over HTTP, the CLI and spec.operation; too short is refused", async () => {
    const files = fixtureFiles(join(REAL_FIXTURES, "guestbook"));
    const repo = await git.createRepo(NS, files);
    await createNamespace(NS);
    await createApp(NS, "app", {
      source: { git: { url: repo.url } },
      syncPolicy: { requiresApproval: true },
    });
    const c1 = await repo.head();
    await run();
    expect((await getApp(NS, "app")).status?.heldRevision).toBe(c1);

    // HTTP approve with the 7 characters Slack's Held alert shows.
    const approve = await post("approve", { revision: c1.slice(0, 7) });
    expect(approve.status).toBe(202);
    expect(approve.json.operation?.revision).toBe(c1);
    await run();
    expect((await getApp(NS, "app")).status?.revision).toBe(c1);

    // spec.operation written with kubectl, naming the held revision by a prefix.
    const c2 = await repo.commit({
      "extra.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: extra}\n",
    });
    await run();
    expect((await getApp(NS, "app")).status?.heldRevision).toBe(c2);
    await patchAppSpec(NS, "app", {
      operation: { id: "kubectl-approve", type: "Approve", revision: c2.slice(0, 8).toUpperCase() },
    });
    await run();
    const approved = (await getApp(NS, "app")).status;
    expect(approved?.revision).toBe(c2);
    expect(approved?.operationState).toMatchObject({
      id: "kubectl-approve",
      phase: "Succeeded",
      revision: c2,
    });

    // A prefix under 7 characters is refused, naming what is accepted.
    const tooShort = await post("operations", { type: "rollback", revision: c1.slice(0, 6) });
    expect(tooShort.status).toBe(409);
    expect(tooShort.json.message).toBe(
      `revision "${c1.slice(0, 6)}" is not in status.previousRevisions (${c1.slice(0, 7)}) (a prefix needs at least 7 hex characters)`,
    );

    // The CLI's rollback with the short form plumb get shows.
    const cli = await exec(process.execPath, [
      join(ROOT, "functions/cli.ts"),
      "rollback",
      `${NS}/app`,
      "--revision",
      c1.slice(0, 7),
      "--kubeconfig",
      kubeconfig(),
    ]);
    expect(cli.stdout).toContain(c1);
    await run();
    const rolledBack = (await getApp(NS, "app")).status;
    expect(rolledBack?.revision).toBe(c1);
    expect(rolledBack?.operationState).toMatchObject({ type: "Rollback", revision: c1 });
  });
});
