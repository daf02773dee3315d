// What Argo CD and Flux users rely on, on the real control plane: ignoreDifferences, CEL health
// checks (Flux's healthCheckExprs) and dependsOn.
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reconcileApp } from "../../src/reconcile/index.ts";
import {
  fixtureFiles,
  type GitServer,
  REAL_FIXTURES,
  startGitServer,
} from "../support/git-server.ts";
import { api, createApp, createNamespace, getApp, getObject, realPorts } from "./support.ts";

let git: GitServer;
beforeAll(async () => {
  git = await startGitServer();
});
afterAll(async () => {
  await git?.stop();
});

const guestbook = () => fixtureFiles(join(REAL_FIXTURES, "guestbook"));
const minutes = (m: number) => new Date(Date.now() + m * 60_000);
/** A run of App ns/name; `compare`: a scheduled run whose slot came (drift compared). */
const run = (ns: string, name = "app", at = new Date(), compare = false) =>
  reconcileApp({ namespace: ns, name }, realPorts(), at, { compare });

describe("ignoreDifferences", () => {
  it("leaves an ignored field as changed by hand, reports no drift for it, and corrects the rest", async () => {
    const repo = await git.createRepo("ignore", guestbook());
    await createNamespace("ignore");
    await createApp("ignore", "app", {
      source: { git: { url: repo.url } },
      syncPolicy: { selfHeal: true },
      ignoreDifferences: [{ group: "apps", kind: "Deployment", jsonPointers: ["/spec/replicas"] }],
    });
    await run("ignore");
    const path = "/apis/apps/v1/namespaces/ignore/deployments/guestbook-ui";
    const spec = async () =>
      (await getObject(path))!["spec"] as { replicas: number; revisionHistoryLimit: number };
    expect(await spec()).toMatchObject({ replicas: 1, revisionHistoryLimit: 3 });

    // By hand, as `kubectl edit` would: one ignored field, one that is not.
    await api(
      "PATCH",
      `${path}?fieldManager=kubectl-edit`,
      { spec: { replicas: 4, revisionHistoryLimit: 7 } },
      "application/merge-patch+json",
    );
    await run("ignore", "app", minutes(10), true);
    expect(await spec()).toMatchObject({ replicas: 4, revisionHistoryLimit: 3 });
    const healed = (await getApp("ignore", "app")).status;
    expect(healed?.lastDriftCorrection?.objects).toEqual([
      "Deployment ignore/guestbook-ui: spec.revisionHistoryLimit by kubectl-edit",
    ]);

    // Only the ignored field differs now: no drift, Synced, nothing corrected.
    await run("ignore", "app", minutes(20), true);
    const steady = (await getApp("ignore", "app")).status;
    expect(steady?.drift).toBeUndefined();
    expect(steady?.syncStatus).toBe("Synced");
    expect(steady?.resources?.find((r) => r.kind === "Deployment")).toMatchObject({
      status: "Synced",
    });
    expect(steady?.lastDriftCorrection).toEqual(healed?.lastDriftCorrection);
    expect((await spec()).replicas).toBe(4);

    // A new commit changes the Deployment: it is applied, the ignored field keeps its live value.
    const manifest = guestbook()["guestbook-ui-deployment.yaml"]!;
    await repo.commit({
      "guestbook-ui-deployment.yaml": manifest.replace(
        "revisionHistoryLimit: 3",
        "revisionHistoryLimit: 5",
      ),
    });
    await run("ignore", "app", minutes(30), true);
    expect(await spec()).toMatchObject({ replicas: 4, revisionHistoryLimit: 5 });
    expect((await getApp("ignore", "app")).status?.syncStatus).toBe("Synced");
  });
});
