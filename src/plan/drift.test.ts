import { describe, expect, it } from "vitest";
import type { KubeObject, ManagedFieldsEntry } from "../core/index.ts";
import { ownersOf, serverDiff, suspect } from "./drift.ts";
import { ownedFieldsHash } from "./owned-fields.ts";

/** A Deployment as a manifest writes it: values the API server stores differently. */
const desired: KubeObject = {
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "web", namespace: "a", labels: { app: "web" }, creationTimestamp: null },
  spec: {
    replicas: 2,
    template: {
      spec: {
        containers: [
          {
            name: "web",
            image: "nginx:1",
            env: [],
            ports: [{ containerPort: 8080 }],
            resources: { requests: { cpu: "1000m", memory: "0.5Gi" } },
            readinessProbe: { httpGet: { path: "/", port: 8080 }, initialDelaySeconds: 0 },
          },
        ],
      },
    },
  },
};

/** plumb's Apply entry for `desired`, as the API server records it (env: [] is not tracked). */
const plumb: ManagedFieldsEntry = {
  manager: "plumb",
  operation: "Apply",
  apiVersion: "apps/v1",
  fieldsV1: {
    "f:metadata": { "f:labels": { "f:app": {} } },
    "f:spec": {
      "f:replicas": {},
      "f:template": {
        "f:spec": {
          "f:containers": {
            'k:{"name":"web"}': {
              ".": {},
              "f:image": {},
              "f:name": {},
              "f:ports": {
                'k:{"containerPort":8080,"protocol":"TCP"}': { ".": {}, "f:containerPort": {} },
              },
              "f:readinessProbe": {
                "f:httpGet": { "f:path": {}, "f:port": {} },
                "f:initialDelaySeconds": {},
              },
              "f:resources": { "f:requests": { "f:cpu": {}, "f:memory": {} } },
            },
          },
        },
      },
    },
  },
};

/** plumb's entry after another manager changed spec.replicas: the field is theirs now. */
const withoutReplicas: ManagedFieldsEntry = {
  ...plumb,
  fieldsV1: {
    ...plumb.fieldsV1,
    "f:spec": (({ "f:replicas": _r, ...rest }) => rest)(
      plumb.fieldsV1?.["f:spec"] as Record<string, unknown>,
    ),
  },
};

/** What the API server stored for `desired`: normalised quantities, zeros and empties omitted. */
function stored(
  over: { replicas?: number; cpu?: string; managedFields?: ManagedFieldsEntry[] } = {},
): KubeObject {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: {
      name: "web",
      namespace: "a",
      labels: { app: "web" },
      resourceVersion: "7",
      generation: 3,
      managedFields: over.managedFields ?? [plumb],
    },
    spec: {
      replicas: over.replicas ?? 2,
      template: {
        spec: {
          containers: [
            {
              name: "web",
              image: "nginx:1",
              ports: [{ containerPort: 8080, protocol: "TCP" }],
              resources: { requests: { cpu: over.cpu ?? "1", memory: "512Mi" } },
              readinessProbe: {
                httpGet: { path: "/", port: 8080, scheme: "HTTP" },
                timeoutSeconds: 1,
                periodSeconds: 10,
              },
              imagePullPolicy: "IfNotPresent",
            },
          ],
        },
      },
    },
    status: { replicas: 2 },
  };
}

const edit = (
  manager: string,
  fieldsV1: Record<string, unknown>,
  subresource?: string,
): ManagedFieldsEntry => ({
  manager,
  operation: "Update",
  fieldsV1,
  ...(subresource ? { subresource } : {}),
});
const cpuPath = {
  "f:spec": {
    "f:template": {
      "f:spec": {
        "f:containers": {
          'k:{"name":"web"}': { "f:resources": { "f:requests": { "f:cpu": {} } } },
        },
      },
    },
  },
};

