// spec.source.app on the real control plane: services, needs and domains become
// Healthy objects; generated passwords survive; a new tag in the range rolls out; a host
// another Ingress serves is refused; an app deployed with `kubectl apply` is adopted without
// downtime; DNS records follow the domains, against a local Cloudflare API.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import type { App } from "../../src/app/index.ts";
import type { KubeObject } from "../../src/core/index.ts";
import { cloudflareDnsSettings } from "../../src/dns/index.ts";
import type { Ports } from "../../src/reconcile/index.ts";
import { reconcileApp } from "../../src/reconcile/index.ts";
import { renderApp } from "../../src/render/index.ts";
import { createImagePort } from "../../src/source/image.ts";
import { type CloudflareApi, startCloudflareApi } from "../support/cloudflare.ts";
import { startRegistry, type TestRegistry } from "../support/registry.ts";
import {
  api,
  createApp,
  createNamespace,
  getApp,
  getObject,
  kubeconfig,
  patchAppSpec,
  realPorts,
  waitFor,
} from "./support.ts";

const ROOT = resolve(import.meta.dirname, "../..");
let registry: TestRegistry;
let cloudflare: CloudflareApi;
let dir: string;

beforeAll(async () => {
  registry = await startRegistry();
  cloudflare = await startCloudflareApi("example.com");
  dir = mkdtempSync(join(tmpdir(), "plumb-service-app-"));
});
afterAll(async () => {
  await registry?.stop();
  await cloudflare?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** An OCI manifest whose digest depends on `n`. */
const manifest = (n: number) => ({
  schemaVersion: 2,
  mediaType: "application/vnd.oci.image.manifest.v1+json",
  config: {
    mediaType: "application/vnd.oci.image.config.v1+json",
    digest: `sha256:${n.toString(16).padStart(64, "0")}`,
    size: n,
  },
  layers: [],
});

const ingressSettings = { ingressClassName: "nginx", clusterIssuer: "letsencrypt-prod" };
const ports = (extra: Partial<Ports> = {}) =>
  realPorts({ image: createImagePort(), ingress: ingressSettings, ...extra });
const run = (ns: string, name: string, extra: Partial<Ports> = {}) =>
  reconcileApp({ namespace: ns, name }, ports(extra), new Date());

async function newApp(ns: string, name: string, spec: Record<string, unknown>): Promise<void> {
  await createNamespace(ns);
  const res = await createApp(ns, name, spec);
  if (res.status !== 201) throw new Error(`create App: ${res.status} ${JSON.stringify(res.body)}`);
}

/** Reconciles every 500 ms until `pred` holds for the App. */
function reconcileUntil(
  ns: string,
  name: string,
  what: string,
  pred: (a: App) => boolean,
  extra: Partial<Ports> = {},
) {
  return waitFor(
    what,
    async () => {
      await run(ns, name, extra);
      const a = await getApp(ns, name);
      return pred(a) ? a : undefined;
    },
    { everyMs: 500 },
  );
}

type Container = {
  image: string;
  env?: Array<{ name: string; value?: string; valueFrom?: unknown }>;
};
const containerOf = (d: KubeObject | undefined) =>
  (d?.["spec"] as { template: { spec: { containers: Container[] } } } | undefined)?.template.spec
    .containers[0];

async function secretValue(ns: string, name: string, key: string): Promise<string | undefined> {
  const s = await getObject(`/api/v1/namespaces/${ns}/secrets/${name}`);
  const data = (s?.["data"] ?? {}) as Record<string, string>;
  return data[key] === undefined ? undefined : Buffer.from(data[key], "base64").toString("utf8");
}

async function podsOf(ns: string, selector: string): Promise<string[]> {
  const list = (await api(
    "GET",
    `/api/v1/namespaces/${ns}/pods?labelSelector=${encodeURIComponent(selector)}`,
  )) as { items: KubeObject[] };
  return list.items.map((p) => `${p.metadata.name}/${p.metadata.uid}`).sort();
}

describe("an App from a service spec", () => {
  const ns = "svc-shop";
  const image = () => `${registry.host}/acme/shop`;

  it("two services, a domain and needs: [postgres] become Healthy; the password is generated once", async () => {
    registry.push("acme/shop", "1.4.0", manifest(1));
    const d142 = registry.push("acme/shop", "1.4.2", manifest(2));
    registry.push("acme/shop", "1.5.0", manifest(3));
    await newApp(ns, "shop", {
      source: {
        app: {
          services: [
            {
              name: "web",
              image: image(),
              tag: "~1.4",
              port: 8080,
              healthCheck: { path: "/healthz" },
              domains: ["shop.example.com"],
            },
            { name: "worker", image: image(), tag: "~1.4", command: ["bin/worker"] },
          ],
          needs: ["postgres"],
        },
      },
      interval: "1s",
    });
    const first = await run(ns, "shop");
    expect(first).toMatchObject({ outcome: "Reconciled", syncStatus: "Synced" });
    expect(first.revision).toBe(`${image()}:1.4.2@${d142}`);

    const web = await getObject(`/apis/apps/v1/namespaces/${ns}/deployments/web`);
    expect(containerOf(web)?.image).toBe(`${image()}@${d142}`);
    expect(containerOf(web)?.env?.map((e) => e.name)).toEqual([
      "PORT",
      "PGHOST",
      "PGPORT",
      "PGUSER",
      "PGDATABASE",
      "PGPASSWORD",
      "DATABASE_URL",
    ]);
    const ingress = await getObject(`/apis/networking.k8s.io/v1/namespaces/${ns}/ingresses/web`);
    expect(ingress?.["spec"]).toMatchObject({
      ingressClassName: "nginx",
      tls: [{ hosts: ["shop.example.com"], secretName: "web-tls" }],
    });
    expect(ingress?.metadata.annotations?.["cert-manager.io/cluster-issuer"]).toBe(
      "letsencrypt-prod",
    );
    const password = await secretValue(ns, "shop-postgres", "password");
    expect(password).toMatch(/^[0-9a-f]{64}$/);

    const healthy = await reconcileUntil(
      ns,
      "shop",
      "Healthy",
      (a) => a.status?.healthStatus === "Healthy",
    );
    expect(healthy.status?.inventory?.map((r) => `${r.kind}/${r.name}`).sort()).toEqual([
      "Deployment/web",
      "Deployment/worker",
      "Ingress/web",
      "Secret/shop-postgres",
      "Service/shop-postgres",
      "Service/web",
      "StatefulSet/shop-postgres",
    ]);
    expect(healthy.status?.drift).toBeUndefined();

    // A later run and a spec change leave the password as it was.
    await run(ns, "shop");
    await patchAppSpec(ns, "shop", {
      source: {
        app: {
          services: [
            {
              name: "web",
              image: image(),
              tag: "~1.4",
              port: 8080,
              replicas: 2,
              healthCheck: { path: "/healthz" },
              domains: ["shop.example.com"],
            },
            { name: "worker", image: image(), tag: "~1.4", command: ["bin/worker"] },
          ],
          needs: ["postgres"],
        },
      },
    });
    const changed = await run(ns, "shop");
    expect(changed).toMatchObject({ outcome: "Reconciled", syncStatus: "Synced" });
    const scaled = await getObject(`/apis/apps/v1/namespaces/${ns}/deployments/web`);
    expect((scaled?.["spec"] as { replicas: number } | undefined)?.replicas).toBe(2);
    expect(await secretValue(ns, "shop-postgres", "password")).toBe(password);
  });

  it("a new tag matching the range rolls the Deployment to its digest; a held one waits", async () => {
    const before = await getObject(`/apis/apps/v1/namespaces/${ns}/deployments/web`);
    const d143 = registry.push("acme/shop", "1.4.3", manifest(4));
    registry.push("acme/shop", "2.0.0", manifest(5));
    const r = await run(ns, "shop");
    expect(r.revision).toBe(`${image()}:1.4.3@${d143}`);
    const after = await getObject(`/apis/apps/v1/namespaces/${ns}/deployments/web`);
    expect(containerOf(after)?.image).toBe(`${image()}@${d143}`);
    expect(containerOf(before)?.image).not.toBe(containerOf(after)?.image);
    const app = await getApp(ns, "shop");
    expect(app.status?.previousRevisions?.[0]?.revision).toContain(":1.4.2@sha256:");

    // With requiresApproval, the next matching tag is held like a commit would be.
    const current = app.spec as Record<string, unknown>;
    await patchAppSpec(ns, "shop", {
      syncPolicy: { ...(current["syncPolicy"] as object), requiresApproval: true },
    });
    const d144 = registry.push("acme/shop", "1.4.4", manifest(6));
    const held = await run(ns, "shop");
    expect(held.syncStatus).toBe("Held");
    expect((await getApp(ns, "shop")).status?.heldRevision).toBe(`${image()}:1.4.4@${d144}`);
    const still = await getObject(`/apis/apps/v1/namespaces/${ns}/deployments/web`);
    expect(containerOf(still)?.image).toBe(`${image()}@${d143}`);
  });

  it("dropping the need prunes its workload but never its password Secret", async () => {
    const password = await secretValue(ns, "shop-postgres", "password");
    await patchAppSpec(ns, "shop", {
      syncPolicy: { requiresApproval: false },
      source: {
        app: {
          services: [{ name: "web", image: image(), tag: "~1.4", port: 8080 }],
          needs: [],
        },
      },
    });
    const r = await run(ns, "shop");
    expect(r.outcome).toBe("Reconciled");
    await waitFor(
      "StatefulSet pruned",
      async () =>
        (await getObject(`/apis/apps/v1/namespaces/${ns}/statefulsets/shop-postgres`)) ===
        undefined,
    );
    expect(await secretValue(ns, "shop-postgres", "password")).toBe(password);
    const app = await getApp(ns, "shop");
    expect(
      app.status?.resources?.find((x) => x.name === "shop-postgres" && x.kind === "Secret"),
    ).toMatchObject({
      status: "PruneSkipped",
      message: "Secret svc-shop/shop-postgres is not pruned: annotated plumb.dev/prune: disabled",
    });
  });
});

describe("host ownership", () => {
  it("a host another Ingress serves is refused, naming it, and nothing is applied", async () => {
    await createNamespace("svc-legacy");
    await api("POST", "/apis/networking.k8s.io/v1/namespaces/svc-legacy/ingresses", {
      apiVersion: "networking.k8s.io/v1",
      kind: "Ingress",
      metadata: { name: "legacy", namespace: "svc-legacy" },
      spec: {
        rules: [
          {
            host: "taken.example.com",
            http: {
              paths: [
                {
                  path: "/",
                  pathType: "Prefix",
                  backend: { service: { name: "legacy", port: { number: 80 } } },
                },
              ],
            },
          },
        ],
      },
    });
    const d = registry.push("acme/taken", "1.0.0", manifest(20));
    expect(d).toMatch(/^sha256:/);
    await newApp("svc-taken", "site", {
      source: {
        app: {
          services: [
            {
              name: "web",
              image: `${registry.host}/acme/taken`,
              tag: "1.0.0",
              port: 80,
              domains: ["taken.example.com"],
            },
          ],
        },
      },
    });
    const r = await run("svc-taken", "site");
    expect(r.outcome).toBe("Failed");
    expect(r.error).toBe(
      "HostConflict: taken.example.com is already served by Ingress svc-legacy/legacy; nothing applied",
    );
    const ready = (await getApp("svc-taken", "site")).status?.conditions?.find(
      (c) => c.type === "Ready",
    );
    expect(ready).toMatchObject({ status: "False", reason: "HostConflict" });
    expect(await getObject("/apis/apps/v1/namespaces/svc-taken/deployments/web")).toBeUndefined();
    expect(await getObject("/api/v1/namespaces/svc-taken/services/web")).toBeUndefined();
  });
});

describe("adoption of what kubectl deployed", () => {
  const ns = "svc-adopt";
  let digest = "";

  it("takes over what kubectl made, refuses what another tool manages unless spec.adopt; no Pod replaced", async () => {
    digest = registry.push("acme/blog", "3.0.0", manifest(30));
    const source = {
      services: [
        { name: "web", image: `${registry.host}/acme/blog`, tag: "3.0.0", port: 8080 },
        { name: "api", image: `${registry.host}/acme/blog`, tag: "3.0.0", port: 9090 },
      ],
    };
    // What the team deployed with kubectl: the objects plumb renders for `web` (so nothing
    // changes for it), and an `api` Deployment with a selector of its own (immutable: it is
    // kept) that Helm manages (its release annotation).
    const rendered = renderApp({
      app: "blog",
      source: {
        services: source.services.map((s) => ({ ...s, replicas: 2, size: "small" as const })),
        jobs: [],
        needs: [],
      },
      pins: [{ repository: `${registry.host}/acme/blog`, tag: "3.0.0", digest }],
      settings: {},
    });
    if (!rendered.ok) throw new Error(JSON.stringify(rendered.error));
    const manifests = rendered.value.map(({ object }) => {
      const o = structuredClone(object);
      o.metadata.namespace = ns;
      if (o.kind === "Deployment" && o.metadata.name === "api") {
        const spec = o["spec"] as {
          selector: { matchLabels: Record<string, string> };
          template: { metadata: { labels: Record<string, string> } };
        };
        spec.selector = { matchLabels: { app: "api" } };
        spec.template.metadata.labels = { app: "api" };
        o.metadata.annotations = { ...o.metadata.annotations, "meta.helm.sh/release-name": "blog" };
      }
      if (o.kind === "Service" && o.metadata.name === "api") {
        (o["spec"] as { selector: unknown }).selector = { app: "api" };
      }
      return o;
    });
    await createNamespace(ns);
    const file = join(dir, "blog.yaml");
    writeFileSync(file, manifests.map((m) => stringify(m)).join("---\n"));
    execFileSync(
      process.env["PLUMB_CLUSTER_BIN"] || join(ROOT, "test/cluster/bin/plumb-cluster"),
      ["kubectl", "apply", "-f", file, "--kubeconfig", kubeconfig()],
      { encoding: "utf8" },
    );
    const webSelector = "app.kubernetes.io/name=web,app.kubernetes.io/instance=blog";
    const podsBefore = await waitFor("2 web Pods", async () => {
      const pods = await podsOf(ns, webSelector);
      return pods.length === 2 ? pods : undefined;
    });
    const rsBefore = (await api(
      "GET",
      `/apis/apps/v1/namespaces/${ns}/replicasets?labelSelector=${encodeURIComponent(webSelector)}`,
    )) as { items: KubeObject[] };

    // Without adopt: what kubectl made is taken over (web); what Helm manages is refused,
    // naming it, and left alone (api).
    const spec = {
      source: { app: { ...source, services: source.services.map((s) => ({ ...s, replicas: 2 })) } },
      interval: "1s",
    };
    const created = await createApp(ns, "blog", spec);
    expect(created.status).toBe(201);
    const refused = await run(ns, "blog");
    expect(refused.outcome).toBe("Failed");
    expect(refused.error).toContain(
      `Deployment ${ns}/api exists and is managed by Helm (annotation meta.helm.sh/release-name), not by this App; set spec.adopt: true to take it over`,
    );
    expect(refused.error).not.toContain(`Deployment ${ns}/web`);
    const takenOver = await getObject(`/apis/apps/v1/namespaces/${ns}/deployments/web`);
    expect(takenOver?.metadata.labels?.["plumb.dev/app"]).toBe("blog");
    const untouched = await getObject(`/apis/apps/v1/namespaces/${ns}/deployments/api`);
    expect(untouched?.metadata.labels?.["plumb.dev/app"]).toBeUndefined();

    // With adopt: taken over; the client-side manager's fields are plumb's now.
    await patchAppSpec(ns, "blog", { adopt: true });
    const adopted = await run(ns, "blog");
    expect(adopted).toMatchObject({ outcome: "Reconciled", syncStatus: "Synced" });
    const web = await getObject(`/apis/apps/v1/namespaces/${ns}/deployments/web`);
    const managers = (web?.metadata.managedFields ?? []).map((m) => `${m.manager}:${m.operation}`);
    expect(managers).toContain("plumb:Apply");
    expect(managers).not.toContain("kubectl-client-side-apply:Update");
    // plumb owned kubectl's last-applied annotation and does not apply it: gone.
    expect(
      web?.metadata.annotations?.["kubectl.kubernetes.io/last-applied-configuration"],
    ).toBeUndefined();
    expect(web?.metadata.labels?.["plumb.dev/app"]).toBe("blog");
    // The api Deployment keeps its live (immutable) selector.
    const apiDeploy = await getObject(`/apis/apps/v1/namespaces/${ns}/deployments/api`);
    expect((apiDeploy?.["spec"] as { selector: unknown } | undefined)?.selector).toEqual({
      matchLabels: { app: "api" },
    });

    // No downtime: web's Pods and ReplicaSet are the same ones.
    expect(await podsOf(ns, webSelector)).toEqual(podsBefore);
    const rsAfter = (await api(
      "GET",
      `/apis/apps/v1/namespaces/${ns}/replicasets?labelSelector=${encodeURIComponent(webSelector)}`,
    )) as { items: KubeObject[] };
    expect(rsAfter.items.map((r) => r.metadata.uid)).toEqual(
      rsBefore.items.map((r) => r.metadata.uid),
    );

    // The next runs (full comparisons: interval 1s) see no drift and no conflict.
    await new Promise((r) => setTimeout(r, 1100));
    const next = await run(ns, "blog");
    expect(next).toMatchObject({ outcome: "Reconciled", syncStatus: "Synced" });
    const status = (await getApp(ns, "blog")).status;
    expect(status?.drift).toBeUndefined();
    expect(status?.resources?.every((r) => r.status === "Synced")).toBe(true);
    expect(await podsOf(ns, webSelector)).toEqual(podsBefore);
  });
});

describe("DNS records for the domains", () => {
  const ns = "svc-dns";
  const comment = `managed-by=plumb app=${ns}/site`;
  const dnsPorts = () => ({
    dns: cloudflareDnsSettings(
      {
        apiToken: cloudflare.token,
        zoneId: cloudflare.zoneId,
        zone: "example.com",
        target: "203.0.113.10",
        type: "A",
        proxied: false,
      },
      cloudflare.baseURL,
    )!,
  });
  const spec = (domains: string[]) => ({
    source: {
      app: {
        services: [
          { name: "web", image: `${registry.host}/acme/site`, tag: "1.0.0", port: 80, domains },
        ],
      },
    },
  });
  const records = () =>
    [...cloudflare.records.values()]
      .map((r) => `${r.name} ${r.type} ${r.content} ${r.comment ?? "-"}`)
      .sort();

  it("creates one per domain, leaves someone else's alone (a clear condition), follows removals, and goes with the App", async () => {
    registry.push("acme/site", "1.0.0", manifest(40));
    cloudflare.seed({ name: "status.example.com", type: "A", content: "192.0.2.1", comment: null });
    await newApp(ns, "site", spec(["www.example.com", "api.example.com", "status.example.com"]));
    const r = await run(ns, "site", dnsPorts());
    expect(r.outcome).toBe("Reconciled");
    expect(records()).toEqual([
      `api.example.com A 203.0.113.10 ${comment}`,
      "status.example.com A 192.0.2.1 -",
      `www.example.com A 203.0.113.10 ${comment}`,
    ]);
    const cond = (await getApp(ns, "site")).status?.conditions?.find(
      (c) => c.type === "DNSRecords",
    );
    expect(cond).toMatchObject({
      status: "False",
      reason: "RecordConflict",
      message:
        "status.example.com: left alone, its DNS already has A 192.0.2.1 (made by someone else)",
    });

    // A domain removed: its record goes; the foreign one stays.
    await patchAppSpec(ns, "site", spec(["www.example.com"]));
    await run(ns, "site", dnsPorts());
    expect(records()).toEqual([
      "status.example.com A 192.0.2.1 -",
      `www.example.com A 203.0.113.10 ${comment}`,
    ]);
    expect(
      (await getApp(ns, "site")).status?.conditions?.find((c) => c.type === "DNSRecords"),
    ).toMatchObject({
      status: "True",
      reason: "RecordsReady",
      message: "www.example.com → A 203.0.113.10",
    });

    // The App deleted: its records go with it, nobody else's.
    await api("DELETE", `/apis/plumb.dev/v1alpha1/namespaces/${ns}/apps/site`);
    const fin = await run(ns, "site", dnsPorts());
    expect(fin.outcome).toBe("Finalized");
    expect(records()).toEqual(["status.example.com A 192.0.2.1 -"]);
    // Every request carried the token; none was outside the zone's records.
    expect(cloudflare.requests.every((q) => q.authorization === `Bearer ${cloudflare.token}`)).toBe(
      true,
    );
    expect(
      cloudflare.requests.every((q) =>
        q.path.startsWith(`/zones/${cloudflare.zoneId}/dns_records`),
      ),
    ).toBe(true);
  });
});
