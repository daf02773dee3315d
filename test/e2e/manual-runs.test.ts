// A run asked for by a person always makes a full comparison: the CLI on one
// App (with or without --force), `reconcile --all --force`, and a sync through the HTTP API.
import { execFile } from "node:child_process";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  fixtureFiles,
  type GitServer,
  REAL_FIXTURES,
  startGitServer,
} from "../support/git-server.ts";
import { type Served, startServe } from "../support/serve.ts";
import {
  api,
  createApp,
  createNamespace,
  getApp,
  getObject,
  kubeconfig,
  waitFor,
} from "./support.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const exec = promisify(execFile);
const TOKEN = "manual-runs-token-0123456789";

/** Runs the CLI; its JSON lines and exit code. */
async function plumb(
  ...args: string[]
): Promise<{ code: number; lines: Array<Record<string, unknown>> }> {
  const parse = (out: string) =>
    out
      .trim()
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  try {
    const { stdout } = await exec(process.execPath, [
      join(ROOT, "functions/cli.ts"),
      ...args,
      "--kubeconfig",
      kubeconfig(),
    ]);
    return { code: 0, lines: parse(stdout) };
  } catch (err) {
    const e = err as { code: number; stdout: string };
    return { code: e.code, lines: parse(e.stdout) };
  }
}

/** Someone scales the Deployment by hand (as `kubectl edit` would). */
async function scale(ns: string, replicas: number): Promise<void> {
  await api(
    "PATCH",
    `/apis/apps/v1/namespaces/${ns}/deployments/guestbook-ui?fieldManager=kubectl-edit`,
    { spec: { replicas } },
    "application/merge-patch+json",
  );
}

const replicas = async (ns: string) =>
  (
    (await getObject(`/apis/apps/v1/namespaces/${ns}/deployments/guestbook-ui`))!["spec"] as {
      replicas: number;
    }
  ).replicas;

let git: GitServer;
let serve: Served | undefined;
beforeAll(async () => {
  git = await startGitServer();
});
afterAll(async () => {
  await serve?.stop();
  await git?.stop();
});

async function steadyApp(ns: string): Promise<void> {
  const repo = await git.createRepo(ns, fixtureFiles(join(REAL_FIXTURES, "guestbook")));
  await createNamespace(ns);
  await createApp(ns, "app", { source: { git: { url: repo.url } }, interval: "1h" });
  expect((await plumb("reconcile", `${ns}/app`)).code).toBe(0);
  await waitFor("Healthy", async () => {
    const r = await plumb("reconcile", `${ns}/app`);
    return r.lines[0]?.["healthStatus"] === "Healthy";
  });
}

describe("a run a person asks for", () => {
  it("plumb reconcile NS/NAME looks for drift now, not when the interval has passed", async () => {
    await steadyApp("manual-one");
    const before = await getApp("manual-one", "app");
    // Nothing changed: a manual run writes nothing (there is no stored schedule to move).
    const same = await plumb("reconcile", "manual-one/app");
    expect(same.lines[0]).toMatchObject({ outcome: "Reconciled", syncStatus: "Synced" });
    const after = await getApp("manual-one", "app");
    expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    expect(after.status?.nextReconcileAt).toBeUndefined();

    await scale("manual-one", 3);
    const r = await plumb("reconcile", "manual-one/app");
    expect(r.code).toBe(0);
    expect(r.lines[0]).toMatchObject({ outcome: "Reconciled", syncStatus: "OutOfSync" });
    expect((await getApp("manual-one", "app")).status?.drift).toEqual([
      {
        apiVersion: "apps/v1",
        kind: "Deployment",
        namespace: "manual-one",
        name: "guestbook-ui",
        fields: [{ path: "spec.replicas", desired: "1", live: "3", manager: "kubectl-edit" }],
      },
    ]);
    // --force is accepted for one App and means the same: a full run now.
    await scale("manual-one", 4);
    const forced = await plumb("reconcile", "manual-one/app", "--force");
    expect(forced.code).toBe(0);
    expect((await getApp("manual-one", "app")).status?.drift?.[0]?.fields[0]?.live).toBe("4");
  });

  it("plumb reconcile --all --force compares every App in full", async () => {
    await steadyApp("manual-all");
    await scale("manual-all", 2);
    // Not due for an hour: a scheduled tick leaves it alone and cannot see the drift.
    const tick = await plumb("reconcile", "--all", "--namespace", "manual-all");
    expect(tick.lines).toEqual([
      expect.objectContaining({ app: "manual-all/app", outcome: "Skipped" }),
    ]);
    const forced = await plumb("reconcile", "--all", "--force", "--namespace", "manual-all");
    expect(forced.lines).toEqual([
      expect.objectContaining({
        app: "manual-all/app",
        outcome: "Reconciled",
        syncStatus: "OutOfSync",
      }),
    ]);
    expect((await getApp("manual-all", "app")).status?.drift?.[0]?.fields[0]).toMatchObject({
      path: "spec.replicas",
      live: "2",
    });
  });

  it("a sync through the HTTP API applies the whole desired state again", async () => {
    await steadyApp("manual-api");
    serve = await startServe(kubeconfig(), {
      PLUMB_API_TOKENS: JSON.stringify([{ name: "ops", token: TOKEN }]),
    });
    await scale("manual-api", 5);
    const res = await fetch(`${serve.base}/api/v1/namespaces/manual-api/apps/app/operations`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ type: "sync" }),
    });
    expect(res.status).toBe(202);
    const { operation } = (await res.json()) as { operation: { id: string } };
    // The object is re-applied before the run writes the operation's outcome: wait for the
    // outcome, not for the object, or the status is read between the two writes.
    const app = await waitFor("the sync's outcome in status", async () => {
      const a = await getApp("manual-api", "app");
      return a.status?.operationState?.id === operation.id &&
        a.status.operationState.phase !== "Running"
        ? a
        : undefined;
    });
    expect(app.status?.operationState).toMatchObject({ type: "Sync", phase: "Succeeded" });
    expect(await replicas("manual-api")).toBe(1);
    expect(app.status?.drift).toBeUndefined();
  });
});
