// Helm charts rendered by Helm's own engine: from Git (argocd-example-apps'
// helm-guestbook), from an HTTP chart repository and from an OCI registry; hooks; refusals.
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createNodeEngines, type NodeEngines } from "../../src/engines/node.ts";
import { reconcileApp } from "../../src/reconcile/index.ts";
import { createChartPort } from "../../src/source/chart.ts";
import {
  fixtureFiles,
  type GitServer,
  REAL_FIXTURES,
  startGitServer,
} from "../support/git-server.ts";
import { type HelmRepo, packageChart, startHelmRepo } from "../support/helm-repo.ts";
import { startRegistry, type TestRegistry } from "../support/registry.ts";
import {
  api,
  createApp,
  createNamespace,
  getApp,
  getObject,
  inventoryRefs,
  patchAppSpec,
  realPorts,
} from "./support.ts";

let git: GitServer;
let engines: NodeEngines;
let charts: HelmRepo;
let registry: TestRegistry;
beforeAll(async () => {
  git = await startGitServer();
  engines = createNodeEngines();
  charts = await startHelmRepo({ basic: "reader:s3cret-pass" });
  registry = await startRegistry({ auth: "bearer", username: "robot", password: "oci-pass" });
});
afterAll(async () => {
  await engines?.close();
  await charts?.stop();
  await registry?.stop();
  await git?.stop();
});

const run = (ns: string, name: string, extra = {}) =>
  reconcileApp(
    { namespace: ns, name },
    realPorts({ engines, charts: createChartPort(), ...extra }),
    new Date(),
  );

async function newApp(ns: string, name: string, spec: Record<string, unknown>): Promise<void> {
  await createNamespace(ns);
  const res = await createApp(ns, name, spec);
  if (res.status !== 201) throw new Error(`create App: ${res.status} ${JSON.stringify(res.body)}`);
}

async function secret(ns: string, name: string, data: Record<string, string>): Promise<void> {
  await createNamespace(ns);
  await api("POST", `/api/v1/namespaces/${ns}/secrets`, {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name },
    stringData: data,
  });
}

/** A small chart: a ConfigMap showing what the render saw. */
function chart(name: string, version: string, extra: Record<string, string> = {}) {
  return {
    "Chart.yaml": `apiVersion: v2\nname: ${name}\nversion: ${version}\n`,
    "values.yaml": "greeting: hello\n",
    "templates/cm.yaml": [
      "apiVersion: v1",
      "kind: ConfigMap",
      "metadata:",
      "  name: {{ .Release.Name }}-info",
      "data:",
      "  chart: {{ .Chart.Name }}-{{ .Chart.Version }}",
      "  greeting: {{ .Values.greeting | quote }}",
      "  namespace: {{ .Release.Namespace }}",
      "  kube: {{ .Capabilities.KubeVersion.Version }}",
      '  apps: {{ .Capabilities.APIVersions.Has "apps/v1/Deployment" | quote }}',
      '  fancy: {{ .Capabilities.APIVersions.Has "fancy.example.com/v9" | quote }}',
      '  lookup: {{ lookup "v1" "Namespace" "" "default" | len | quote }}',
      "",
    ].join("\n"),
    ...extra,
  };
}

const cmData = async (ns: string, name: string) =>
  (await getObject(`/api/v1/namespaces/${ns}/configmaps/${name}`))?.["data"] as
    | Record<string, string>
    | undefined;

