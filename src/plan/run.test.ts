import { describe, expect, it } from "vitest";
import { type App, type AppStatus, validateSpec } from "../app/index.ts";
import { FailureReason, GateReason, KubeApiError, type ObjectRef } from "../core/index.ts";
import {
  afterTargetFailed,
  type HeadRender,
  planAbort,
  planFinalize,
  planRun,
  planStop,
  type RunPlan,
  type RunPlanInput,
  renderDue,
} from "./run.ts";
import type { Failure } from "./status.ts";

const R1 = "1".repeat(40);
const R2 = "2".repeat(40);
const R3 = "3".repeat(40);
const NOW = new Date("2026-06-10T23:00:00Z"); // inside a deny window from 22:00 for 8h
const GIT = { git: { url: "https://git.example/o/r.git" } };
const cm = (name: string): ObjectRef => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  namespace: "a",
  name,
});

/** R2 applied (render h2), R1 before it. */
const APPLIED: AppStatus = {
  revision: R2,
  objectHash: "h2",
  observedRevision: R2,
  observedObjectHash: "h2",
  observedGeneration: 1,
  syncStatus: "Synced",
  previousRevisions: [{ revision: R1, objectHash: "h1", deployedAt: "2026-06-01T00:00:00Z" }],
};
const RENDERED = (objectHash: string, refs = [cm("one")]): HeadRender => ({
  ok: true,
  objectHash,
  refs,
});
const BROKEN: Failure = {
  reason: FailureReason.RenderFailed,
  message: "x.yaml: bad",
  stalled: false,
};

function app(spec: Record<string, unknown>, status: AppStatus = APPLIED): App {
  return {
    apiVersion: "plumb.dev/v1alpha1",
    kind: "App",
    metadata: { namespace: "a", name: "web", generation: 1 },
    spec: { source: GIT, ...spec },
    status,
  };
}

/** planRun for `spec` over `status`, the source naming `revision` whose head is `head`. */
function plan(
  spec: Record<string, unknown>,
  over: Partial<Omit<RunPlanInput, "app" | "spec">> & { status?: AppStatus } = {},
): RunPlan {
  const { status, ...input } = over;
  const a = app(spec, status);
  const valid = validateSpec(a.spec);
  if (!valid.ok) throw new Error(JSON.stringify(valid.error));
  return planRun({
    app: a,
    spec: valid.value,
    revision: R3,
    head: RENDERED("h3"),
    inventory: [cm("one")],
    departed: 0,
    dns: false,
    now: NOW,
    ...input,
  });
}

const op = (type: string, revision?: string) => ({
  operation: { id: "op-1", type, ...(revision ? { revision } : {}) },
});
const deny = { kind: "deny", schedule: "0 22 * * *", duration: "8h" };
const found = { observedRevision: R3, observedObjectHash: "h3" };

