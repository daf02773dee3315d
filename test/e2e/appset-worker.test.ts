import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GitServer, startGitServer, type TestRepo } from "../support/git-server.ts";
import { githubHeaders, githubPush } from "../support/github.ts";
import { startWorkerd, type Workerd } from "../support/workerd.ts";
import { api, createNamespace, getObject, kubeconfig, waitFor } from "./support.ts";

const SECRET = "appset-worker-webhook-secret";
const NS = "appset-worker";
const APPSETS = `/apis/plumb.dev/v1alpha1/namespaces/${NS}/appsets`;

const configMap = (name: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  from: ${name}\n`;

let git: GitServer;
let repo: TestRepo;
let workerd: Workerd;

beforeAll(async () => {
  await createNamespace(NS);
  git = await startGitServer();
  repo = await git.createRepo("org/worker-envs", { "envs/dev/cm.yaml": configMap("cm-dev") });
  workerd = await startWorkerd(kubeconfig(), { GITHUB_WEBHOOK_SECRET: SECRET });
});
afterAll(async () => {
  await workerd?.stop();
  await git?.stop();
});

type AppObject = {
  spec: { source: { git: { path: string } } };
  status?: { revision?: string };
};
const readApp = async (name: string) =>
  (await getObject(`/apis/plumb.dev/v1alpha1/namespaces/${NS}/apps/${name}`)) as unknown as
    | AppObject
    | undefined;
const data = async (name: string) =>
  ((await getObject(`/api/v1/namespaces/${NS}/configmaps/${name}`)) as { data?: unknown })?.data;
const diagnostics = () => workerd.output().slice(-6000);

describe("AppSets in the Worker", () => {
  it("the cron evaluates a new AppSet, then syncs the App it made in the same tick", async () => {
    await api("POST", APPSETS, {
      apiVersion: "plumb.dev/v1alpha1",
      kind: "AppSet",
      metadata: { name: "envs", namespace: NS },
      spec: {
        generators: [
          { git: { repoURL: repo.url, revision: "main", directories: [{ path: "envs/*" }] } },
        ],
        template: {
          metadata: { name: "env-{{path.basename}}" },
          spec: { source: { git: { url: repo.url, ref: "main", path: "{{path}}" } } },
        },
      },
    });
    const head = await repo.head();
    const res = await fetch(`${workerd.base}/__scheduled?cron=*+*+*+*+*`);
    expect(res.status).toBe(200);
    await waitFor("env-dev synced by the tick", async () => {
      const a = await readApp("env-dev");
      return a?.status?.revision === head;
    }).catch((err) => {
      throw new Error(`${String(err)}\n${diagnostics()}`);
    });
    expect(await data("cm-dev")).toEqual({ from: "cm-dev" });
    const set = (await api("GET", `${APPSETS}/envs`)) as {
      status?: { apps?: unknown[]; conditions?: Array<{ type: string; status: string }> };
    };
    expect(set.status?.apps).toEqual([{ name: "env-dev" }]);
    expect(set.status?.conditions?.find((c) => c.type === "Ready")?.status).toBe("True");
  });

  it("a signed push adding a directory makes its App at once", async () => {
    const after = await repo.commit({ "envs/prod/cm.yaml": configMap("cm-prod") }, "prod");
    const body = githubPush(repo.url, "refs/heads/main", after);
    const res = await fetch(`${workerd.base}/webhooks/github`, {
      method: "POST",
      headers: githubHeaders(body, SECRET),
      body,
    });
    expect(res.status).toBe(202);
    await waitFor("env-prod synced after the push", async () => {
      const a = await readApp("env-prod");
      return a?.status?.revision === after;
    }).catch((err) => {
      throw new Error(`${String(err)}\n${diagnostics()}`);
    });
    expect((await readApp("env-prod"))?.spec.source.git.path).toBe("envs/prod");
    expect(await data("cm-prod")).toEqual({ from: "cm-prod" });
  });
});