describe("Helm charts from Git", () => {
  it("renders helm-guestbook like helm template; valuesFiles change what lands", async () => {
    const repo = await git.createRepo(
      "helm-guestbook",
      { ...fixtureFiles(join(REAL_FIXTURES, "helm-guestbook")), "README.md": "x\n" },
      { allowSha1InWant: true },
    );
    await newApp("helm-gb", "gb", { source: { git: { url: repo.url, ref: "main", path: "." } } });
    const first = await run("helm-gb", "gb");
    expect(first).toMatchObject({
      outcome: "Reconciled",
      syncStatus: "Synced",
      revision: await repo.head(),
    });
    const app = await getApp("helm-gb", "gb");
    expect(inventoryRefs(app)).toEqual([
      { apiVersion: "v1", kind: "Service", namespace: "helm-gb", name: "gb-helm-guestbook" },
      {
        apiVersion: "apps/v1",
        kind: "Deployment",
        namespace: "helm-gb",
        name: "gb-helm-guestbook",
      },
    ]);
    const svc = await getObject("/api/v1/namespaces/helm-gb/services/gb-helm-guestbook");
    expect(svc?.["spec"]).toMatchObject({ type: "ClusterIP" });
    expect(svc?.metadata.labels).toMatchObject({
      release: "gb",
      chart: "helm-guestbook-0.1.0",
      heritage: "Helm",
    });

    await patchAppSpec("helm-gb", "gb", {
      source: { helm: { valuesFiles: ["values-production.yaml"], values: { replicaCount: 2 } } },
    });
    const second = await run("helm-gb", "gb");
    expect(second).toMatchObject({
      outcome: "Reconciled",
      syncStatus: "Synced",
      revision: await repo.head(),
    });
    const after = await getApp("helm-gb", "gb");
    expect(after.status?.objectHash).not.toBe(app.status?.objectHash);
    const prod = await getObject("/api/v1/namespaces/helm-gb/services/gb-helm-guestbook");
    expect(prod?.["spec"]).toMatchObject({ type: "LoadBalancer" });
    const deploy = await getObject(
      "/apis/apps/v1/namespaces/helm-gb/deployments/gb-helm-guestbook",
    );
    expect(deploy?.["spec"]).toMatchObject({ replicas: 2 });
  });

  it("gives templates the destination's capabilities, nothing for a lookup of another Namespace, honours .helmignore and vendored subcharts", async () => {
    const version = (await api("GET", "/version")) as { gitVersion: string };
    const repo = await git.createRepo(
      "helm-caps",
      {
        ...Object.fromEntries(
          Object.entries(chart("caps", "0.2.0")).map(([p, c]) => [`chart/${p}`, c]),
        ),
        "chart/.helmignore": "# as helm package would skip it\ntemplates/skipped.yaml\n",
        "chart/templates/skipped.yaml":
          "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: skipped\n",
        "chart/charts/sub/Chart.yaml": "apiVersion: v2\nname: sub\nversion: 1.0.0\n",
        "chart/charts/sub/templates/cm.yaml":
          "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: sub-{{ .Values.word }}\n",
        "chart/charts/sub/values.yaml": "word: default\n",
        "values/prod.yaml": "greeting: from-prod\nsub:\n  word: vendored\n",
      },
      { allowSha1InWant: true },
    );
    await newApp("helm-caps", "web", {
      source: {
        git: { url: repo.url, ref: "main", path: "chart" },
        helm: { releaseName: "rel", valuesFiles: ["../values/prod.yaml"] },
      },
      destination: { namespace: "helm-caps" },
    });
    expect((await run("helm-caps", "web")).outcome).toBe("Reconciled");
    expect(await cmData("helm-caps", "rel-info")).toEqual({
      chart: "caps-0.2.0",
      greeting: "from-prod",
      namespace: "helm-caps",
      kube: version.gitVersion,
      apps: "true",
      fancy: "false",
      lookup: "0",
    });
    expect(await getObject("/api/v1/namespaces/helm-caps/configmaps/sub-vendored")).toBeDefined();
    expect(await getObject("/api/v1/namespaces/helm-caps/configmaps/skipped")).toBeUndefined();
  });

  it("runs hooks as Argo CD does: pre before the rest (Jobs waited for), post after, tests never; recreates them", async () => {
    const job = (name: string, hook: string, weight = "0", image = "busybox") =>
      [
        "apiVersion: batch/v1",
        "kind: Job",
        "metadata:",
        `  name: ${name}`,
        "  annotations:",
        `    helm.sh/hook: ${hook}`,
        `    helm.sh/hook-weight: "${weight}"`,
        "    helm.sh/hook-delete-policy: before-hook-creation",
        "spec:",
        "  backoffLimit: 0",
        "  template:",
        "    spec:",
        "      restartPolicy: Never",
        `      containers: [{name: main, image: "${image}"}]`,
        "",
      ].join("\n");
    const files = {
      "Chart.yaml": "apiVersion: v2\nname: hooks\nversion: 1.0.0\n",
      "values.yaml": "migrateImage: busybox\n",
      "templates/cm.yaml":
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  v: '{{ .Values.v | default 1 }}'\n",
      "templates/migrate.yaml": job(
        "migrate",
        "pre-install,pre-upgrade",
        "-1",
        "{{ .Values.migrateImage }}",
      ),
      "templates/seed.yaml": job("seed", "pre-install", "5"),
      "templates/notify.yaml": job("notify", "post-install,post-upgrade"),
      "templates/tests/test.yaml":
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: smoke\n  annotations:\n    helm.sh/hook: test\nspec:\n  containers: [{name: t, image: busybox}]\n",
    };
    const repo = await git.createRepo("helm-hooks", files, { allowSha1InWant: true });
    await newApp("helm-hooks", "app", { source: { git: { url: repo.url, ref: "main" } } });
    const first = await run("helm-hooks", "app");
    expect(first).toMatchObject({ outcome: "Reconciled", syncStatus: "Synced" });
    const get = async (kind: "jobs" | "cm", name: string) =>
      getObject(
        kind === "jobs"
          ? `/apis/batch/v1/namespaces/helm-hooks/jobs/${name}`
          : `/api/v1/namespaces/helm-hooks/configmaps/${name}`,
      );
    const migrate = await get("jobs", "migrate");
    const seed = await get("jobs", "seed");
    const cm = await get("cm", "app");
    const notify = await get("jobs", "notify");
    const completed = (j: typeof migrate) =>
      Date.parse(((j?.["status"] ?? {}) as { completionTime?: string }).completionTime ?? "");
    const created = (o: typeof migrate) => Date.parse(o?.metadata["creationTimestamp"] as string);
    // weight -1 finishes before weight 5 starts; both before the rest; post after the rest
    expect(completed(migrate)).toBeLessThanOrEqual(created(seed));
    expect(completed(seed)).toBeLessThanOrEqual(created(cm));
    expect(created(cm)).toBeLessThanOrEqual(created(notify));
    expect(await getObject("/api/v1/namespaces/helm-hooks/pods/smoke")).toBeUndefined();
    expect(
      (await getApp("helm-hooks", "app")).status?.inventory?.map((r) => r.name).sort(),
    ).toEqual(["app", "migrate", "notify", "seed"]);

    // A new sync recreates before-hook-creation hooks (a new Job, so it runs again).
    await patchAppSpec("helm-hooks", "app", { source: { helm: { values: { v: 2 } } } });
    expect((await run("helm-hooks", "app")).outcome).toBe("Reconciled");
    expect((await get("jobs", "migrate"))?.metadata.uid).not.toBe(migrate?.metadata.uid);
    expect((await get("cm", "app"))?.["data"]).toEqual({ v: "2" });

    // A failing pre hook stops the sync: the rest is not applied, nothing is pruned.
    await patchAppSpec("helm-hooks", "app", {
      source: { helm: { values: { v: 3, migrateImage: "busybox:fail" } } },
    });
    const failed = await run("helm-hooks", "app");
    expect(failed.outcome).toBe("Failed");
    expect(failed.error).toContain("hook Job helm-hooks/migrate failed");
    expect((await get("cm", "app"))?.["data"]).toEqual({ v: "2" });
    expect((await getApp("helm-hooks", "app")).status?.inventory).toHaveLength(4);
  });

  it("refuses undeclared dependencies, a values file outside the repository, and reports template errors with file and line", async () => {
    const repo = await git.createRepo("helm-refuse", chart("web", "1.0.0"), {
      allowSha1InWant: true,
    });
    await newApp("helm-refuse", "web", { source: { git: { url: repo.url, ref: "main" } } });
    expect((await run("helm-refuse", "web")).outcome).toBe("Reconciled");
    const before = (await getApp("helm-refuse", "web")).status!;

    const expectRefused = async (message: string) => {
      const res = await run("helm-refuse", "web");
      expect(res.outcome).toBe("Failed");
      expect(res.error).toContain(message);
      const now = (await getApp("helm-refuse", "web")).status!;
      expect(now.inventory).toEqual(before.inventory);
      expect(now.revision).toBe(before.revision);
      expect((await cmData("helm-refuse", "web-info"))?.["greeting"]).toBe("hello");
    };
    await repo.commit({
      "Chart.yaml":
        "apiVersion: v2\nname: web\nversion: 1.0.1\ndependencies:\n  - name: redis\n    version: 19.0.0\n    repository: https://charts.example.com\n",
      "values.yaml": "greeting: changed\n",
    });
    await expectRefused(
      "RenderFailed: .: web: dependencies in Chart.yaml are not vendored in charts/: redis 19.0.0 (https://charts.example.com)",
    );
    await repo.commit({ "Chart.yaml": "apiVersion: v2\nname: web\nversion: 1.0.2\n" });
    await patchAppSpec("helm-refuse", "web", {
      source: { helm: { valuesFiles: ["../other/values.yaml"] } },
    });
    await expectRefused(
      'RenderFailed: .: values file "../other/values.yaml" (spec.source.helm.valuesFiles) is outside the repository',
    );
    await patchAppSpec("helm-refuse", "web", { source: { helm: { valuesFiles: [] } } });
    await repo.commit({ "templates/bad.yaml": "a: 1\nb: {{ .Values.greeting | nosuchfunc }}\n" });
    await expectRefused('function "nosuchfunc" not defined');
    const res = await run("helm-refuse", "web");
    expect(res.error).toContain("web/templates/bad.yaml:2");
  });

  it("stops a template that loops past the time limit", async () => {
    const repo = await git.createRepo(
      "helm-loop",
      {
        "Chart.yaml": "apiVersion: v2\nname: loop\nversion: 1.0.0\n",
        "templates/cm.yaml":
          "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n{{- range $i := until 100000 }}{{- range $j := until 100000 }}{{- end }}{{- end }}\n",
      },
      { allowSha1InWant: true },
    );
    await newApp("helm-loop", "loop", { source: { git: { url: repo.url, ref: "main" } } });
    // 10^10 iterations never finish within the limit; a one-object chart fits in it however
    // loaded the machine is (only the render counts against the limit).
    const fast = createNodeEngines({ timeoutMs: 10_000 });
    try {
      const res = await run("helm-loop", "loop", { engines: fast });
      expect(res.outcome).toBe("Failed");
      expect(res.error).toBe(
        "RenderFailed: .: render timed out: helm template did not finish within 10s (the render's limit, PLUMB_RENDER_TIMEOUT; loading the engine is not counted); the engine was restarted",
      );
      // Transient: retried with backoff, nothing in the source to blame.
      const stalled = (await getApp("helm-loop", "loop")).status?.conditions?.find(
        (c) => c.type === "Stalled",
      );
      expect(stalled).toMatchObject({
        status: "False",
        message: "transient; retrying with backoff",
      });
      // A fresh helper was loaded when the render was stopped: the next render loads nothing.
      expect(fast.stats().helm.loads).toBe(2);
      // The engine restarts for the next render.
      await repo.commit({
        "templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n",
      });
      expect((await run("helm-loop", "loop", { engines: fast })).outcome).toBe("Reconciled");
      expect(fast.stats().helm).toMatchObject({ loads: 2, renders: 1 });
    } finally {
      await fast.close();
    }
  });
});

