// The scenarios client-go's csaupgrade covers (direct conversion, merge into an existing Apply
// entry, entries of other apiVersions, several managers, nothing to do), on plumb's own data.
import { describe, expect, it } from "vitest";
import type { ManagedFieldsEntry } from "../core/index.ts";
import {
  CLIENT_SIDE_MANAGERS,
  otherManager,
  unionFields,
  upgradeManagedFields,
} from "./managed-fields.ts";

const CSA = "kubectl-client-side-apply";
const lastApplied = { "f:kubectl.kubernetes.io/last-applied-configuration": {} };
const entry = (
  manager: string,
  operation: string,
  fieldsV1: Record<string, unknown>,
  more: Partial<ManagedFieldsEntry> = {},
): ManagedFieldsEntry => ({
  apiVersion: "v1",
  fieldsType: "FieldsV1",
  fieldsV1,
  manager,
  operation,
  time: "2026-11-30T10:00:00Z",
  ...more,
});

describe("upgradeManagedFields (client-go csaupgrade)", () => {
  it("no Apply entry yet: the client-side entry becomes plumb's Apply entry, fields and time kept", () => {
    const fields = {
      "f:data": { ".": {}, "f:GREETING": {}, "f:legacy": {} },
      "f:metadata": { "f:annotations": { ".": {}, ...lastApplied } },
    };
    expect(upgradeManagedFields([entry(CSA, "Update", fields)], [CSA], "plumb")).toEqual([
      entry("plumb", "Apply", fields),
    ]);
  });

  it("an Apply entry exists: the client-side fields are merged into it and the entry removed", () => {
    const out = upgradeManagedFields(
      [
        entry("plumb", "Apply", { "f:data": { ".": {}, "f:GREETING": {} } }, { time: "T2" }),
        entry(CSA, "Update", {
          "f:data": { ".": {}, "f:GREETING": {}, "f:legacy": {} },
          "f:metadata": { "f:annotations": { ".": {}, ...lastApplied } },
        }),
      ],
      [CSA],
      "plumb",
    );
    expect(out).toEqual([
      entry(
        "plumb",
        "Apply",
        {
          "f:data": { ".": {}, "f:GREETING": {}, "f:legacy": {} },
          "f:metadata": { "f:annotations": { ".": {}, ...lastApplied } },
        },
        { time: "T2" },
      ),
    ]);
  });

  it("only the client-side entry of the Apply entry's apiVersion is merged; the others are dropped", () => {
    const out = upgradeManagedFields(
      [
        entry("plumb", "Apply", { "f:data": { "f:a": {} } }, { apiVersion: "v2" }),
        entry(CSA, "Update", { "f:data": { "f:b": {} } }, { apiVersion: "v1" }),
        entry(CSA, "Update", { "f:data": { "f:c": {} } }, { apiVersion: "v2" }),
        entry(CSA, "Update", { "f:data": { "f:d": {} } }, { apiVersion: "v3" }),
      ],
      [CSA],
      "plumb",
    );
    expect(out).toEqual([
      entry("plumb", "Apply", { "f:data": { "f:a": {}, "f:c": {} } }, { apiVersion: "v2" }),
    ]);
  });

  it("several managers: each is merged in turn; other managers and subresources stay", () => {
    const status = entry(
      "kube-controller-manager",
      "Update",
      { "f:status": { "f:replicas": {} } },
      {
        subresource: "status",
      },
    );
    const revision = entry("kube-controller-manager", "Update", {
      "f:metadata": { "f:annotations": { "f:deployment.kubernetes.io/revision": {} } },
    });
    const out = upgradeManagedFields(
      [
        entry("helm", "Update", { "f:spec": { "f:replicas": {} } }),
        revision,
        status,
        entry(CSA, "Update", { "f:spec": { "f:template": { "f:spec": { "f:dnsPolicy": {} } } } }),
      ],
      CLIENT_SIDE_MANAGERS,
      "plumb",
    );
    // kubectl's entry (first in CLIENT_SIDE_MANAGERS) becomes plumb's, in its place; helm's joins it.
    expect(out).toEqual([
      revision,
      status,
      entry("plumb", "Apply", {
        "f:spec": { "f:replicas": {}, "f:template": { "f:spec": { "f:dnsPolicy": {} } } },
      }),
    ]);
  });

  it("nothing to migrate: undefined (no patch to send), and the input is left as it was", () => {
    const entries = [entry("plumb", "Apply", { "f:data": { "f:a": {} } })];
    const before = JSON.stringify(entries);
    expect(upgradeManagedFields(entries, [CSA], "plumb")).toBeUndefined();
    expect(upgradeManagedFields([entry("other", "Update", {})], [CSA], "plumb")).toBeUndefined();
    expect(upgradeManagedFields(undefined, [CSA], "plumb")).toBeUndefined();
    upgradeManagedFields(
      [...entries, entry(CSA, "Update", { "f:data": { "f:b": {} } })],
      [CSA],
      "plumb",
    );
    expect(JSON.stringify(entries)).toBe(before);
  });

  it("a subresource's entries migrate only when asked for", () => {
    const status = entry(
      "kubectl-edit",
      "Update",
      { "f:status": { "f:x": {} } },
      { subresource: "status" },
    );
    expect(upgradeManagedFields([status], ["kubectl-edit"], "plumb")).toBeUndefined();
    expect(upgradeManagedFields([status], ["kubectl-edit"], "plumb", "status")).toEqual([
      { ...status, manager: "plumb", operation: "Apply" },
    ]);
  });
});

