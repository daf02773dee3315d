// Size caps per App on the real API server: what counts is what an App renders from, a big file
// it does not read breaks nothing, and a render refused for its size prunes nothing.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createNodeEngines, type NodeEngines } from "../../src/engines/node.ts";
import { reconcileApp } from "../../src/reconcile/index.ts";
import { type GitServer, startGitServer, type TestRepo } from "../support/git-server.ts";
import {
  createApp,
  createNamespace,
  getApp,
  getObject,
  inventoryRefs,
  realPorts,
} from "./support.ts";

let git: GitServer;
let engines: NodeEngines;
beforeAll(async () => {
  git = await startGitServer();
  engines = createNodeEngines();
});
afterAll(async () => {
  await engines?.close();
  await git?.stop();
});

const NS = "render-limits";
/** 25 MB (over the default 20 MiB cap on what one App reads), compressible: a small pack. */
const BIG = `big: "${"x".repeat(25_000_000)}"\n`;
const CAP = 20 * 1024 * 1024;
const READS_BIG = "resources: [../../data/big.yaml]\n";

const configMap = (name: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: ${NS}\ndata:\n  a: "1"\n`;

const run = (name: string) =>
  reconcileApp({ namespace: NS, name }, realPorts({ engines }), new Date());

async function newApp(name: string, url: string, path: string): Promise<void> {
  const res = await createApp(NS, name, {
    source: { git: { url, ref: "main", path } },
    destination: { namespace: NS },
  });
  if (res.status !== 201) throw new Error(`create App: ${res.status} ${JSON.stringify(res.body)}`);
}

const ready = async (name: string) =>
  (await getApp(NS, name)).status?.conditions?.find((c) => c.type === "Ready");

describe("size caps per App", () => {
  let repo: TestRepo;
  beforeAll(async () => {
    await createNamespace(NS);
    repo = await git.createRepo("render-limits", {
      "apps/web/kustomization.yaml": "resources: [cm.yaml]\n",
      "apps/web/cm.yaml": configMap("web"),
      "apps/reader/kustomization.yaml": READS_BIG,
      "apps/grow/kustomization.yaml": "resources: [cm.yaml]\n",
      "apps/grow/cm.yaml": configMap("grow"),
      "data/big.yaml": BIG,
    });
  });

  it("an App on a repository that also holds a 25 MB file it does not read is Synced", async () => {
    await newApp("web", repo.url, "apps/web");
    const res = await run("web");
    expect(res).toMatchObject({ outcome: "Reconciled", syncStatus: "Synced" });
    expect(inventoryRefs(await getApp(NS, "web"))).toEqual([
      { apiVersion: "v1", kind: "ConfigMap", namespace: NS, name: "web" },
    ]);
    expect((await getObject(`/api/v1/namespaces/${NS}/configmaps/web`))?.metadata.name).toBe("web");
  });

  it("the App that reads it gets SourceFailed naming the file and the cap", async () => {
    await newApp("reader", repo.url, "apps/reader");
    await run("reader");
    const sha = await repo.head();
    expect(await ready("reader")).toMatchObject({
      status: "False",
      reason: "SourceFailed",
      message: expect.stringContaining(
        `the files "apps/reader" renders from exceed the ${CAP}-byte cap at ${sha} (at data/big.yaml, ${BIG.length + READS_BIG.length} bytes in all)`,
      ),
    });
  });

  it("a synced App whose next render is refused for its size keeps its inventory and objects", async () => {
    await newApp("grow", repo.url, "apps/grow");
    expect(await run("grow")).toMatchObject({ outcome: "Reconciled", syncStatus: "Synced" });
    const before = inventoryRefs(await getApp(NS, "grow"));
    expect(before).toEqual([{ apiVersion: "v1", kind: "ConfigMap", namespace: NS, name: "grow" }]);

    // The next commit swaps its ConfigMap for the big file: the render is refused, nothing pruned.
    await repo.commit({
      "apps/grow/kustomization.yaml": READS_BIG,
      "apps/grow/cm.yaml": null,
    });
    await run("grow");
    expect(await ready("grow")).toMatchObject({
      status: "False",
      reason: "SourceFailed",
      message: expect.stringContaining(`exceed the ${CAP}-byte cap`),
    });
    expect(inventoryRefs(await getApp(NS, "grow"))).toEqual(before);
    expect((await getObject(`/api/v1/namespaces/${NS}/configmaps/grow`))?.metadata.name).toBe(
      "grow",
    );
  });
});
