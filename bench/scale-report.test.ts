import { describe, expect, it } from "vitest";
import { policyReads, scaleTargets } from "./scale-report.ts";

const requests = { get: 2, list: 0, create: 1, update: 1, patch: 0, delete: 1 };

describe("policyReads", () => {
  it("counts the AppPolicy list of a run's calls, and nothing else", () => {
    expect(
      policyReads([
        "GET /apis/plumb.dev/v1alpha1/namespaces/a/apps/b",
        "GET /apis/plumb.dev/v1alpha1/apppolicies",
        "GET /apis/plumb.dev/v1alpha1/apppoliciesx",
        "LIST /api/v1/namespaces/a/services",
      ]),
    ).toBe(1);
    expect(policyReads([])).toBe(0);
  });
});

describe("scaleTargets: one changed object of 50", () => {
  const row = (calls: string[], applies: number, extra: Partial<typeof requests> = {}) =>
    scaleTargets(undefined, { requests: { ...requests, ...extra }, applies, calls }).find((t) =>
      t.target.startsWith("14.3"),
    );
  const base = [
    "GET /apis/plumb.dev/v1alpha1/namespaces/n/apps/a",
    "POST /apis/coordination.k8s.io/v1/namespaces/n/leases",
    "GET /apis/plumb.dev/v1alpha1/namespaces/n/apps/a",
  ];

  it("passes at 1 apply + 6 others with the AppPolicy list counted apart", () => {
    // 7 others: App read, AppPolicy list, Lease, re-read, status, Event, Lease release.
    const r = row([...base, "GET /apis/plumb.dev/v1alpha1/apppolicies"], 1, {
      get: 3,
      create: 2,
      patch: 1,
    });
    expect(r?.measured).toBe("1 apply + 7 other (1 of them the AppPolicy list)");
    expect(r?.pass).toBe(true);
  });

  it("misses at 7 others without an AppPolicy list", () => {
    const r = row(base, 1, { get: 3, create: 2, patch: 1 });
    expect(r?.measured).toBe("1 apply + 7 other (0 of them the AppPolicy list)");
    expect(r?.pass).toBe(false);
  });
});