describe("unionFields", () => {
  it("is the union of every path, nested", () => {
    expect(
      unionFields(
        { "f:a": { ".": {}, "f:b": {} }, "f:x": {} },
        { "f:a": { "f:c": {}, 'k:{"name":"web"}': { ".": {} } }, "f:y": {} },
      ),
    ).toEqual({
      "f:a": { ".": {}, "f:b": {}, "f:c": {}, 'k:{"name":"web"}': { ".": {} } },
      "f:x": {},
      "f:y": {},
    });
  });
});

describe("otherManager: who else manages a live object (undefined: made by hand with kubectl)", () => {
  const m = (manager: string, subresource?: string): ManagedFieldsEntry => ({
    manager,
    operation: "Update",
    ...(subresource ? { subresource } : {}),
  });
  it.each<
    [
      string,
      ManagedFieldsEntry[] | undefined,
      Record<string, string>,
      Record<string, string>,
      string | undefined,
    ]
  >([
    ["kubectl client-side apply only", [m("kubectl-client-side-apply")], {}, {}, undefined],
    [
      "kubectl verbs",
      [m("kubectl-create"), m("kubectl-edit"), m("kubectl-label"), m("kubectl")],
      {},
      {},
      undefined,
    ],
    ["no managed fields (made before they existed)", undefined, {}, {}, undefined],
    ["before-first-apply", [m("before-first-apply")], {}, {}, undefined],
    [
      "a controller on the status subresource does not count",
      [m("kubectl-client-side-apply"), m("kube-controller-manager", "status")],
      {},
      {},
      undefined,
    ],
    ["Helm's field manager", [m("helm")], {}, {}, 'field manager "helm"'],
    [
      "Argo CD's client-side sync",
      [m("argocd-controller")],
      {},
      {},
      'field manager "argocd-controller"',
    ],
    [
      "another server-side applier",
      [m("kubectl-client-side-apply"), { manager: "flux", operation: "Apply" }],
      {},
      {},
      'field manager "flux"',
    ],
    [
      "Helm's label",
      [m("kubectl-client-side-apply")],
      { "app.kubernetes.io/managed-by": "Helm" },
      {},
      "Helm (label app.kubernetes.io/managed-by)",
    ],
    [
      "another managed-by value is not Helm",
      [m("kubectl-client-side-apply")],
      { "app.kubernetes.io/managed-by": "kustomize" },
      {},
      undefined,
    ],
    [
      "Helm's release annotation",
      [m("kubectl-client-side-apply")],
      {},
      { "meta.helm.sh/release-name": "x" },
      "Helm (annotation meta.helm.sh/release-name)",
    ],
    [
      "Argo CD's tracking id",
      [],
      {},
      { "argocd.argoproj.io/tracking-id": "a:apps/Deployment:ns/web" },
      "Argo CD (annotation argocd.argoproj.io/tracking-id)",
    ],
    [
      "Flux's labels",
      [],
      { "kustomize.toolkit.fluxcd.io/name": "apps" },
      {},
      "Flux (label kustomize.toolkit.fluxcd.io/name)",
    ],
  ])("%s", (_name, fields, labels, annotations, want) => {
    expect(otherManager(fields, labels, annotations)).toBe(want);
  });
});
