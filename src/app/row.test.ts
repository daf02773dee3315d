import { describe, expect, it } from "vitest";
import { appRow, NAMESPACE_COLUMN, ROW_COLUMNS, rowFromCells } from "./row.ts";
import type { App } from "./schema.ts";

const app: App = {
  apiVersion: "plumb.dev/v1alpha1",
  kind: "App",
  metadata: {
    namespace: "team-a",
    name: "web",
    uid: "u-1",
    generation: 3,
    deletionTimestamp: "2026-11-29T12:00:00Z",
  },
  spec: {
    interval: "10m",
    source: {
      git: { url: "https://git.example/o/r.git", ref: "main", secretRef: { name: "git" } },
    },
  },
  status: {
    observedGeneration: 2,
    failures: 1,
    lastReconciledAt: "2026-11-29T11:00:00Z",
    healthStatus: "Progressing",
    syncStatus: "OutOfSync",
    revision: "a".repeat(40),
    nextSyncWindow: "2026-11-29T13:00:00Z",
    redeliverAt: "2026-11-29T12:00:30Z",
  },
};

const expected = {
  namespace: "team-a",
  name: "web",
  uid: "u-1",
  generation: 3,
  observedGeneration: 2,
  deleting: true,
  interval: "10m",
  failures: 1,
  lastReconciledAt: "2026-11-29T11:00:00Z",
  healthStatus: "Progressing",
  syncStatus: "OutOfSync",
  revision: "a".repeat(40),
  nextSyncWindow: "2026-11-29T13:00:00Z",
  redeliverAt: "2026-11-29T12:00:30Z",
  git: { url: "https://git.example/o/r.git", ref: "main", secretName: "git" },
};

describe("AppRow", () => {
  it("reads a full App", () => {
    expect(appRow(app)).toEqual(expected);
  });

  it("reads the same App from a Table row, whatever the column order", () => {
    // As the API server answers: Name first, the default columns, then the row columns.
    const columns = [
      "Name",
      "Sync",
      "Health",
      "Revision",
      "Age",
      ...ROW_COLUMNS.map((c) => c.name),
    ];
    const values: Record<string, unknown> = {
      Name: "web",
      Sync: "OutOfSync",
      Health: "Progressing",
      // The default column shows the short form; the row reads the full one.
      Revision: "aaaaaaa",
      "Applied Revision": "a".repeat(40),
      Age: "3d",
      "App Namespace": "team-a",
      UID: "u-1",
      Interval: "10m",
      Source: "https://git.example/o/r.git",
      Ref: "main",
      "Source Secret": "git",
      Generation: 3,
      "Observed Generation": 2,
      Failures: 1,
      "Last Reconciled": "2026-11-29T11:00:00Z",
      "Next Sync Window": "2026-11-29T13:00:00Z",
      "Redeliver At": "2026-11-29T12:00:30Z",
      Deleting: "2026-11-29T12:00:00Z",
    };
    expect(
      rowFromCells(
        columns,
        columns.map((c) => values[c]),
      ),
    ).toEqual(expected);
    const reversed = [...columns].reverse();
    expect(
      rowFromCells(
        reversed,
        reversed.map((c) => values[c]),
      ),
    ).toEqual(expected);
  });

  it("a never-reconciled App without a Git source has only what it has", () => {
    const columns = [
      "Name",
      NAMESPACE_COLUMN,
      "UID",
      "Generation",
      "Source",
      "Interval",
      "Deleting",
    ];
    expect(rowFromCells(columns, ["img", "team-b", "u-2", 1, null, null, null])).toEqual({
      namespace: "team-b",
      name: "img",
      uid: "u-2",
      generation: 1,
      deleting: false,
    });
    // A Git source without a ref follows HEAD, as the schema defaults it.
    expect(
      rowFromCells(["Name", NAMESPACE_COLUMN, "Source"], ["a", "b", "https://x/y.git"])?.git,
    ).toEqual({
      url: "https://x/y.git",
      ref: "HEAD",
    });
  });

  it("drops a row without a name or namespace, and ignores values of the wrong type", () => {
    expect(rowFromCells(["Name", NAMESPACE_COLUMN], ["web", null])).toBeUndefined();
    expect(rowFromCells(["Name"], ["web"])).toBeUndefined();
    expect(
      rowFromCells(["Name", NAMESPACE_COLUMN, "Generation", "Failures"], ["web", "ns", "3", 1.5]),
    ).toEqual({ namespace: "ns", name: "web", deleting: false });
  });

  it("every row column reads a path the CRD has and names a distinct Table column", () => {
    const names = ROW_COLUMNS.map((c) => c.name);
    expect(new Set(names).size).toBe(names.length);
    for (const c of ROW_COLUMNS) expect(c.jsonPath).toMatch(/^\.(metadata|spec|status)\./);
  });
});