describe("suspect", () => {
  it.each<[string, KubeObject, KubeObject, boolean, boolean]>([
    [
      "the applied form, values the server normalised (1000m, 0.5Gi, a zero, env: [])",
      desired,
      stored(),
      true,
      false,
    ],
    [
      "the applied form; another manager co-owns the cpu request written as 1",
      desired,
      stored({ managedFields: [plumb, { ...edit("other", cpuPath), operation: "Apply" }] }),
      true,
      false,
    ],
    [
      "another manager changed the cpu request (plumb no longer owns it)",
      desired,
      stored({
        cpu: "2",
        managedFields: [
          { ...plumb, fieldsV1: { "f:metadata": plumb.fieldsV1?.["f:metadata"] } },
          edit("other", cpuPath),
        ],
      }),
      true,
      true,
    ],
    [
      "kubectl scale changed replicas (ownership moved to it through the scale subresource)",
      desired,
      stored({
        replicas: 5,
        managedFields: [
          withoutReplicas,
          edit("kubectl", { "f:spec": { "f:replicas": {} } }, "scale"),
        ],
      }),
      true,
      true,
    ],
    [
      "a field someone removed (nobody owns it any more)",
      desired,
      stored({
        managedFields: [{ ...plumb, fieldsV1: { "f:metadata": plumb.fieldsV1?.["f:metadata"] } }],
      }),
      true,
      true,
    ],
    [
      "not the applied form: a value plumb owns may be a change not applied",
      desired,
      stored(),
      false,
      true,
    ],
  ])("%s → %s", async (_name, want, live, applied, expected) => {
    expect(await suspect(want, live, applied ? {} : undefined)).toBe(expected);
  });

  const cm = (data: Record<string, string>): KubeObject => ({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "c", namespace: "a" },
    data,
  });
  const cmLive = (data: Record<string, string>, owned: string[]): KubeObject => ({
    ...cm(data),
    metadata: {
      name: "c",
      namespace: "a",
      managedFields: [
        {
          manager: "plumb",
          operation: "Apply",
          fieldsV1: { "f:data": Object.fromEntries(owned.map((k) => [`f:${k}`, {}])) },
        },
      ],
    },
  });

  it("not the applied form: a key plumb owns that the desired form drops is suspect", async () => {
    expect(
      await suspect(
        cm({ key: "a" }),
        cmLive({ key: "a", legacy: "b" }, ["key", "legacy"]),
        undefined,
      ),
    ).toBe(true);
  });

  it("not the applied form but nothing it sets differs and nothing it drops: not suspect", async () => {
    expect(
      await suspect(cm({ key: "a" }), cmLive({ key: "a", other: "x" }, ["key"]), undefined),
    ).toBe(false);
  });

  it("ignores desired nulls, what the caller ignores, and a Secret's stringData once applied", async () => {
    const ns: KubeObject = {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: "team-a", labels: { "plumb.dev/app": "b" } },
    };
    const nsLive: KubeObject = {
      ...ns,
      metadata: { name: "team-a", labels: { "plumb.dev/app": "a" }, managedFields: [] },
    };
    expect(await suspect(ns, nsLive, {})).toBe(true);
    expect(
      await suspect(ns, nsLive, {}, { ignore: (p) => p === "metadata.labels.plumb.dev/app" }),
    ).toBe(false);
    const secret: KubeObject = {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "s" },
      stringData: { token: "x" },
    };
    const secretLive: KubeObject = {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "s", managedFields: [] },
      data: { token: "eA==" },
    };
    expect(await suspect(secret, secretLive, {})).toBe(false);
    expect(await suspect(secret, secretLive, undefined)).toBe(true);
  });
});

describe("suspect: a late write under plumb's own field manager", () => {
  // Run A applies rev2 (a=2) over a slow link and gives up; run B applies rev3 (a=3) and
  // records what the API server stored; then A's write lands: a=2, still owned by plumb.
  const rev3: KubeObject = {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "c", namespace: "a" },
    data: { a: "3" },
  };
  const plumbOwns = (...keys: string[]): ManagedFieldsEntry[] => [
    {
      manager: "plumb",
      operation: "Apply",
      apiVersion: "v1",
      fieldsV1: { "f:data": Object.fromEntries(keys.map((k) => [`f:${k}`, {}])) },
    },
  ];
  const liveCm = (data: Record<string, string>, keys = Object.keys(data)): KubeObject => ({
    ...rev3,
    metadata: { ...rev3.metadata, resourceVersion: "9", managedFields: plumbOwns(...keys) },
    data,
  });

  it("the applied form, but plumb's field holds an older revision's value: suspect", async () => {
    const owned = await ownedFieldsHash(liveCm({ a: "3" }));
    expect(await suspect(rev3, liveCm({ a: "2" }), { owned })).toBe(true);
  });

  it("the applied form, and plumb's field holds what its apply stored: not suspect", async () => {
    const owned = await ownedFieldsHash(liveCm({ a: "3" }));
    expect(await suspect(rev3, liveCm({ a: "3" }), { owned })).toBe(false);
  });

  it("an older revision's key the applied form dropped, written back late: suspect", async () => {
    const owned = await ownedFieldsHash(liveCm({ a: "3" }));
    expect(await suspect(rev3, liveCm({ a: "3", legacy: "x" }), { owned })).toBe(true);
  });

  it("the server's normalisation under a matching owned hash stays trusted: no dry run", async () => {
    const owned = await ownedFieldsHash(stored());
    expect(await suspect(desired, stored(), { owned })).toBe(false);
  });

  it("a late write to a normalised field (cpu 1 → 500m, owned by plumb): suspect", async () => {
    const owned = await ownedFieldsHash(stored());
    expect(await suspect(desired, stored({ cpu: "500m" }), { owned })).toBe(true);
  });

  it("a Secret whose data plumb wrote through stringData, overwritten late: suspect", async () => {
    const secret: KubeObject = {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "s" },
      stringData: { token: "new" },
    };
    const secretLive = (token: string): KubeObject => ({
      apiVersion: "v1",
      kind: "Secret",
      metadata: {
        name: "s",
        managedFields: [
          {
            manager: "plumb",
            operation: "Apply",
            apiVersion: "v1",
            fieldsV1: { "f:stringData": { "f:token": {} }, "f:data": { "f:token": {} } },
          },
        ],
      },
      data: { token },
    });
    const owned = await ownedFieldsHash(secretLive("bmV3"));
    expect(await suspect(secret, secretLive("bmV3"), { owned })).toBe(false);
    expect(await suspect(secret, secretLive("b2xk"), { owned })).toBe(true);
  });

  it("the dry run names the field with both values and no other manager", () => {
    const dryRun = liveCm({ a: "3" });
    expect(serverDiff(dryRun, liveCm({ a: "2" }))).toEqual([
      { path: "data.a", desired: "3", live: "2" },
    ]);
  });
});

