// The scenarios client-go's csaupgrade covers (direct conversion, merge into an existing Apply
// entry, entries of other apiVersions, several managers, nothing to do), on plumb's own data.
import { describe, expect, it } from "vitest";
import type { ManagedFieldsEntry } from "../core/index.ts";
import { CLIENT_SIDE_MANAGERS, unionFields, upgradeManagedFields } from "./managed-fields.ts";

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