describe("planRun", () => {
  it("not rendered (the fast path): observes health only, no Lease", () => {
    expect(plan({}, { head: undefined })).toEqual({
      lease: false,
      render: "none",
      found: { observedRevision: R3 },
      observe: { held: false },
      dns: false,
      notify: false,
    });
  });

  it("a head that did not render stops the run, OutOfSync when the source moved on", () => {
    expect(plan({}, { head: { ok: false, failure: BROKEN } })).toEqual({
      lease: false,
      render: "none",
      found: { observedRevision: R3 },
      stop: { failure: BROKEN, operation: undefined, outOfSync: true },
      dns: false,
      notify: false,
    });
    expect(plan({}, { revision: R2, head: { ok: false, failure: BROKEN } }).stop).toEqual({
      failure: BROKEN,
      operation: undefined,
      outOfSync: false,
    });
  });

  it("a failed head fails a pending Sync with it", () => {
    expect(plan(op("Sync"), { head: { ok: false, failure: BROKEN } }).stop).toEqual({
      failure: BROKEN,
      operation: { id: "op-1", type: "Sync" },
      outOfSync: true,
    });
  });

  it("a Rollback names its own revision: a broken head does not block it, unless frozen", () => {
    const rollback = plan(op("Rollback", R1), { head: { ok: false, failure: BROKEN } });
    expect(rollback).toMatchObject({
      lease: true,
      render: { revision: R1 },
      found: { observedRevision: R3 },
      apply: {
        revision: R1,
        reason: GateReason.Rollback,
        operation: { id: "op-1", type: "Rollback", revision: R1 },
        source: { revision: R3, objectHash: undefined },
      },
    });
    expect(rollback.found).not.toHaveProperty("observedObjectHash");
    const frozen = plan(
      { ...op("Rollback", R1), freeze: true },
      { head: { ok: false, failure: BROKEN } },
    );
    expect(frozen.stop?.failure).toEqual(BROKEN);
    expect(frozen.apply).toBeUndefined();
  });

  it("an Approve of the held revision with a broken head applies the held render", () => {
    const status = { ...APPLIED, heldRevision: R1, heldObjectHash: "h1" };
    expect(
      plan(op("Approve"), { status, head: { ok: false, failure: BROKEN } }).apply,
    ).toMatchObject({ revision: R1, reason: GateReason.Approved });
  });

  it("hold: requiresApproval stages a new render as a preview, nothing written", () => {
    expect(plan({ syncPolicy: { requiresApproval: true } })).toEqual({
      lease: false,
      render: "head",
      found,
      observe: { held: true, syncStatus: "Held" },
      hold: { revision: R3, objectHash: "h3" },
      dns: false,
      notify: false,
    });
  });

  it("a render awaiting approval is observed as Held: no drift, no selfHeal", () => {
    const status = { ...APPLIED, heldRevision: R3, heldObjectHash: "h3" };
    const p = plan({ syncPolicy: { requiresApproval: true, selfHeal: true } }, { status });
    expect(p).toMatchObject({
      lease: false,
      render: "head",
      observe: { held: true, syncStatus: "Held" },
    });
    expect(p.heal).toBeUndefined();
    expect(p.hold).toBeUndefined();
  });

  it("reject: health only, OutOfSync, the held revision turned down", () => {
    const status = { ...APPLIED, heldRevision: R3, heldObjectHash: "h3" };
    expect(plan(op("Reject"), { status })).toEqual({
      lease: false,
      render: "none",
      found,
      observe: { held: false, syncStatus: "OutOfSync" },
      reject: {
        revision: R3,
        objectHash: "h3",
        operation: { id: "op-1", type: "Reject", revision: R3 },
      },
      dns: false,
      notify: false,
    });
  });

  it("a rejected render is nobody's desired state: observed without a comparison", () => {
    const status = { ...APPLIED, rejectedRevision: R3, rejectedObjectHash: "h3" };
    const p = plan({ syncPolicy: { requiresApproval: true, selfHeal: true } }, { status });
    expect(p).toMatchObject({ render: "none", observe: { held: false, syncStatus: "OutOfSync" } });
    expect(p.heal).toBeUndefined();
  });

  it("restart: under the Lease, then health with the sync status as it was", () => {
    expect(plan(op("Restart"))).toEqual({
      lease: true,
      render: "none",
      found,
      restart: { operation: { id: "op-1", type: "Restart" } },
      observe: { held: false, syncStatus: "Synced" },
      dns: false,
      notify: false,
    });
    expect(plan(op("Restart"), { status: {} }).observe?.syncStatus).toBe("Unknown");
  });

  it("apply: a new render, automated, under the Lease, with DNS when a zone is configured", () => {
    expect(plan({}, { dns: true })).toEqual({
      lease: true,
      render: "head",
      found,
      apply: {
        revision: R3,
        reason: GateReason.Automated,
        operation: undefined,
        prune: true,
        adopt: false,
        source: { revision: R3, objectHash: "h3" },
      },
      dns: true,
      notify: false,
    });
    expect(plan({ syncPolicy: { prune: false } }).apply?.prune).toBe(false);
    expect(plan({ adopt: true }).apply?.adopt).toBe(true);
  });

  it("apply: a Rollback renders its own revision", () => {
    expect(plan(op("Rollback"))).toMatchObject({
      render: { revision: R1 },
      apply: { revision: R1, reason: GateReason.Rollback, source: { revision: R3 } },
    });
  });

  it("an up-to-date App whose inventory lists what its render lacks syncs again", () => {
    const upToDate = { ...APPLIED, revision: R3, objectHash: "h3" };
    const p = plan({}, { status: upToDate, inventory: [cm("one"), cm("gone")] });
    expect(p).toMatchObject({ lease: true, render: "head", apply: { revision: R3 } });
    expect(plan({}, { status: upToDate, departed: 1 }).apply?.revision).toBe(R3);
    expect(plan({}, { status: upToDate }).apply).toBeUndefined();
  });

  describe("nothing to apply", () => {
    const upToDate = { ...APPLIED, revision: R3, objectHash: "h3" };
    const selfHeal = { syncPolicy: { selfHeal: true } };

    it("up to date: compared with the render, no write planned", () => {
      expect(plan({}, { status: upToDate })).toEqual({
        lease: false,
        render: "head",
        found,
        observe: { held: false, syncStatus: undefined },
        dns: false,
        notify: false,
      });
    });

    it("selfHeal may re-apply drift: under the Lease", () => {
      expect(plan(selfHeal, { status: upToDate })).toMatchObject({
        lease: true,
        render: "head",
        heal: { blockedBy: undefined },
      });
    });

    it("no selfHeal when frozen, manual, or an operation is refused", () => {
      expect(plan({ ...selfHeal, freeze: true }, { status: upToDate }).heal).toBeUndefined();
      const manual = { syncPolicy: { selfHeal: true, automated: false } };
      expect(plan(manual, { status: upToDate }).heal).toBeUndefined();
      const refused = plan({ ...selfHeal, ...op("Approve") }, { status: upToDate });
      expect(refused.heal).toBeUndefined();
      expect(refused.refuse).toEqual({
        operation: { id: "op-1", type: "Approve" },
        message: "nothing is held for approval",
      });
      expect(refused.lease).toBe(false);
    });

    it("a refused operation is consumed as Failed with the gates' message", () => {
      expect(plan({ ...op("Sync"), freeze: true }).refuse).toEqual({
        operation: { id: "op-1", type: "Sync" },
        message: "App is frozen: operations are refused while spec.freeze is true",
      });
    });

    it("a sync window that blocks selfHeal is recorded instead of healing, no Lease", () => {
      const p = plan({ ...selfHeal, syncWindows: [deny] }, { status: upToDate });
      expect(p.lease).toBe(false);
      expect(p.heal?.blockedBy).toMatchObject({ cause: "deny" });
      expect(p.heal?.blockedBy?.next?.toISOString()).toBe("2026-06-11T06:00:00.000Z");
      expect(p.syncWindow).toBeUndefined();
    });

    it("a new render held back by a sync window records the window", () => {
      const p = plan({ syncWindows: [deny] });
      expect(p.apply).toBeUndefined();
      expect(p.syncWindow).toMatchObject({ cause: "deny" });
      expect(p.syncWindow?.next?.toISOString()).toBe("2026-06-11T06:00:00.000Z");
    });

    it("DNS is re-checked while the applied render is the desired one, not frozen", () => {
      expect(plan({}, { status: upToDate, dns: true })).toMatchObject({ lease: true, dns: true });
      expect(plan({}, { status: upToDate, dns: false }).dns).toBe(false);
      expect(plan({ freeze: true }, { status: upToDate, dns: true })).toMatchObject({
        lease: false,
        dns: false,
        // Ready says the App is frozen (composeStatus: reason Frozen).
        found: { observedRevision: expect.any(String), frozen: true },
      });
      expect(plan({}, { status: upToDate }).found).not.toHaveProperty("frozen");
      // A render that differs from the applied one, not applied (manual sync): no DNS.
      const manual = plan({ syncPolicy: { automated: false } }, { dns: true });
      expect(manual).toMatchObject({ lease: false, dns: false, render: "head" });
    });
  });

  it("notifies when a target is configured or undelivered notifications wait", () => {
    const slack = { notifications: { slack: { secretRef: { name: "slack" } } } };
    expect(plan(slack).notify).toBe(true);
    const pending = {
      ...APPLIED,
      pendingNotifications: [{ event: "Synced" as const, message: "m", at: "x", attempts: 1 }],
    };
    expect(plan({}, { status: pending }).notify).toBe(true);
    expect(plan({}).notify).toBe(false);
  });
});

