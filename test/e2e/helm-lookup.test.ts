// Helm charts as Flux and Argo CD users expect beyond `helm template`: lookup against the
// destination (read-only, the App's own namespace), postRenderers, valuesFrom.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createNodeEngines, type NodeEngines } from "../../src/engines/node.ts";
import { reconcileApp } from "../../src/reconcile/index.ts";
import { type GitServer, startGitServer } from "../support/git-server.ts";
import {
  api,
  createApp,
  createNamespace,
  getApp,
  getObject,
  patchAppSpec,
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

const logs: Array<Record<string, unknown>> = [];
const run = (ns: string, name: string, compare = false) =>
  reconcileApp(
    { namespace: ns, name },
    realPorts({ engines, log: (e) => logs.push(e) }),
    new Date(),
    { compare },
  );

async function newApp(ns: string, name: string, spec: Record<string, unknown>): Promise<void> {
  await createNamespace(ns);
  const res = await createApp(ns, name, spec);
  if (res.status !== 201) throw new Error(`create App: ${res.status} ${JSON.stringify(res.body)}`);
}

async function create(ns: string, kind: "configmaps" | "secrets", body: Record<string, unknown>) {
  await createNamespace(ns);
  await api("POST", `/api/v1/namespaces/${ns}/${kind}`, {
    apiVersion: "v1",
    kind: kind === "secrets" ? "Secret" : "ConfigMap",
    ...body,
  });
}

const get = (ns: string, kind: "configmaps" | "secrets", name: string) =>
  getObject(`/api/v1/namespaces/${ns}/${kind}/${name}`);
const decoded = (s: Awaited<ReturnType<typeof get>>, key: string) =>
  Buffer.from(((s?.["data"] ?? {}) as Record<string, string>)[key] ?? "", "base64").toString();

describe("Helm lookup", () => {
  it("keeps a generated password across runs with no second apply; another namespace's Secret looks absent; lookup: false renders as helm template", async () => {
    const ns = "helm-lookup";
    await create("helm-lookup-other", "secrets", {
      metadata: { name: "theirs" },
      stringData: { token: "not-for-this-app-0123" },
    });
    await create(ns, "configmaps", { metadata: { name: "given" }, data: { word: "from-cluster" } });
    const repo = await git.createRepo(
      "helm-lookup",
      {
        "Chart.yaml": "apiVersion: v2\nname: keep\nversion: 1.0.0\n",
        "templates/secret.yaml": [
          '{{- $s := lookup "v1" "Secret" .Release.Namespace "keep-pw" }}',
          "apiVersion: v1",
          "kind: Secret",
          "metadata:",
          "  name: keep-pw",
          "data:",
          "  pw: {{ if $s }}{{ $s.data.pw }}{{ else }}{{ randAlphaNum 16 | b64enc }}{{ end }}",
          "",
        ].join("\n"),
        "templates/peek.yaml": [
          "apiVersion: v1",
          "kind: ConfigMap",
          "metadata:",
          "  name: peek",
          "data:",
          '  theirs: {{ with (lookup "v1" "Secret" "helm-lookup-other" "theirs") }}"found"{{ else }}"absent"{{ end }}',
          '  word: {{ with (lookup "v1" "ConfigMap" .Release.Namespace "given") }}{{ .data.word | quote }}{{ else }}"none"{{ end }}',
          "",
        ].join("\n"),
      },
      { allowSha1InWant: true },
    );
    await newApp(ns, "keep", { source: { git: { url: repo.url, ref: "main" } } });

    const first = await run(ns, "keep");
    expect(first).toMatchObject({ outcome: "Reconciled", syncStatus: "Synced" });
    const secret = await get(ns, "secrets", "keep-pw");
    const pw = decoded(secret, "pw");
    expect(pw).toMatch(/^[A-Za-z0-9]{16}$/);
    expect((await get(ns, "configmaps", "peek"))?.["data"]).toEqual({
      theirs: "absent",
      word: "from-cluster",
    });
    expect(logs).toContainEqual({
      app: `${ns}/keep`,
      msg: "helm lookup answered as absent",
      lookup: "v1 Secret helm-lookup-other/theirs",
      why: "namespace helm-lookup-other is not the App's destination namespace helm-lookup",
    });

    // A full run (render, compare) finds the same Secret: nothing applied, the object unwritten.
    const second = await run(ns, "keep", true);
    expect(second).toMatchObject({ outcome: "Reconciled", syncStatus: "Synced" });
    const again = await get(ns, "secrets", "keep-pw");
    expect(decoded(again, "pw")).toBe(pw);
    expect(again?.metadata.resourceVersion).toBe(secret?.metadata.resourceVersion);
    expect(again?.metadata["managedFields"]).toEqual(secret?.metadata["managedFields"]);
    expect(second.requests.patch).toBe(0);
    expect(JSON.stringify(await getApp(ns, "keep"))).not.toContain(pw);

    // helm template's rendering: lookup returns nothing, so the password is generated anew.
    await patchAppSpec(ns, "keep", { source: { helm: { lookup: false } } });
    expect(await run(ns, "keep")).toMatchObject({ outcome: "Reconciled", syncStatus: "Synced" });
    expect(decoded(await get(ns, "secrets", "keep-pw"), "pw")).not.toBe(pw);
    expect((await get(ns, "configmaps", "peek"))?.["data"]).toEqual({
      theirs: "absent",
      word: "none",
    });
  });
});

describe("Helm postRenderers", () => {
  it("applies Kustomize patches and images over the chart's output, hooks as postRenderStrategy says, as Flux's HelmRelease does", async () => {
    const ns = "helm-post";
    const repo = await git.createRepo(
      "helm-post",
      {
        "Chart.yaml": "apiVersion: v2\nname: post\nversion: 1.0.0\n",
        "templates/cm.yaml":
          "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-cfg\ndata:\n  a: chart\n",
        "templates/hook.yaml": [
          "apiVersion: v1",
          "kind: ConfigMap",
          "metadata:",
          "  name: {{ .Release.Name }}-hook",
          "  annotations:",
          "    helm.sh/hook: pre-install,pre-upgrade",
          "    helm.sh/hook-delete-policy: before-hook-creation",
          "data:",
          "  a: chart",
          "",
        ].join("\n"),
        "templates/deploy.yaml": [
          "apiVersion: apps/v1",
          "kind: Deployment",
          "metadata:",
          "  name: {{ .Release.Name }}",
          "spec:",
          "  selector: {matchLabels: {app: web}}",
          "  template:",
          "    metadata: {labels: {app: web}}",
          "    spec:",
          "      containers: [{name: web, image: nginx:1.0}]",
          "",
        ].join("\n"),
      },
      { allowSha1InWant: true },
    );
    await newApp(ns, "web", {
      source: {
        git: { url: repo.url, ref: "main" },
        helm: {
          postRenderers: [
            {
              kustomize: {
                patches: [
                  {
                    target: { kind: "ConfigMap", name: "web-cfg" },
                    patch: "- op: add\n  path: /data/b\n  value: post-rendered\n",
                  },
                  {
                    patch:
                      "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  annotations:\n    team: platform\n",
                  },
                ],
                images: [{ name: "nginx", newTag: "1.27" }],
              },
            },
            {
              kustomize: {
                patches: [
                  {
                    target: { kind: "ConfigMap" },
                    patch: "- op: replace\n  path: /data/a\n  value: second\n",
                  },
                ],
              },
            },
          ],
        },
      },
    });
    expect(await run(ns, "web")).toMatchObject({ outcome: "Reconciled", syncStatus: "Synced" });
    expect((await get(ns, "configmaps", "web-cfg"))?.["data"]).toEqual({
      a: "second",
      b: "post-rendered",
    });
    const deploy = await getObject(`/apis/apps/v1/namespaces/${ns}/deployments/web`);
    expect(deploy?.metadata.annotations).toMatchObject({ team: "platform" });
    const spec = deploy?.["spec"] as {
      template: { spec: { containers: Array<{ image: string }> } };
    };
    expect(spec.template.spec.containers.map((c) => c.image)).toEqual(["nginx:1.27"]);
    // combined (Flux's default, Helm 4): the hook went through the post-renderers too.
    expect((await get(ns, "configmaps", "web-hook"))?.["data"]).toEqual({ a: "second" });

    // nohooks (Helm 3): hooks as the chart rendered them, the rest still post-rendered.
    await patchAppSpec(ns, "web", { source: { helm: { postRenderStrategy: "nohooks" } } });
    expect(await run(ns, "web")).toMatchObject({ outcome: "Reconciled", syncStatus: "Synced" });
    expect((await get(ns, "configmaps", "web-hook"))?.["data"]).toEqual({ a: "chart" });
    expect((await get(ns, "configmaps", "web-cfg"))?.["data"]).toEqual({
      a: "second",
      b: "post-rendered",
    });
  });
});

describe("Helm valuesFrom", () => {
  it("merges ConfigMap and Secret values in order under inline values; a change renders again; a missing one is named", async () => {
    const ns = "helm-values-from";
    const secretValue = "db-pass-0123456789";
    await create(ns, "configmaps", {
      metadata: { name: "web-values" },
      data: { "values.yaml": "greeting: from-configmap\nsize: small\ncolor: blue\n" },
    });
    await create(ns, "secrets", { metadata: { name: "web-db" }, stringData: { pw: secretValue } });
    const repo = await git.createRepo(
      "helm-values-from",
      {
        "Chart.yaml": "apiVersion: v2\nname: vf\nversion: 1.0.0\n",
        "values.yaml": "greeting: chart\nsize: chart\ncolor: chart\ndb: {}\n",
        "templates/cm.yaml": [
          "apiVersion: v1",
          "kind: ConfigMap",
          "metadata:",
          "  name: info",
          "data:",
          "  greeting: {{ .Values.greeting | quote }}",
          "  size: {{ .Values.size | quote }}",
          "  color: {{ .Values.color | quote }}",
          "",
        ].join("\n"),
        "templates/secret.yaml":
          "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\nstringData:\n  password: {{ .Values.db.password | quote }}\n",
      },
      { allowSha1InWant: true },
    );
    await newApp(ns, "web", {
      source: {
        git: { url: repo.url, ref: "main" },
        helm: {
          valuesFrom: [
            { kind: "ConfigMap", name: "web-values" },
            { kind: "Secret", name: "web-db", valuesKey: "pw", targetPath: "db.password" },
            { kind: "ConfigMap", name: "not-there", optional: true },
          ],
          values: { size: "inline" },
        },
      },
    });
    expect(await run(ns, "web")).toMatchObject({ outcome: "Reconciled", syncStatus: "Synced" });
    expect((await get(ns, "configmaps", "info"))?.["data"]).toEqual({
      greeting: "from-configmap",
      size: "inline",
      color: "blue",
    });
    expect(decoded(await get(ns, "secrets", "db"), "password")).toBe(secretValue);
    const synced = await getApp(ns, "web");
    expect(synced.status?.observedValuesDigest).toMatch(/^[0-9a-f]{16,}$/);
    expect(JSON.stringify(synced)).not.toContain(secretValue);

    // The ConfigMap changes, nothing else: the next run (no comparison owed) renders again.
    await api(
      "PATCH",
      `/api/v1/namespaces/${ns}/configmaps/web-values`,
      { data: { "values.yaml": "greeting: changed\ncolor: red\n" } },
      "application/merge-patch+json",
    );
    expect(await run(ns, "web")).toMatchObject({ outcome: "Reconciled", syncStatus: "Synced" });
    expect((await get(ns, "configmaps", "info"))?.["data"]).toEqual({
      greeting: "changed",
      size: "inline",
      color: "red",
    });
    expect((await getApp(ns, "web")).status?.observedValuesDigest).not.toBe(
      synced.status?.observedValuesDigest,
    );

    // A missing one that is not optional: the run fails naming it; nothing is pruned.
    await patchAppSpec(ns, "web", {
      source: { helm: { valuesFrom: [{ kind: "Secret", name: "gone" }] } },
    });
    const failed = await run(ns, "web");
    expect(failed.outcome).toBe("Failed");
    expect(failed.error).toContain(`Secret ${ns}/gone not found (spec.source.helm.valuesFrom[0])`);
    const app = await getApp(ns, "web");
    const ready = app.status?.conditions?.find((c) => c.type === "Ready");
    expect(ready).toMatchObject({ status: "False", reason: "SourceFailed" });
    expect(ready?.message).toContain(
      `Secret ${ns}/gone not found (spec.source.helm.valuesFrom[0])`,
    );
    expect(await get(ns, "configmaps", "info")).toBeDefined();
  });
});
