// `plumb serve` needs no one else to finish what it starts: a run whose
// objects are Progressing asks for its follow-up run, and `--schedule` makes the process run
// the schedule itself, so a deleted App is finalized without a CronJob.
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  fixtureFiles,
  type GitServer,
  REAL_FIXTURES,
  startGitServer,
} from "../support/git-server.ts";
import { type Served, startServe } from "../support/serve.ts";
import {
  createApp,
  createNamespace,
  getApp,
  getObject,
  kubeconfig,
  kubectl,
  waitFor,
} from "./support.ts";

const TOKEN = "serve-schedule-token-0123456789";
let git: GitServer;
let serve: Served | undefined;
beforeAll(async () => {
  git = await startGitServer();
});
afterEach(async () => {
  await serve?.stop();
  serve = undefined;
});
afterAll(async () => {
  await git?.stop();
});

/** The JSON lines plumb serve printed for App `id`. */
function lines(output: string, id: string): Array<Record<string, unknown>> {
  return output
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => l["app"] === id);
}

describe("plumb serve", () => {
  it("an operation's run that leaves objects Progressing asks for its follow-up run", async () => {
    const repo = await git.createRepo("follow-up", fixtureFiles(join(REAL_FIXTURES, "guestbook")));
    await createNamespace("follow-up");
    // automated: false, so only the operation applies anything.
    await createApp("follow-up", "app", {
      source: { git: { url: repo.url } },
      syncPolicy: { automated: false },
    });
    serve = await startServe(kubeconfig(), {
      PLUMB_API_TOKENS: JSON.stringify([{ name: "ops", token: TOKEN }]),
    });
    const res = await fetch(`${serve.base}/api/v1/namespaces/follow-up/apps/app/operations`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ type: "sync" }),
    });
    expect(res.status).toBe(202);
    const served = serve;
    const first = await waitFor(
      "the operation's run",
      async () => lines(served.output(), "follow-up/app")[0],
    );
    expect(first).toMatchObject({
      healthStatus: "Progressing",
      followUpSeconds: expect.any(Number),
    });
    // Nothing else triggers a run (no schedule, no webhook): the follow-up makes it Healthy.
    // Its line comes after its status write: wait for both.
    await waitFor(
      "Healthy without another trigger, and the follow-up's line saying so",
      async () => {
        const printed = lines(served.output(), "follow-up/app");
        return (
          printed.length >= 2 &&
          printed.at(-1)?.["healthStatus"] === "Healthy" &&
          (await getApp("follow-up", "app")).status?.healthStatus === "Healthy"
        );
      },
      { everyMs: 1000 },
    );
    expect(served.output()).toContain('"schedule":"off"');
  });

  it("--schedule reconciles due Apps itself and finalizes a deleted App within a tick", async () => {
    const repo = await git.createRepo("scheduled", fixtureFiles(join(REAL_FIXTURES, "guestbook")));
    await createNamespace("scheduled");
    serve = await startServe(kubeconfig(), {}, ["--schedule", "--tick", "2s"]);
    // A day's interval: the deletion is due at the next tick, not at the App's slot, so a
    // kubectl that waits (however long a loaded machine takes) tells the two apart.
    await createApp("scheduled", "app", { source: { git: { url: repo.url } }, interval: "24h" });
    await waitFor(
      "Synced by the schedule",
      async () => (await getApp("scheduled", "app")).status?.syncStatus === "Synced",
    );
    expect(
      await getObject("/apis/apps/v1/namespaces/scheduled/deployments/guestbook-ui"),
    ).toBeDefined();

    // kubectl waits for the finalizer; the next tick prunes and removes it.
    kubectl(["delete", "app", "app", "-n", "scheduled", "--timeout=10m"]);
    expect(
      await getObject("/apis/apps/v1/namespaces/scheduled/deployments/guestbook-ui"),
    ).toBeUndefined();
    // The run prints its line after its last request (the finalizer's removal), which is what
    // kubectl waited for: wait for the line, then check that nothing ran after it.
    const served = serve;
    await waitFor("the finalizing run's line", async () =>
      lines(served.output(), "scheduled/app").some((l) => l["outcome"] === "Finalized"),
    );
    expect(lines(served.output(), "scheduled/app").at(-1)).toMatchObject({ outcome: "Finalized" });
  });
});