describe("renderDue", () => {
  const valid = (spec: Record<string, unknown>) => {
    const v = validateSpec({ source: GIT, ...spec });
    if (!v.ok) throw new Error("spec");
    return v.value;
  };

  it("not when nothing changed since the last full run and no comparison is owed", () => {
    expect(renderDue(app({}), valid({}), R2, 0, false)).toBe(false);
    expect(renderDue(app({}), valid({}), R3, 0, false)).toBe(true);
    expect(renderDue(app({}), valid({}), R2, 0, true)).toBe(true);
    // Objects left on a former destination: the full run moves them.
    expect(renderDue(app({}), valid({}), R2, 2, false)).toBe(true);
  });

  it("when the valuesFrom objects read now are not those the last render read", () => {
    const read = app({}, { ...APPLIED, observedValuesDigest: "d1" });
    expect(renderDue(read, valid({}), R2, 0, false, "d1")).toBe(false);
    expect(renderDue(read, valid({}), R2, 0, false, "d2")).toBe(true);
    // valuesFrom removed from the spec: the render without it is due.
    expect(renderDue(read, valid({}), R2, 0, false, undefined)).toBe(true);
    expect(renderDue(app({}), valid({}), R2, 0, false, "d1")).toBe(true);
  });

  it("records the digest read with the revision observed", () => {
    const p = planRun({
      app: app({}),
      spec: valid({}),
      revision: R2,
      valuesDigest: "d1",
      head: undefined,
      inventory: [],
      departed: 0,
      dns: false,
      now: new Date(0),
    });
    expect(p.found).toEqual({ observedRevision: R2, observedValuesDigest: "d1" });
  });
});