describe("Helm charts from repositories", () => {
  it("an HTTP repository: a semver range picks the highest match, digest checked, credentials from a Secret", async () => {
    for (const v of ["1.3.9", "1.4.0", "1.4.2", "2.0.0"])
      charts.add({ name: "web", version: v, files: chart("web", v) });
    await secret("helm-repo", "charts", { username: "reader", password: "s3cret-pass" });
    await newApp("helm-repo", "web", {
      source: {
        chart: {
          repository: charts.url,
          name: "web",
          version: "~1.4",
          secretRef: { name: "charts" },
        },
        helm: { values: { greeting: "inline" } },
      },
    });
    const first = await run("helm-repo", "web");
    expect(first.outcome).toBe("Reconciled");
    expect(first.revision).toMatch(/^1\.4\.2@sha256:[0-9a-f]{64}$/);
    expect((await getApp("helm-repo", "web")).status?.revision).toBe(first.revision);
    expect(await cmData("helm-repo", "web-info")).toMatchObject({
      chart: "web-1.4.2",
      greeting: "inline",
    });
    expect(charts.requests).toContain("GET /charts/web-1.4.2.tgz auth");

    charts.add({ name: "web", version: "1.4.3", files: chart("web", "1.4.3") });
    const second = await run("helm-repo", "web");
    expect(second.revision).toMatch(/^1\.4\.3@sha256:/);
    expect((await cmData("helm-repo", "web-info"))?.["chart"]).toBe("web-1.4.3");

    // A tampered index: the downloaded chart does not match the digest it lists.
    charts.add({
      name: "web",
      version: "1.4.4",
      files: chart("web", "1.4.4"),
      digest: "0".repeat(64),
    });
    const tampered = await run("helm-repo", "web");
    expect(tampered.outcome).toBe("Failed");
    expect(tampered.error).toContain(
      `differs from sha256:${"0".repeat(64)} (the repository's index)`,
    );
    expect((await cmData("helm-repo", "web-info"))?.["chart"]).toBe("web-1.4.3");

    await patchAppSpec("helm-repo", "web", { source: { chart: { secretRef: null } } });
    const anonymous = await run("helm-repo", "web");
    expect(anonymous.error).toMatch(
      /authentication failed for http:\/\/127\.0\.0\.1:\d+\/index\.yaml \(HTTP 401\)/,
    );
    expect(JSON.stringify(await getApp("helm-repo", "web"))).not.toContain("s3cret-pass");
  });

  it("an OCI registry: the chart layer of the tag a range picks, with bearer auth", async () => {
    const push = (version: string) => {
      const layer = packageChart("podinfo", chart("podinfo", version));
      const config = new TextEncoder().encode(JSON.stringify({ name: "podinfo", version }));
      return registry.push("charts/podinfo", version.replace("+", "_"), {
        schemaVersion: 2,
        mediaType: "application/vnd.oci.image.manifest.v1+json",
        config: {
          mediaType: "application/vnd.cncf.helm.config.v1+json",
          digest: registry.pushBlob("charts/podinfo", config),
          size: config.length,
        },
        layers: [
          {
            mediaType: "application/vnd.cncf.helm.chart.content.v1.tar+gzip",
            digest: registry.pushBlob("charts/podinfo", layer),
            size: layer.length,
          },
        ],
      });
    };
    push("6.5.0");
    const best = push("6.7.1");
    push("7.0.0");
    await secret("helm-oci", "registry", { username: "robot", password: "oci-pass" });
    await newApp("helm-oci", "podinfo", {
      source: {
        chart: {
          repository: `oci://${registry.host}/charts`,
          name: "podinfo",
          version: ">=6 <7",
          secretRef: { name: "registry" },
        },
      },
    });
    const res = await run("helm-oci", "podinfo");
    expect(res).toMatchObject({ outcome: "Reconciled", revision: `6.7.1@${best}` });
    expect(await cmData("helm-oci", "podinfo-info")).toMatchObject({ chart: "podinfo-6.7.1" });
    expect(registry.requests.some((r) => r.startsWith("GET /v2/charts/podinfo/tags/list"))).toBe(
      true,
    );

    await patchAppSpec("helm-oci", "podinfo", { source: { chart: { version: "7.0.0" } } });
    const exact = await run("helm-oci", "podinfo");
    expect(exact.revision).toMatch(/^7\.0\.0@sha256:/);
    expect((await cmData("helm-oci", "podinfo-info"))?.["chart"]).toBe("podinfo-7.0.0");
  });
});
