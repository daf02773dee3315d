// Held revisions through the loop: a Reject is recorded and not held again; a held revision is
// never applied by self-heal, and stays Held across runs.
import { describe, expect, it } from "vitest";
import { addApp, createFakeKube } from "../../test/support/fake-kube.ts";
import type { SourceFile } from "../core/index.ts";
import type { Ports } from "./index.ts";
import { reconcileApp } from "./index.ts";

const A = "a".repeat(40);
const B = "b".repeat(40);
const C = "c".repeat(40);
const cm = (value: string): SourceFile[] => [
  {
    path: "cm.yaml",
    content: `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\ndata: {key: "${value}"}\n`,
  },
];
const t0 = new Date("2026-11-29T12:00:00Z");
const at = (s: number) => new Date(t0.getTime() + s * 1000);
const REF = { namespace: "team-a", name: "web" };

function setup(syncPolicy: Record<string, unknown>) {
  const kube = createFakeKube();
  const commits = new Map([
    [A, cm("one")],
    [B, cm("two")],
    [C, cm("three")],
  ]);
  const head = { sha: A };
  const ports: Ports = {
    kube,
    git: { resolve: async () => head.sha, fetch: async (_s, sha) => commits.get(sha) ?? [] },
    holder: "test",
    sleep: async () => {},
  };
  addApp(kube, "team-a", "web", {
    source: { git: { url: "https://git.example/org/repo.git" } },
    syncPolicy,
  });
  const status = () => kube.app("team-a", "web")!.status!;
  const operate = (id: string, type: string, revision?: string) => {
    const app = kube.app("team-a", "web")!;
    app.spec = {
      ...(app.spec as object),
      operation: { id, type, requestedBy: "slack:U0123", ...(revision ? { revision } : {}) },
    };
    app.metadata.generation = (app.metadata.generation ?? 1) + 1;
  };
  const liveValue = () =>
    (kube.objects.get("/ConfigMap/team-a/cfg") as { data?: { key?: string } } | undefined)?.data
      ?.key;
  return { kube, head, ports, status, operate, liveValue };
}

describe("Reject", () => {
  it("records the rejection, clears the hold, and the same revision is neither held nor applied again", async () => {
    const { kube, head, ports, status, operate, liveValue } = setup({ requiresApproval: true });
    await reconcileApp(REF, ports, t0);
    expect(status()).toMatchObject({ syncStatus: "Held", heldRevision: A });
    const heldHash = status().heldObjectHash;
    expect(heldHash).toMatch(/^[0-9a-f]{16}$/);
    operate("op-1", "Reject", A);
    const r = await reconcileApp(REF, ports, at(1));
    expect(r).toMatchObject({ outcome: "Reconciled", syncStatus: "OutOfSync" });
    expect(status().heldRevision).toBeUndefined();
    expect(status().rejectedRevision).toBe(A);
    expect(status().rejectedObjectHash).toBe(heldHash);
    // The preview is gone: nothing is owned, so nothing is listed.
    expect(status().resources ?? []).toEqual([]);
    expect(status().operationState).toMatchObject({
      id: "op-1",
      type: "Reject",
      phase: "Succeeded",
      revision: A,
      requestedBy: "slack:U0123",
    });
    expect(kube.events.map((e) => e.reason)).toContain("Rejected");
    expect(liveValue()).toBeUndefined();

    // Runs later (full comparisons: the App's slot came) neither hold it again nor apply it.
    for (const s of [10, 3600, 7200]) {
      await reconcileApp(REF, ports, at(s), { compare: true });
      expect(status()).toMatchObject({ syncStatus: "OutOfSync", rejectedRevision: A });
      expect(status().heldRevision).toBeUndefined();
    }
    expect(kube.events.filter((e) => e.reason === "Held")).toHaveLength(1);

    // A new commit is held as usual; approving it applies it and clears the rejection.
    head.sha = B;
    await reconcileApp(REF, ports, at(7300));
    expect(status()).toMatchObject({ syncStatus: "Held", heldRevision: B, rejectedRevision: A });
    operate("op-2", "Approve", B);
    await reconcileApp(REF, ports, at(7301));
    expect(status()).toMatchObject({ syncStatus: "Synced", revision: B });
    expect(status().rejectedRevision).toBeUndefined();
    expect(liveValue()).toBe("two");
  });

  it.each([
    ["a stale revision", B, `stale rejection: ${B} is not the held revision ${A.slice(0, 7)}`],
  ])("fails the operation for %s and keeps the hold", async (_, revision, message) => {
    const { ports, status, operate } = setup({ requiresApproval: true });
    await reconcileApp(REF, ports, t0);
    operate("op-1", "Reject", revision);
    await reconcileApp(REF, ports, at(1));
    expect(status().operationState).toMatchObject({ phase: "Failed", message });
    expect(status()).toMatchObject({ heldRevision: A });
    expect(status().rejectedRevision).toBeUndefined();
  });

  it("fails a Reject when nothing is held", async () => {
    const { ports, status, operate } = setup({});
    await reconcileApp(REF, ports, t0);
    operate("op-1", "Reject");
    await reconcileApp(REF, ports, at(1));
    expect(status().operationState).toMatchObject({
      phase: "Failed",
      message: "nothing is held to reject",
    });
    expect(status().syncStatus).toBe("Synced");
  });
});

describe("a held revision", () => {
  it("stays Held on a run that owes no full comparison (the steady path keeps the sync status)", async () => {
    const { ports, status } = setup({ requiresApproval: true });
    await reconcileApp(REF, ports, t0);
    await reconcileApp(REF, ports, at(10));
    expect(status()).toMatchObject({ syncStatus: "Held", heldRevision: A });
  });

  it("is never applied by selfHeal, and its preview stays a preview (no drift)", async () => {
    const { head, ports, status, operate, liveValue } = setup({
      requiresApproval: true,
      selfHeal: true,
    });
    await reconcileApp(REF, ports, t0);
    operate("op-1", "Approve", A);
    await reconcileApp(REF, ports, at(1));
    expect(liveValue()).toBe("one");
    head.sha = C;
    await reconcileApp(REF, ports, at(2));
    expect(status()).toMatchObject({ syncStatus: "Held", heldRevision: C });
    for (const s of [3, 3600]) {
      await reconcileApp(REF, ports, at(s));
      expect(liveValue()).toBe("one");
      expect(status()).toMatchObject({ syncStatus: "Held", heldRevision: C, revision: A });
      expect(status().drift).toBeUndefined();
      expect(status().resources).toEqual([
        expect.objectContaining({
          kind: "ConfigMap",
          name: "cfg",
          message: "will change: data.key",
        }),
      ]);
    }
  });
});