describe("the other plans", () => {
  it("afterTargetFailed: stop at the render's failure, never Stalled, the operation failing", () => {
    const rollback = plan(op("Rollback"));
    const stalled = { ...BROKEN, stalled: true };
    expect(afterTargetFailed(rollback, stalled)).toEqual({
      lease: false,
      render: "none",
      found,
      stop: {
        failure: { ...BROKEN, stalled: false },
        operation: { id: "op-1", type: "Rollback", revision: R1 },
      },
      dns: false,
      notify: false,
    });
  });

  it("planStop and planAbort record a failure, the latter from the stored status", () => {
    expect(planStop(app({}), BROKEN)).toEqual({
      lease: false,
      render: "none",
      found: {},
      stop: { failure: BROKEN },
      dns: false,
      notify: false,
    });
    expect(planAbort(app({}), new KubeApiError(500, "InternalError", "etcd down")).stop).toEqual({
      failure: {
        reason: FailureReason.ApiFailed,
        message: expect.stringContaining("etcd down"),
        stalled: false,
        transient: true,
      },
      stored: true,
    });
    expect(planAbort(app({}), new TypeError("x is undefined")).stop?.failure.reason).toBe(
      FailureReason.InternalError,
    );
  });

  it("planFinalize prunes unless the spec says prune: false (an invalid spec prunes)", () => {
    expect(planFinalize(app({}))).toEqual({
      lease: true,
      render: "none",
      found: {},
      finalize: { prune: true },
      dns: false,
      notify: false,
    });
    expect(planFinalize(app({ syncPolicy: { prune: false } })).finalize).toEqual({ prune: false });
    expect(planFinalize(app({ interval: "soon" })).finalize).toEqual({ prune: true });
  });
});
