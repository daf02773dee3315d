// `kubectl get apps` shows a failing App as failing: Ready and its reason,
// the message with -o wide, a short revision; the HTTP summary says the same.
import { join } from "node:path";
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
  kubectl,
  kubePort,
  realPorts,
  waitFor,
} from "./support.ts";

const TOKEN = "get-apps-token-0123456789";
let git: GitServer;
beforeAll(async () => {
  git = await startGitServer();
});
afterAll(async () => {
  await git?.stop();
});

/** kubectl's table as rows of cells (split on runs of 2+ spaces, as kubectl aligns them). */
function table(out: string): string[][] {
  return out
    .trim()
    .split("\n")
    .map((l) => l.trim().split(/\s{2,}/));
}

describe("kubectl get apps", () => {
  it("shows Ready and its reason, a short revision, and with -o wide the message", async () => {
    const repo = await git.createRepo("get-apps", fixtureFiles(join(REAL_FIXTURES, "guestbook")));
    await createNamespace("get-apps");
    await createApp("get-apps", "good", { source: { git: { url: repo.url } } });
    await createApp("get-apps", "broken", { source: { git: { url: repo.url } } });
    const run = (name: string) =>
      reconcileApp({ namespace: "get-apps", name }, realPorts(), new Date());
    await run("good");
    // The Git server answers 503 to the other App's run.
    git.setFault({ status: 503 });
    try {
      await run("broken");
    } finally {
      git.setFault(undefined);
    }
    const head = (await repo.head()).slice(0, 7);

    const rows = table(kubectl(["get", "apps", "-n", "get-apps"]));
    expect(rows[0]).toEqual(["NAME", "READY", "REASON", "SYNC", "HEALTH", "REVISION", "AGE"]);
    const byName = Object.fromEntries(rows.slice(1).map((r) => [r[0], r.slice(1, 6)]));
    expect(byName["good"]?.[0]).toBe("False"); // Progressing until the Pods are ready
    expect(byName["good"]?.[4]).toBe(head);
    expect(byName["broken"]?.slice(0, 2)).toEqual(["False", "SourceFailed"]);

    const output = kubectl(["get", "apps", "-n", "get-apps", "-o", "wide"]);
    const wide = table(output);
    expect(wide[0]?.at(-1)).toBe("MESSAGE");
    const broken = wide.find((r) => r[0] === "broken");
    expect(broken?.at(-1)).toMatch(/503/);
    // Every namespace: kubectl's own NAMESPACE column first, and no second one of that name.
    const everywhere = table(kubectl(["get", "apps", "-A", "-o", "wide"]));
    expect(everywhere[0]?.slice(0, 2)).toEqual(["NAMESPACE", "NAME"]);
    expect(everywhere[0]?.filter((h) => h === "NAMESPACE")).toEqual(["NAMESPACE"]);
    expect(everywhere.filter((r) => r[1] === "broken").map((r) => r[0])).toContain("get-apps");

    // The HTTP summary gives the same.
    const http = createHttpApp({
      apps: kubePort(),
      config: parseHttpConfig({ PLUMB_API_TOKENS: JSON.stringify([{ name: "t", token: TOKEN }]) }),
      now: () => new Date(),
      trigger: async () => {},
    });
    const res = await http.request("/api/v1/namespaces/get-apps/apps/broken", {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    const summary = (await res.json()) as Record<string, unknown>;
    expect(summary["ready"]).toEqual({
      status: "False",
      reason: "SourceFailed",
      message: broken?.at(-1),
    });
    const good = (await (
      await http.request("/api/v1/namespaces/get-apps/apps/good", {
        headers: { authorization: `Bearer ${TOKEN}` },
      })
    ).json()) as Record<string, unknown>;
    expect(good["shortRevision"]).toBe(head);
  });
});

describe("a Deployment whose Pods cannot pull their image", () => {
  it("is shown with the Pod's reason, not only a replica count", async () => {
    // kubelet-sim leaves an image tagged :bad in ImagePullBackOff, as a kubelet does.
    const files = fixtureFiles(join(REAL_FIXTURES, "guestbook"));
    const repo = await git.createRepo("pull-backoff", {
      ...files,
      "guestbook-ui-deployment.yaml": files["guestbook-ui-deployment.yaml"]!.replace(
        "gb-frontend:v5",
        "gb-frontend:bad",
      ),
    });
    await createNamespace("pull-backoff");
    await createApp("pull-backoff", "app", { source: { git: { url: repo.url } } });
    const run = () =>
      reconcileApp({ namespace: "pull-backoff", name: "app" }, realPorts(), new Date());
    await run();
    const reason = await waitFor("the Pod's reason", async () => {
      const r = await run();
      const app = await getApp("pull-backoff", "app");
      return r.healthStatus === "Progressing" &&
        app.status?.healthReason?.includes("ImagePullBackOff")
        ? app.status.healthReason
        : undefined;
    });
    expect(reason).toMatch(
      /^Deployment pull-backoff\/guestbook-ui: pod guestbook-ui-[a-z0-9-]+\/guestbook-ui: ImagePullBackOff: Back-off pulling image "gcr\.io\/google-samples\/gb-frontend:bad"/,
    );
    const wide = kubectl(["get", "apps", "-n", "pull-backoff", "-o", "wide"]);
    expect(wide).toContain("ImagePullBackOff");
  });
});
