// AppPolicy on the real control plane: two plumb processes with different settings
// (PLUMB_ALLOWED_DESTINATIONS) apply the same rules from the cluster's AppPolicy, and the
// process's settings come back into force for a namespace once no policy selects it.
import { execFile } from "node:child_process";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { App } from "../../src/app/index.ts";
import { type GitServer, startGitServer } from "../support/git-server.ts";
import { api, createApp, createNamespace, getApp, getObject, kubeconfig } from "./support.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const run = promisify(execFile);
const POLICY = "e2e-policy-tenants";
const POLICIES = "/apis/plumb.dev/v1alpha1/apppolicies";

/** `plumb reconcile NS/NAME` in a process of its own with `env` added; its JSON line and stderr. */
async function reconcile(env: Record<string, string>, id: string) {
  const args = [join(ROOT, "functions/plumb.mjs"), "reconcile", id, "--kubeconfig", kubeconfig()];
  const opts = { env: { ...process.env, ...env } };
  try {
    const { stdout, stderr } = await run(process.execPath, args, opts);
    return { code: 0, line: JSON.parse(stdout.trim()) as Record<string, unknown>, stderr };
  } catch (e) {
    const x = e as { code: number; stdout: string; stderr: string };
    return {
      code: x.code,
      line: JSON.parse(x.stdout.trim()) as Record<string, unknown>,
      stderr: x.stderr,
    };
  }
}

const ready = (app: App) => app.status?.conditions?.find((c) => c.type === "Ready");

let git: GitServer;
let repoUrl = "";
let otherUrl = "";
beforeAll(async () => {
  git = await startGitServer();
  const cm = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {a: b}\n";
  repoUrl = (await git.createRepo("policy-allowed", { "cm.yaml": cm })).url;
  otherUrl = (await git.createRepo("policy-other", { "cm.yaml": cm })).url;
  for (const ns of ["pol-a", "pol-b", "pol-c"]) await createNamespace(ns);
  await api("POST", POLICIES, {
    apiVersion: "plumb.dev/v1alpha1",
    kind: "AppPolicy",
    metadata: { name: POLICY },
    spec: {
      appNamespaces: ["pol-a"],
      destinations: { namespaces: ["pol-b"] },
      sourceRepos: [repoUrl],
    },
  });
});
afterAll(async () => {
  await api("DELETE", `${POLICIES}/${POLICY}`, undefined, undefined, [404]);
  await git?.stop();
});

describe("AppPolicy", () => {
  it("two processes with different settings apply the same policy from the cluster", async () => {
    await createApp("pol-a", "to-b", {
      source: { git: { url: repoUrl } },
      destination: { namespace: "pol-b" },
    });
    await createApp("pol-a", "to-c", {
      source: { git: { url: repoUrl } },
      destination: { namespace: "pol-c" },
    });
    const refusedC =
      'spec.destination.namespace: namespace "pol-c" is not allowed for Apps in "pol-a" by AppPolicy "e2e-policy-tenants" (destinations.namespaces: pol-b)';

    // A process that allows nothing by its settings, and one that allows pol-c.
    const strict = { PLUMB_ALLOWED_DESTINATIONS: "" };
    const loose = { PLUMB_ALLOWED_DESTINATIONS: "pol-c" };
    for (const env of [strict, loose]) {
      const b = await reconcile(env, "pol-a/to-b");
      expect(b.line).toMatchObject({ outcome: "Reconciled", syncStatus: "Synced" });
      const c = await reconcile(env, "pol-a/to-c");
      expect(c.code).toBe(1);
      expect(c.line).toMatchObject({ outcome: "Failed", error: `InvalidSpec: ${refusedC}` });
      expect(ready(await getApp("pol-a", "to-c"))).toMatchObject({
        status: "False",
        reason: "InvalidSpec",
        message: refusedC,
      });
    }
    expect(await getObject("/api/v1/namespaces/pol-b/configmaps/settings")).toBeDefined();
    expect(await getObject("/api/v1/namespaces/pol-c/configmaps/settings")).toBeUndefined();

    // The process whose settings the policy overrides says so, once.
    const said = await reconcile(loose, "pol-a/to-c");
    const notices = said.stderr
      .split("\n")
      .filter((l) => l.includes("is ignored for Apps in"))
      .map((l) => JSON.parse(l).msg);
    expect(notices).toEqual([
      'PLUMB_ALLOWED_DESTINATIONS=pol-c is ignored for Apps in "pol-a": AppPolicy "e2e-policy-tenants" governs them',
    ]);
    expect((await reconcile(strict, "pol-a/to-c")).stderr).not.toContain("is ignored");
  });

  it("a source the policy does not list is refused before it is read", async () => {
    await createApp("pol-a", "other-source", { source: { git: { url: otherUrl } } });
    const before = git.requests.length;
    const r = await reconcile({}, "pol-a/other-source");
    expect(r.line).toMatchObject({
      outcome: "Failed",
      error: `InvalidSpec: spec.source.git: source "${otherUrl}" is not allowed by AppPolicy "e2e-policy-tenants" (sourceRepos: ${repoUrl})`,
    });
    expect(git.requests.slice(before).filter((q) => q.includes("policy-other"))).toEqual([]);
  });

  it("once no policy selects the namespace, the process's settings decide again", async () => {
    await createApp("pol-a", "to-c-later", {
      source: { git: { url: repoUrl } },
      destination: { namespace: "pol-c" },
    });
    await api("DELETE", `${POLICIES}/${POLICY}`);
    const strict = await reconcile({ PLUMB_ALLOWED_DESTINATIONS: "" }, "pol-a/to-c-later");
    expect(strict.line).toMatchObject({
      outcome: "Failed",
      error:
        'InvalidSpec: spec.destination.namespace: namespace "pol-c" is not allowed for Apps in "pol-a": an App deploys to its own namespace unless the cluster setting PLUMB_ALLOWED_DESTINATIONS lists this one (or "*")',
    });
    const loose = await reconcile({ PLUMB_ALLOWED_DESTINATIONS: "pol-c" }, "pol-a/to-c-later");
    expect(loose.line).toMatchObject({ outcome: "Reconciled", syncStatus: "Synced" });
    expect(await getObject("/api/v1/namespaces/pol-c/configmaps/settings")).toBeDefined();
  });
});