describe("serverDiff", () => {
  it("is empty when the dry run stores what is live", () => {
    const dryRun = {
      ...stored(),
      metadata: { ...stored().metadata, generation: 4, managedFields: [] },
    };
    expect(serverDiff(dryRun, stored())).toEqual([]);
  });

  it("names each field applying would change, with the manager owning the live value", () => {
    const live = stored({
      replicas: 5,
      cpu: "2",
      managedFields: [
        plumb,
        edit("kubectl-edit", cpuPath),
        edit("kube-controller-manager", { "f:spec": { "f:replicas": {} } }, "scale"),
      ],
    });
    expect(serverDiff(stored(), live)).toEqual([
      { path: "spec.replicas", desired: "2", live: "5", manager: "kube-controller-manager" },
      {
        path: "spec.template.spec.containers[name=web].resources.requests.cpu",
        desired: "1",
        live: "2",
        manager: "kubectl-edit",
      },
    ]);
  });

  it("a field applying removes has no desired value; a container added is one entry", () => {
    const live: KubeObject = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "c", managedFields: [] },
      data: { key: "a", legacy: "b" },
    };
    expect(serverDiff({ ...live, data: { key: "a" } }, live)).toEqual([
      { path: "data.legacy", live: "b" },
    ]);
    const two = structuredClone(stored());
    const containers = (two["spec"] as { template: { spec: { containers: unknown[] } } }).template
      .spec.containers;
    containers.push({ name: "sidecar", image: "envoy:1" });
    expect(serverDiff(two, stored())).toEqual([
      {
        path: "spec.template.spec.containers[name=sidecar]",
        desired: '{"name":"sidecar","image":"envoy:1"}',
      },
    ]);
  });

  it("lists without names compare whole", () => {
    const ports = structuredClone(stored());
    const c = (
      ports["spec"] as { template: { spec: { containers: Array<Record<string, unknown>> } } }
    ).template.spec.containers[0]!;
    c["ports"] = [{ containerPort: 9090, protocol: "TCP" }];
    expect(serverDiff(ports, stored())).toEqual([
      {
        path: "spec.template.spec.containers[name=web].ports",
        desired: '[{"containerPort":9090,"protocol":"TCP"}]',
        live: '[{"containerPort":8080,"protocol":"TCP"}]',
      },
    ]);
  });

  it("never reports a Secret's values", () => {
    const live: KubeObject = {
      apiVersion: "v1",
      kind: "Secret",
      metadata: {
        name: "s",
        managedFields: [edit("kubectl-edit", { "f:data": { "f:password": {} } })],
      },
      data: { password: "Y2hhbmdlZA==" },
    };
    const drift = serverDiff({ ...live, data: { password: "aHVudGVyMg==" } }, live);
    expect(drift).toEqual([{ path: "data.password", manager: "kubectl-edit" }]);
    expect(JSON.stringify(drift)).not.toMatch(/aHVudGVyMg|Y2hhbmdlZA/);
  });

  it("leaves out what the caller ignores", () => {
    const ns = (app: string): KubeObject => ({
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: "team-a", labels: { "plumb.dev/app": app } },
    });
    expect(
      serverDiff(ns("b"), ns("a"), { ignore: (p) => p === "metadata.labels.plumb.dev/app" }),
    ).toEqual([]);
  });
});

describe("ownersOf", () => {
  it("matches a list item keyed by more than its name by the name", () => {
    const entry: ManagedFieldsEntry = {
      manager: "m",
      fieldsV1: { "f:ports": { 'k:{"name":"http","port":80}': { "f:port": {} } } },
    };
    expect(ownersOf([entry], ["f:ports", 'k:{"name":"http"}', "f:port"])).toEqual(["m"]);
    expect(ownersOf([entry], ["f:ports", 'k:{"name":"grpc"}', "f:port"])).toEqual([]);
  });
});
