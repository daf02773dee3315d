import { describe, expect, it } from "vitest";
import type { IgnoreDifference } from "../app/index.ts";
import type { KubeObject } from "../core/index.ts";
import { suspect } from "./drift.ts";
import { ignoreRulesFor, keepIgnoredLive, parsePointer } from "./ignore.ts";

const desired: KubeObject = {
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "web", namespace: "a", annotations: { "team/owner": "a", keep: "x" } },
  spec: {
    replicas: 2,
    template: {
      spec: {
        containers: [
          { name: "web", image: "nginx:1" },
          { name: "side", image: "busybox:1" },
        ],
      },
    },
  },
};

const live: KubeObject = {
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: {
    name: "web",
    namespace: "a",
    annotations: { keep: "y" },
    managedFields: [
      {
        manager: "plumb",
        operation: "Apply",
        fieldsV1: { "f:spec": { "f:template": { "f:spec": { "f:containers": {} } } } },
      },
      {
        manager: "operator",
        operation: "Update",
        fieldsV1: {
          "f:spec": {
            "f:template": {
              "f:spec": {
                "f:containers": {
                  'k:{"name":"side"}': { ".": {}, "f:image": {} },
                },
              },
            },
          },
        },
      },
      {
        manager: "operator",
        operation: "Update",
        subresource: "status",
        fieldsV1: { "f:status": { "f:replicas": {} } },
      },
    ],
  },
  spec: {
    replicas: 5,
    template: {
      spec: {
        containers: [
          { name: "web", image: "nginx:2" },
          { name: "side", image: "busybox:9" },
        ],
      },
    },
  },
  status: { replicas: 5 },
};

const rule = (r: Partial<IgnoreDifference>): IgnoreDifference => ({ kind: "Deployment", ...r });

describe("ignoreRulesFor (Argo CD's matching)", () => {
  it("matches group and kind as globs, name and namespace exactly", () => {
    const rules = [
      rule({ group: "apps" }),
      rule({ group: "*", kind: "*", name: "web" }),
      rule({ group: "apps", namespace: "b" }),
      rule({ group: "", kind: "Deployment" }),
      rule({ group: "app?", kind: "Deploy*", name: "other" }),
    ];
    expect(ignoreRulesFor(rules, desired)).toEqual([rules[0], rules[1]]);
  });

  it("takes an absent group for the core group", () => {
    const svc: KubeObject = { apiVersion: "v1", kind: "Service", metadata: { name: "s" } };
    expect(ignoreRulesFor([{ kind: "Service" }], svc)).toHaveLength(1);
    expect(ignoreRulesFor([{ kind: "Service", group: "apps" }], svc)).toHaveLength(0);
  });
});

describe("parsePointer", () => {
  it("unescapes ~1 and ~0 (RFC 6901)", () => {
    expect(parsePointer("/metadata/annotations/a~1b~0c")).toEqual([
      "metadata",
      "annotations",
      "a/b~c",
    ]);
  });
});

describe("keepIgnoredLive", () => {
  it("gives an ignored field the live value and leaves the rest as desired", () => {
    const out = keepIgnoredLive(desired, live, [
      rule({ group: "apps", jsonPointers: ["/spec/replicas"] }),
    ]);
    expect(out.spec).toEqual({ ...(desired.spec as object), replicas: 5 });
    expect(desired.spec).toMatchObject({ replicas: 2 }); // the input is not changed
  });

  it("follows list indexes and escaped keys; leaves out a field not set live", () => {
    const out = keepIgnoredLive(desired, live, [
      rule({
        group: "apps",
        jsonPointers: [
          "/spec/template/spec/containers/0/image",
          "/metadata/annotations/team~1owner",
        ],
      }),
    ]);
    const containers = (out.spec as { template: { spec: { containers: unknown[] } } }).template.spec
      .containers;
    expect(containers).toEqual([
      { name: "web", image: "nginx:2" },
      { name: "side", image: "busybox:1" },
    ]);
    expect(out.metadata.annotations).toEqual({ keep: "x" });
  });

  it("sets nothing desired does not set, and never touches status", () => {
    const bare: KubeObject = { ...desired, spec: { template: desired.spec } };
    const out = keepIgnoredLive(bare, live, [
      rule({ group: "apps", jsonPointers: ["/spec/replicas", "/status/replicas", "/nope/x"] }),
    ]);
    expect(out).toEqual(bare);
  });

  it("takes the live value of every field a listed manager owns (list items by key)", () => {
    const out = keepIgnoredLive(desired, live, [
      rule({ group: "apps", managedFieldsManagers: ["operator"] }),
    ]);
    const containers = (out.spec as { template: { spec: { containers: unknown[] } } }).template.spec
      .containers;
    expect(containers).toEqual([
      { name: "web", image: "nginx:1" },
      { name: "side", image: "busybox:9" },
    ]);
    expect((out.spec as { replicas: number }).replicas).toBe(2);
  });

  it("returns the desired object itself when no rule matches", () => {
    expect(keepIgnoredLive(desired, live, [rule({ group: "batch" })])).toBe(desired);
    expect(keepIgnoredLive(desired, live, undefined)).toBe(desired);
  });

  it("makes an ignored difference no longer suspect, while another still is", async () => {
    const replicasOnly: KubeObject = {
      ...desired,
      spec: { ...(desired.spec as object), replicas: 5 },
    };
    expect(await suspect(desired, replicasOnly, undefined)).toBe(true);
    const rules = [rule({ group: "apps", jsonPointers: ["/spec/replicas"] })];
    expect(
      await suspect(keepIgnoredLive(desired, replicasOnly, rules), replicasOnly, undefined),
    ).toBe(false);
    expect(await suspect(keepIgnoredLive(desired, live, rules), live, undefined)).toBe(true);
  });
});
