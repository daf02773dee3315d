// Sync windows end to end: a deny window holds a new commit back on the real API
// server; the run after the window closes applies it; an operation with manualSync goes through.
// The run's clock is injected (reconcileApp's `now`), so the windows need not be waited out.
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appRow } from "../../src/app/index.ts";
import { createHttpApp, parseHttpConfig } from "../../src/http/index.ts";
import { nextRunAt } from "../../src/plan/index.ts";
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
  deploymentImage,
  getApp,
  kubePort,
  patchAppSpec,
  realPorts,
} from "./support.ts";

let git: GitServer;
beforeAll(async () => {
  git = await startGitServer();
});
afterAll(async () => {
  await git?.stop();
});

const NS = "windows";
const UI = "guestbook-ui-deployment.yaml";
/** Tonight 22:00 UTC the deny window opens; at 23:00 it holds, at 06:00 tomorrow it closes. */
const day = new Date();
const utc = (dayOffset: number, hour: number, minute = 0) =>
  new Date(
    Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate() + dayOffset, hour, minute),
  );

describe("sync windows", () => {
  it("a deny window holds a new commit back until it closes; manualSync lets a Sync from the HTTP API through", async () => {
    const files = fixtureFiles(join(REAL_FIXTURES, "guestbook"));
    const repo = await git.createRepo("windows", files, { allowSha1InWant: true });
    await createNamespace(NS);
    const created = await createApp(NS, "guestbook", {
      source: { git: { url: repo.url, ref: "main" } },
      syncWindows: [
        {
          kind: "deny",
          schedule: "0 22 * * *",
          duration: "8h",
          description: "nightly freeze",
        },
      ],
    });
    expect(created.status).toBe(201);
    const run = (now: Date) => reconcileApp({ namespace: NS, name: "guestbook" }, realPorts(), now);

    // Before the window: the first commit is applied.
    const first = await run(utc(0, 21));
    expect(first).toMatchObject({ outcome: "Reconciled", syncStatus: "Synced" });
    const applied = await repo.head();
    expect(await deploymentImage(NS, "guestbook-ui")).toBe("gcr.io/google-samples/gb-frontend:v5");

    // Inside the window: a new commit is held back, health still observed.
    const bumped = files[UI]!.replace("gb-frontend:v5", "gb-frontend:v6");
    await repo.commit({ [UI]: bumped }, "bump the UI image");
    const head = await repo.head();
    const held = await run(utc(0, 23));
    expect(held).toMatchObject({
      outcome: "Reconciled",
      syncStatus: "OutOfSync",
      revision: applied,
    });
    let app = await getApp(NS, "guestbook");
    expect(app.status?.observedRevision).toBe(head);
    expect(app.status?.nextSyncWindow).toBe(utc(1, 6).toISOString());
    // The interval governs while the window is far off (not pulled forward to 06:00): the
    // next run is derived, within the 5-minute default interval.
    expect(app.status?.nextReconcileAt).toBeUndefined();
    expect(nextRunAt(appRow(app), utc(0, 23)).getTime()).toBeLessThanOrEqual(
      utc(0, 23, 5).getTime(),
    );
    expect(app.status?.healthStatus).toBeDefined();
    const ready = app.status?.conditions?.find((c) => c.type === "Ready");
    expect(ready?.message).toContain(
      `revision ${head} is not applied: automated sync is blocked by the open deny window spec.syncWindows[0] ("0 22 * * *" UTC, 8h: nightly freeze); next allowed at ${utc(1, 6).toISOString()}`,
    );
    expect(await deploymentImage(NS, "guestbook-ui")).toBe("gcr.io/google-samples/gb-frontend:v5");

    // A Sync operation (as kubectl or the API writes it) is refused: the window has no manualSync.
    await patchAppSpec(NS, "guestbook", { operation: { id: "sync-1", type: "Sync" } });
    await run(utc(0, 23, 10));
    app = await getApp(NS, "guestbook");
    expect(app.status?.operationState).toMatchObject({ id: "sync-1", phase: "Failed" });
    expect(app.status?.operationState?.message).toMatch(
      /^manual sync is blocked by the open deny window spec\.syncWindows\[0\]/,
    );
    expect(await deploymentImage(NS, "guestbook-ui")).toBe("gcr.io/google-samples/gb-frontend:v5");

    // The window ends: the held commit is applied and nextSyncWindow is gone.
    const opened = await run(utc(1, 6));
    expect(opened).toMatchObject({ syncStatus: "Synced", revision: head });
    app = await getApp(NS, "guestbook");
    expect(app.status?.nextSyncWindow).toBeUndefined();
    expect(await deploymentImage(NS, "guestbook-ui")).toBe("gcr.io/google-samples/gb-frontend:v6");

    // The next night, with manualSync on the window: a new commit waits, a Sync goes through.
    await patchAppSpec(NS, "guestbook", {
      syncWindows: [{ kind: "deny", schedule: "0 22 * * *", duration: "8h", manualSync: true }],
    });
    const again = bumped.replace("gb-frontend:v6", "gb-frontend:v7");
    await repo.commit({ [UI]: again }, "bump again");
    const third = await repo.head();
    expect(await run(utc(1, 23))).toMatchObject({ syncStatus: "OutOfSync", revision: head });
    // This time through the HTTP API (the same code serves plumb serve and the Worker).
    const http = createHttpApp({
      apps: kubePort(),
      config: parseHttpConfig({
        PLUMB_API_TOKENS: JSON.stringify([{ name: "ops", token: "windows-ops-token-0123" }]),
      }),
      now: () => new Date(),
      trigger: async () => {},
    });
    const res = await http.fetch(
      new Request(`http://plumb/api/v1/namespaces/${NS}/apps/guestbook/operations`, {
        method: "POST",
        headers: {
          Authorization: "Bearer windows-ops-token-0123",
          "Content-Type": "application/json",
        },
        body: JSON.stringify({ type: "sync" }),
      }),
    );
    expect(res.status).toBe(202);
    const { operation } = (await res.json()) as { operation: { id: string } };
    const synced = await run(utc(1, 23, 5));
    expect(synced).toMatchObject({ syncStatus: "Synced", revision: third });
    app = await getApp(NS, "guestbook");
    expect(app.status?.operationState).toMatchObject({ id: operation.id, phase: "Succeeded" });
    expect(await deploymentImage(NS, "guestbook-ui")).toBe("gcr.io/google-samples/gb-frontend:v7");
  });
});
