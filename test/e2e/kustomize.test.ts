// Kustomize overlays from Git rendered by krusty in its native helper: podinfo's real overlays
// applied to the local control plane, generated ConfigMaps rolling, spec overrides, refusals.
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createNodeEngines, type NodeEngines } from "../../src/engines/node.ts";
import { reconcileApp } from "../../src/reconcile/index.ts";
import {
  fixtureFiles,
  type GitServer,
  REAL_FIXTURES,
  startGitServer,
  type TestRepo,
} from "../support/git-server.ts";
import {
  api,
  createApp,
  createNamespace,
  getApp,
  getObject,
  inventoryRefs,
  patchAppSpec,
  realPorts,
  waitFor,
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

const overlays = () => fixtureFiles(join(REAL_FIXTURES, "podinfo-kustomize-overlays"));
const ENVS = ["dev", "staging", "production"] as const;

const run = (ns: string, name: string) =>
  reconcileApp(
    { namespace: ns, name },
    realPorts({ engines, allowedDestinations: [...ENVS, "kz-refuse"] }),
    new Date(),
  );

async function newApp(ns: string, name: string, spec: Record<string, unknown>): Promise<void> {
  await createNamespace(ns);
  const res = await createApp(ns, name, spec);
  if (res.status !== 201) throw new Error(`create App: ${res.status} ${JSON.stringify(res.body)}`);
}

type Deployment = {
  metadata: { generation: number };
  spec: {
    replicas?: number;
    template: {
      spec: {
        containers: Array<{ image: string }>;
        volumes?: Array<{ name: string; configMap?: { name: string } }>;
      };
    };
  };
  status?: { observedGeneration?: number; updatedReplicas?: number };
};

const deployment = async (ns: string, name: string) =>
  (await getObject(`/apis/apps/v1/namespaces/${ns}/deployments/${name}`)) as unknown as
    | Deployment
    | undefined;

async function configMaps(ns: string, prefix: string): Promise<string[]> {
  const list = (await api("GET", `/api/v1/namespaces/${ns}/configmaps`)) as {
    items: Array<{ metadata: { name: string } }>;
  };
  return list.items.map((c) => c.metadata.name).filter((n) => n.startsWith(prefix));
}

describe("Kustomize overlays (podinfo)", () => {
  let repo: TestRepo;
  beforeAll(async () => {
    repo = await git.createRepo("podinfo-overlays", overlays(), { allowSha1InWant: true });
  });

  it("each overlay renders 25 objects, its own Namespace included, bases from ../../bases", async () => {
    for (const env of ENVS) {
      await newApp("kz", env, {
        source: { git: { url: repo.url, ref: "main", path: `deploy/overlays/${env}` } },
        destination: { namespace: env },
      });
      const res = await run("kz", env);
      expect(res).toMatchObject({
        outcome: "Reconciled",
        syncStatus: "Synced",
        revision: await repo.head(),
      });
      const app = await getApp("kz", env);
      expect(app.status?.inventory).toHaveLength(25);
      expect(inventoryRefs(app)).toContainEqual({
        apiVersion: "v1",
        kind: "Namespace",
        name: env,
      });
      const ns = await getObject(`/api/v1/namespaces/${env}`);
      expect(ns?.metadata.labels?.["app.kubernetes.io/environment"]).toBe(env);
      // configMapGenerator with a hash suffix, referenced by the Deployment under its hashed name
      const [redis, ...more] = await configMaps(env, "redis-config-");
      expect(more).toEqual([]);
      expect(redis).toMatch(/^redis-config-[a-z0-9]{10}$/);
      const cache = await deployment(env, "cache");
      expect(
        cache?.spec.template.spec.volumes?.find((v) => v.name === "config")?.configMap?.name,
      ).toBe(redis);
      expect(
        (await getObject(`/api/v1/namespaces/${env}/configmaps/rollup-script`))?.metadata.labels,
      ).toMatchObject({
        "plumb.dev/app": env,
        "app.kubernetes.io/instance": "webapp",
      });
    }
    // One native helper served the three renders: loaded once for the process.
    expect(engines.stats().kustomize).toMatchObject({ loads: 1, renders: 3 });
    expect(engines.pid("kustomize")).toBeGreaterThan(0);
  });

  it("a change to a generated ConfigMap's file yields a new name, the Deployment rolls to it, the old one is pruned after the rollout", async () => {
    const [before] = await configMaps("dev", "redis-config-");
    const generation = (await deployment("dev", "cache"))!.metadata.generation;
    const conf = overlays()["deploy/bases/cache/redis.conf"]!;
    await repo.commit({ "deploy/bases/cache/redis.conf": `${conf}\nmaxclients 500\n` });
    const res = await run("kz", "dev");
    expect(res).toMatchObject({
      outcome: "Reconciled",
      syncStatus: "Synced",
      revision: await repo.head(),
    });
    const [after] = (await configMaps("dev", "redis-config-")).filter((n) => n !== before);
    expect(after).toMatch(/^redis-config-[a-z0-9]{10}$/);
    const cache = await deployment("dev", "cache");
    expect(cache!.metadata.generation).toBe(generation + 1);
    expect(
      cache!.spec.template.spec.volumes?.find((v) => v.name === "config")?.configMap?.name,
    ).toBe(after);
    await waitFor("the controller rolls the Deployment and retires the old Pods", async () => {
      const d = await deployment("dev", "cache");
      const pods = (await api("GET", "/api/v1/namespaces/dev/pods")) as {
        items: Array<{ spec: { volumes?: Array<{ configMap?: { name: string } }> } }>;
      };
      const sets = (await api("GET", "/apis/apps/v1/namespaces/dev/replicasets")) as {
        items: Array<{
          spec: { replicas?: number; template: { spec: (typeof pods.items)[number]["spec"] } };
          status?: { replicas?: number };
        }>;
      };
      const mounts = (spec: (typeof pods.items)[number]["spec"]) =>
        spec.volumes?.some((v) => v.configMap?.name === before) ?? false;
      const oldPods = pods.items.some((p) => mounts(p.spec));
      const oldSets = sets.items.some(
        (r) =>
          mounts(r.spec.template.spec) && (r.spec.replicas !== 0 || (r.status?.replicas ?? 0) > 0),
      );
      return (
        d?.status?.observedGeneration === generation + 1 &&
        d.status.updatedReplicas === (d.spec.replicas ?? 1) &&
        !oldPods &&
        !oldSets
      );
    });
    // The old ConfigMap is pruned by the first run after the rollout (test/e2e/rollout-prune.test.ts
    // holds the rollout to show it kept until then).
    await run("kz", "dev");
    expect(await configMaps("dev", "redis-config-")).toEqual([after]);
    const events = (await api("GET", "/api/v1/namespaces/kz/events")) as {
      items: Array<{ reason: string; message: string; involvedObject: { name: string } }>;
    };
    expect(
      events.items.some(
        (e) =>
          e.involvedObject.name === "dev" &&
          e.reason === "Pruned" &&
          e.message.includes(`ConfigMap dev/${before}`),
      ),
    ).toBe(true);
    // The other overlays' ConfigMaps move too on their next run; staging's is untouched until then.
    expect(await configMaps("staging", "redis-config-")).toHaveLength(1);
  });

  it("spec.source.kustomize images and patches re-apply; a commit rendering the same objects does not", async () => {
    await run("kz", "staging"); // at the head first (the ConfigMap commit above)
    const before = (await getApp("kz", "staging")).status!;
    await patchAppSpec("kz", "staging", {
      source: {
        kustomize: {
          images: [{ name: "ghcr.io/stefanprodan/podinfo", newTag: "6.99.0" }],
          patches: [
            {
              patch: "- op: replace\n  path: /spec/replicas\n  value: 3\n",
              // cache has no HPA: a Deployment an HPA scales keeps its live replicas.
              target: { kind: "Deployment", name: "cache" },
            },
          ],
        },
      },
    });
    const res = await run("kz", "staging");
    expect(res).toMatchObject({ outcome: "Reconciled", syncStatus: "Synced" });
    const after = (await getApp("kz", "staging")).status!;
    expect(after.revision).toBe(before.revision);
    expect(after.objectHash).not.toBe(before.objectHash);
    const backend = await deployment("staging", "backend");
    expect(backend?.spec.template.spec.containers[0]?.image).toBe(
      "ghcr.io/stefanprodan/podinfo:6.99.0",
    );
    expect((await deployment("staging", "cache"))?.spec.replicas).toBe(3);

    // A commit outside the overlays' reach renders the same objects: recorded as observed, not
    // applied (status.revision stays the commit last applied).
    await repo.commit({ "docs/README.md": "notes\n" });
    const same = await run("kz", "staging");
    expect(same).toMatchObject({ outcome: "Reconciled", syncStatus: "Synced" });
    const unchanged = (await getApp("kz", "staging")).status!;
    expect(unchanged.observedRevision).toBe(await repo.head());
    expect(unchanged.revision).toBe(after.revision);
    expect(unchanged.objectHash).toBe(after.objectHash);
    expect(same.requests.patch).toBeLessThan(3); // 25 applies would be 25 patches
  });

  it("refuses a remote base and a path outside the repository, leaving objects and inventory as they were", async () => {
    const r = await git.createRepo(
      "kz-refuse",
      {
        "app/kustomization.yaml": "namespace: kz-refuse\nresources:\n  - cm.yaml\n",
        "app/cm.yaml":
          "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  a: '1'\n",
      },
      { allowSha1InWant: true },
    );
    await newApp("kz-refuse", "app", { source: { git: { url: r.url, ref: "main", path: "app" } } });
    expect((await run("kz-refuse", "app")).outcome).toBe("Reconciled");
    const before = (await getApp("kz-refuse", "app")).status!;
    expect(inventoryRefs(await getApp("kz-refuse", "app"))).toEqual([
      { apiVersion: "v1", kind: "ConfigMap", namespace: "kz-refuse", name: "settings" },
    ]);

    const cases: Array<[Record<string, string>, string]> = [
      [
        { "app/kustomization.yaml": "resources:\n  - https://github.com/org/repo//base?ref=v1\n" },
        'RenderFailed: app: app/kustomization.yaml: resources entry "https://github.com/org/repo//base?ref=v1" is remote: remote bases and resources are not supported (a render reads only the App\'s repository)',
      ],
      [
        { "app/kustomization.yaml": "resources:\n  - ../../../outside\n" },
        'RenderFailed: app: app/kustomization.yaml: resources entry "../../../outside" points outside the repository',
      ],
      [
        {
          "app/kustomization.yaml":
            "resources:\n  - cm.yaml\nconfigMapGenerator:\n  - name: x\n    files:\n      - ../../etc/passwd\n",
        },
        'path "../etc/passwd" is outside the repository',
      ],
      [
        {
          "app/kustomization.yaml":
            "helmCharts:\n  - name: redis\n    repo: https://charts.example.com\n",
        },
        'RenderFailed: app: app/kustomization.yaml: helmCharts entry "redis": the helmCharts generator is not supported',
      ],
      [
        {
          "app/kustomization.yaml": "resources:\n  - cm.yaml\ntransformers:\n  - fn.yaml\n",
          "app/fn.yaml":
            "apiVersion: example.com/v1\nkind: SetLabels\nmetadata:\n  name: f\n  annotations:\n    config.kubernetes.io/function: |\n      container:\n        image: example.com/fn\n",
        },
        'RenderFailed: app: app/kustomization.yaml: transformers entry "fn.yaml" is a KRM function (config.kubernetes.io/function): exec and container functions are not supported',
      ],
    ];
    for (const [files, message] of cases) {
      await r.commit(files);
      const res = await run("kz-refuse", "app");
      expect(res.outcome).toBe("Failed");
      expect(res.error).toContain(message);
      const now = (await getApp("kz-refuse", "app")).status!;
      expect(now.revision).toBe(before.revision);
      expect(now.inventory).toEqual(before.inventory);
      expect(now.conditions?.find((c) => c.type === "Ready")).toMatchObject({
        status: "False",
        reason: "RenderFailed",
      });
      expect(
        (await getObject("/api/v1/namespaces/kz-refuse/configmaps/settings"))?.["data"],
      ).toEqual({ a: "1" });
    }
  });
});
