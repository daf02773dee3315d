import { describe, expect, it } from "vitest";
import type { AppStatus, Condition, ObjectRef, RevisionRecord } from "../app/index.ts";
import { composeStatus, type Failure, type RunRecord, statusChanged } from "./status.ts";

const R1 = "1".repeat(40);
const R2 = "2".repeat(40);
const R3 = "3".repeat(40);
const T0 = "2026-11-29T11:00:00.000Z";
const now = new Date("2026-11-29T12:00:00.000Z");
const NOW = now.toISOString();
const later = (ms: number) => new Date(now.getTime() + ms).toISOString();

const cm: ObjectRef = { apiVersion: "v1", kind: "ConfigMap", namespace: "team-a", name: "cfg" };
const healthy = { status: "Healthy" as const, reason: "1 object healthy" };

/** A successful run that applied nothing, as the steps would record it. */
function record(over: Partial<RunRecord> = {}): RunRecord {
  return {
    now,
    generation: 4,
    interval: "5m",
    observedRevision: R1,
    inventory: [cm],
    resources: [{ ...cm, status: "Synced", health: "Healthy" }],
    health: healthy,
    syncStatus: "Synced",
    ...over,
  };
}
const rev = (revision: string, deployedAt = T0, objectHash?: string): RevisionRecord =>
  objectHash === undefined ? { revision, deployedAt } : { revision, deployedAt, objectHash };
const conditions = (
  ready: [Condition["status"], string, string],
  reconciling: [Condition["status"], string, string],
  stalled: [Condition["status"], string, string],
  at = NOW,
): Condition[] =>
  (
    [
      ["Ready", ready],
      ["Reconciling", reconciling],
      ["Stalled", stalled],
    ] as const
  ).map(([type, [status, reason, message]]) => ({
    type,
    status,
    reason,
    message,
    lastTransitionTime: at,
    observedGeneration: 4,
  }));
const reconciledOk = ["False", "Reconciled", ""] as [Condition["status"], string, string];

/** The named keys of `status` that are set. */
function pick(status: AppStatus, keys: ReadonlyArray<keyof AppStatus>): Partial<AppStatus> {
  const out: Record<string, unknown> = {};
  for (const k of keys) if (status[k] !== undefined) out[k] = status[k];
  return out as Partial<AppStatus>;
}

describe("composeStatus", () => {
  it("records a first apply whole", () => {
    const status = composeStatus(
      {},
      record({ applied: { revision: R1, objectHash: "h1" }, observedObjectHash: "h1" }),
    );
    expect(status).toEqual({
      observedGeneration: 4,
      syncStatus: "Synced",
      healthStatus: "Healthy",
      healthReason: "1 object healthy",
      observedRevision: R1,
      observedObjectHash: "h1",
      revision: R1,
      shortRevision: R1.slice(0, 7),
      objectHash: "h1",
      lastSyncedAt: NOW,
      inventory: [cm],
      resources: [{ ...cm, status: "Synced", health: "Healthy" }],
      lastReconciledAt: NOW,
      conditions: conditions(
        ["True", "Synced", `revision ${R1} is applied and healthy`],
        reconciledOk,
        reconciledOk,
      ),
    });
  });

  const ten = Array.from({ length: 10 }, (_, i) => rev(`r${i}`));
  it.each<[string, AppStatus, RunRecord, RevisionRecord[] | undefined]>([
    [
      "the replaced revision goes first, with its hash and when it was last applied",
      { revision: R2, objectHash: "h2", lastSyncedAt: T0, previousRevisions: [rev(R1)] },
      record({ applied: { revision: R3, objectHash: "h3" } }),
      [rev(R2, T0, "h2"), rev(R1)],
    ],
    [
      "without lastSyncedAt the replaced revision is dated now",
      { revision: R2, objectHash: "h2" },
      record({ applied: { revision: R3, objectHash: "h3" } }),
      [rev(R2, NOW, "h2")],
    ],
    [
      "a replaced partial apply (no objectHash) is kept without one",
      { revision: R2, lastSyncedAt: T0 },
      record({ applied: { revision: R3, objectHash: "h3" } }),
      [rev(R2)],
    ],
    [
      "re-applying the same revision (a new render) adds nothing",
      { revision: R2, objectHash: "h2", lastSyncedAt: T0, previousRevisions: [rev(R1)] },
      record({ applied: { revision: R2, objectHash: "h2b" } }),
      [rev(R1)],
    ],
    [
      "the revision applied again leaves the history (a rollback)",
      {
        revision: R3,
        lastSyncedAt: T0,
        previousRevisions: [rev(R2, "2026-11-28T00:00:00.000Z"), rev(R1)],
      },
      record({ applied: { revision: R1, objectHash: "h1" } }),
      [rev(R3), rev(R2, "2026-11-28T00:00:00.000Z")],
    ],
    [
      "history is capped at 10, the oldest dropped",
      { revision: R1, lastSyncedAt: T0, previousRevisions: ten },
      record({ applied: { revision: R2, objectHash: "h2" } }),
      [rev(R1), ...ten.slice(0, 9)],
    ],
    [
      "repeats are dropped, the newest kept",
      {
        revision: R2,
        lastSyncedAt: T0,
        previousRevisions: [rev(R1, "2026-11-28T00:00:00.000Z"), rev(R2, "old"), rev(R1, "old")],
      },
      record({ applied: { revision: R3, objectHash: "h3" } }),
      [rev(R2), rev(R1, "2026-11-28T00:00:00.000Z")],
    ],
    [
      "the first apply has no history",
      {},
      record({ applied: { revision: R1, objectHash: "h1" } }),
      undefined,
    ],
    [
      "a run that applied nothing keeps the history",
      { revision: R2, previousRevisions: [rev(R1)] },
      record(),
      [rev(R1)],
    ],
  ])("previousRevisions: %s", (_name, prev, run, expected) => {
    expect(composeStatus(prev, run).previousRevisions).toEqual(expected);
  });

  const held = { heldRevision: R3, heldObjectHash: "h3" };
  it.each<[string, AppStatus, Partial<RunRecord>, Partial<AppStatus>]>([
    [
      "an apply records revision, hash and when",
      { revision: R1, objectHash: "h1", lastSyncedAt: T0 },
      { applied: { revision: R2, objectHash: "h2" } },
      { revision: R2, objectHash: "h2", lastSyncedAt: NOW },
    ],
    [
      "a partial apply records the revision and drops the old hash (the next run applies again)",
      { revision: R1, objectHash: "h1", lastSyncedAt: T0 },
      { applied: { revision: R2 } },
      { revision: R2, lastSyncedAt: NOW },
    ],
    [
      "applying the held revision clears held",
      { revision: R1, objectHash: "h1", ...held },
      { applied: { revision: R3, objectHash: "h3" } },
      { revision: R3, objectHash: "h3", lastSyncedAt: NOW },
    ],
    [
      "applying another revision keeps held",
      { revision: R1, objectHash: "h1", ...held },
      { applied: { revision: R2, objectHash: "h2" } },
      { revision: R2, objectHash: "h2", lastSyncedAt: NOW, ...held },
    ],
    [
      "a hold stages revision and hash",
      { revision: R1, objectHash: "h1" },
      { held: { revision: R3, objectHash: "h3" }, syncStatus: "Held" },
      { revision: R1, objectHash: "h1", ...held },
    ],
    [
      "held null clears a held revision",
      { revision: R1, ...held },
      { held: null },
      { revision: R1 },
    ],
    ["no word on held keeps it", { revision: R1, ...held }, {}, { revision: R1, ...held }],
    [
      "a Rollback sets rolledBackFrom",
      { revision: R2 },
      { applied: { revision: R1, objectHash: "h1" }, rolledBackFrom: R2 },
      { revision: R1, objectHash: "h1", lastSyncedAt: NOW, rolledBackFrom: R2 },
    ],
    [
      "rolledBackFrom null clears it",
      { revision: R1, rolledBackFrom: R2 },
      { applied: { revision: R3, objectHash: "h3" }, rolledBackFrom: null },
      { revision: R3, objectHash: "h3", lastSyncedAt: NOW },
    ],
    [
      "no word on rolledBackFrom keeps it",
      { revision: R1, rolledBackFrom: R2 },
      {},
      { revision: R1, rolledBackFrom: R2 },
    ],
  ])("applied and held: %s", (_name, prev, over, expected) => {
    const keys = [
      "revision",
      "objectHash",
      "lastSyncedAt",
      "heldRevision",
      "heldObjectHash",
      "rolledBackFrom",
    ] as const;
    expect(pick(composeStatus(prev, record(over)), keys)).toEqual(expected);
  });

  const opState = { id: "op-2", type: "Sync", phase: "Succeeded" } as const;
  const drift = [{ ...cm, fields: [{ path: "data.a", desired: "1", live: "2" }] }];
  const { observedRevision: _unresolved, ...unresolved } = record();
  /** What composeStatus records from record() into an empty status, timestamps aside. */
  const recorded: AppStatus = {
    observedGeneration: 4,
    syncStatus: "Synced",
    healthStatus: "Healthy",
    healthReason: healthy.reason,
    observedRevision: R1,
    inventory: [cm],
    resources: [{ ...cm, status: "Synced", health: "Healthy" }],
  };
  it.each<[string, AppStatus, RunRecord, AppStatus]>([
    [
      "operationState replaces the last one",
      { operationState: { id: "op-1", type: "Restart", phase: "Failed" } },
      record({ operationState: opState }),
      { ...recorded, operationState: opState },
    ],
    [
      "operationState is kept when the run consumed none",
      { operationState: opState },
      record(),
      { ...recorded, operationState: opState },
    ],
    ["drift found is recorded", {}, record({ drift }), { ...recorded, drift }],
    ["no drift found clears the last drift", { drift }, record({ drift: [] }), recorded],
    ["drift not looked at clears it too", { drift }, record(), recorded],
    [
      "url is set",
      {},
      record({ url: "https://web.example" }),
      { ...recorded, url: "https://web.example" },
    ],
    [
      "url is kept when the run has none",
      { url: "https://a" },
      record(),
      { ...recorded, url: "https://a" },
    ],
    [
      "observedRevision and hash are kept when the source was not resolved",
      { observedRevision: R2, observedObjectHash: "h2" },
      unresolved,
      { ...recorded, observedRevision: R2, observedObjectHash: "h2" },
    ],
    [
      "observedRevision and hash are replaced",
      { observedRevision: R2, observedObjectHash: "h2" },
      record({ observedRevision: R3, observedObjectHash: "h3" }),
      { ...recorded, observedRevision: R3, observedObjectHash: "h3" },
    ],
    [
      "the valuesFrom digest is recorded with the revision observed",
      {},
      record({ observedRevision: R3, observedValuesDigest: "d1" }),
      { ...recorded, observedRevision: R3, observedValuesDigest: "d1" },
    ],
    [
      "the valuesFrom digest is cleared when the run read none",
      { observedValuesDigest: "d1" },
      record({ observedRevision: R3 }),
      { ...recorded, observedRevision: R3 },
    ],
    [
      "the valuesFrom digest is kept when the source was not resolved",
      { observedRevision: R2, observedValuesDigest: "d1" },
      unresolved,
      { ...recorded, observedRevision: R2, observedValuesDigest: "d1" },
    ],
    [
      "an empty health reason is left out",
      { healthReason: "old" },
      record({ health: { status: "Healthy", reason: "" } }),
      (({ healthReason: _, ...r }) => r)(recorded),
    ],
    [
      "no generation clears observedGeneration",
      { observedGeneration: 3 },
      record({ generation: undefined }),
      (({ observedGeneration: _, ...r }) => r)(recorded),
    ],
    [
      "sync and health replace the last ones",
      { syncStatus: "OutOfSync", healthStatus: "Degraded", healthReason: "crash" },
      record(),
      recorded,
    ],
    [
      "inventory and resources are replaced",
      {
        inventory: [{ ...cm, name: "old" }],
        resources: [{ ...cm, name: "old", status: "Synced" }],
      },
      record({ inventory: [], resources: [] }),
      { ...recorded, inventory: [], resources: [] },
    ],
  ])("recorded fields: %s", (_name, prev, run, expected) => {
    const { conditions: _c, lastReconciledAt, ...rest } = composeStatus(prev, run);
    expect(lastReconciledAt).toEqual(NOW);
    expect(rest).toEqual(expected);
  });

  const fail = (stalled = false): Failure => ({
    reason: "SourceFailed",
    message: "connection refused",
    stalled,
  });
  it.each<[string, number | undefined, Partial<RunRecord>, number | undefined]>([
    ["success", undefined, {}, undefined],
    ["success resets the failure count", 3, {}, undefined],
    ["the first failure counts 1", undefined, { failure: fail() }, 1],
    ["the fourth failure counts 4", 3, { failure: fail() }, 4],
    ["a stalled failure counts too", 1, { failure: fail(true) }, 2],
    [
      "Progressing stores no recheck time (the schedule looks every tick)",
      undefined,
      { health: { status: "Progressing", reason: "rolling out" } },
      undefined,
    ],
  ])("schedule: %s", (_name, prevFailures, over, failures) => {
    // No next run is stored: the failure count and the run's time drive the backoff.
    const prev: AppStatus =
      prevFailures === undefined
        ? { nextReconcileAt: later(-1) }
        : { failures: prevFailures, nextReconcileAt: later(-1) };
    const status = composeStatus(prev, record(over));
    expect(pick(status, ["failures", "nextReconcileAt", "lastReconciledAt"])).toEqual(
      failures === undefined ? { lastReconciledAt: NOW } : { failures, lastReconciledAt: NOW },
    );
  });

  type C = [Condition["status"], string, string];
  it.each<[string, Partial<RunRecord>, C, C, C]>([
    [
      "a stalled failure: Stalled=True with the message",
      { failure: { reason: "InvalidSpec", message: "spec.interval: bad", stalled: true } },
      ["False", "InvalidSpec", "spec.interval: bad"],
      ["False", "InvalidSpec", "stalled"],
      ["True", "InvalidSpec", "spec.interval: bad (fix the spec to retry)"],
    ],
    [
      "a transient failure retries",
      { failure: { reason: "SourceFailed", message: "timeout", stalled: false } },
      ["False", "SourceFailed", "timeout"],
      ["False", "SourceFailed", "will retry"],
      ["False", "Retrying", "transient; retrying with backoff"],
    ],
    [
      "a failure that will not pass by itself says what must change",
      {
        failure: {
          reason: "SourceFailed",
          message: "authentication required",
          stalled: false,
          transient: false,
        },
      },
      ["False", "SourceFailed", "authentication required"],
      ["False", "SourceFailed", "will retry"],
      [
        "False",
        "Retrying",
        "retrying with backoff; the source or its credentials must change for it to succeed",
      ],
    ],
    [
      "a failure overrides a healthy health",
      { failure: { reason: "ApplyFailed", message: "x", stalled: false, transient: true } },
      ["False", "ApplyFailed", "x"],
      ["False", "ApplyFailed", "will retry"],
      ["False", "Retrying", "transient; retrying with backoff"],
    ],
    [
      "Progressing: Ready=False, Reconciling=True",
      { health: { status: "Progressing", reason: "Deployment team-a/web: 0 of 1 updated" } },
      ["False", "Progressing", "Deployment team-a/web: 0 of 1 updated"],
      ["True", "Progressing", "Deployment team-a/web: 0 of 1 updated"],
      reconciledOk,
    ],
    [
      "Degraded: Ready=False with the health reason",
      { health: { status: "Degraded", reason: "Pod team-a/web-1: CrashLoopBackOff" } },
      ["False", "Degraded", "Pod team-a/web-1: CrashLoopBackOff"],
      reconciledOk,
      reconciledOk,
    ],
    [
      "Missing: Ready=False",
      { health: { status: "Missing", reason: "ConfigMap team-a/cfg: not found" } },
      ["False", "Missing", "ConfigMap team-a/cfg: not found"],
      reconciledOk,
      reconciledOk,
    ],
    [
      "healthy and Synced: Ready=True naming the applied revision",
      { applied: { revision: R2, objectHash: "h2" } },
      ["True", "Synced", `revision ${R2} is applied and healthy`],
      reconciledOk,
      reconciledOk,
    ],
    [
      "Synced without an apply names the observed revision",
      {},
      ["True", "Synced", `revision ${R1} is applied and healthy`],
      reconciledOk,
      reconciledOk,
    ],
    [
      "Suspended is not a failure",
      { health: { status: "Suspended", reason: "CronJob team-a/c: suspended" } },
      ["True", "Synced", `revision ${R1} is applied and suspended`],
      reconciledOk,
      reconciledOk,
    ],
    [
      "Held names the held revision",
      { syncStatus: "Held", held: { revision: R3, objectHash: "h3" } },
      ["True", "Held", `revision ${R3} is held for approval`],
      reconciledOk,
      reconciledOk,
    ],
    [
      "still Held (awaiting approval) names the observed revision",
      { syncStatus: "Held", observedRevision: R3 },
      ["True", "Held", `revision ${R3} is held for approval`],
      reconciledOk,
      reconciledOk,
    ],
    [
      "Held with objects not created yet: Ready=False Held, naming what approving creates",
      {
        syncStatus: "Held",
        held: { revision: R3, objectHash: "h3" },
        health: { status: "Missing", reason: "ConfigMap team-a/cfg: will be created" },
      },
      [
        "False",
        "Held",
        `revision ${R3} is held for approval; ConfigMap team-a/cfg: will be created`,
      ],
      reconciledOk,
      reconciledOk,
    ],
    [
      "OutOfSync with drift counts the drifted objects",
      {
        syncStatus: "OutOfSync",
        drift: [
          { ...cm, fields: [{ path: "data.a" }] },
          { ...cm, name: "other", fields: [{ path: "(object)" }] },
        ],
      },
      ["True", "OutOfSync", `2 object(s) drifted from revision ${R1}: see status.drift`],
      reconciledOk,
      reconciledOk,
    ],
    [
      "OutOfSync without drift: the observed revision is not applied",
      { syncStatus: "OutOfSync", observedRevision: R3 },
      ["True", "OutOfSync", `revision ${R3} is not applied; 1 object healthy`],
      reconciledOk,
      reconciledOk,
    ],
    [
      "OutOfSync after a Rollback: the source's revision is the one not applied",
      {
        syncStatus: "OutOfSync",
        observedRevision: R3,
        applied: { revision: R1, objectHash: "h1" },
      },
      ["True", "OutOfSync", `revision ${R3} is not applied; 1 object healthy`],
      reconciledOk,
      reconciledOk,
    ],
    [
      "OutOfSync with an empty health reason",
      { syncStatus: "OutOfSync", observedRevision: R3, health: { status: "Healthy", reason: "" } },
      ["True", "OutOfSync", `revision ${R3} is not applied`],
      reconciledOk,
      reconciledOk,
    ],
    [
      "Unknown sync status: the health reason",
      { syncStatus: "Unknown" },
      ["True", "Unknown", "1 object healthy"],
      reconciledOk,
      reconciledOk,
    ],
  ])("conditions: %s", (_name, over, ready, reconciling, stalled) => {
    expect(composeStatus({}, record(over)).conditions).toEqual(
      conditions(ready, reconciling, stalled),
    );
  });

  const applied: AppStatus = { revision: R1, objectHash: "h1" };
  it.each<[string, AppStatus, Partial<RunRecord>, [Condition["status"], string, string]]>([
    [
      "a new revision waits: Ready=True Frozen naming it and what is applied",
      applied,
      { frozen: true, syncStatus: "OutOfSync", observedRevision: R3, observedObjectHash: "h3" },
      [
        "True",
        "Frozen",
        `frozen (spec.freeze): revision ${R3} is not applied (applied: ${R1}); 1 object healthy`,
      ],
    ],
    [
      "nothing applied yet",
      {},
      { frozen: true, syncStatus: "OutOfSync" },
      [
        "True",
        "Frozen",
        `frozen (spec.freeze): revision ${R1} is not applied (nothing applied yet); 1 object healthy`,
      ],
    ],
    [
      "in sync: the applied revision stays",
      applied,
      { frozen: true, observedObjectHash: "h1" },
      [
        "True",
        "Frozen",
        `frozen (spec.freeze): revision ${R1} is applied; nothing new is applied while frozen; 1 object healthy`,
      ],
    ],
    [
      "a changed render of the applied revision",
      applied,
      { frozen: true, syncStatus: "OutOfSync", observedObjectHash: "h2" },
      [
        "True",
        "Frozen",
        `frozen (spec.freeze): the changed render of revision ${R1} is not applied; 1 object healthy`,
      ],
    ],
    [
      "drift is not corrected",
      applied,
      {
        frozen: true,
        syncStatus: "OutOfSync",
        observedObjectHash: "h1",
        drift: [{ ...cm, fields: [{ path: "data.a" }] }],
      },
      [
        "True",
        "Frozen",
        "frozen (spec.freeze): 1 drifted object(s) are not corrected (see status.drift); 1 object healthy",
      ],
    ],
    [
      "Degraded stays Ready=False Degraded, the message saying it is frozen",
      applied,
      {
        frozen: true,
        syncStatus: "OutOfSync",
        observedRevision: R3,
        observedObjectHash: "h3",
        health: { status: "Degraded", reason: "ConfigMap team-a/cfg: broken" },
      },
      [
        "False",
        "Degraded",
        `ConfigMap team-a/cfg: broken; frozen (spec.freeze): revision ${R3} is not applied (applied: ${R1})`,
      ],
    ],
  ])("a frozen App: %s", (_name, prev, over, ready) => {
    const status = composeStatus(prev, record(over));
    expect(status.conditions?.find((c) => c.type === "Ready")).toMatchObject({
      status: ready[0],
      reason: ready[1],
      message: ready[2],
    });
  });

  it("keeps lastTransitionTime of conditions whose status did not change", () => {
    const prev: AppStatus = {
      conditions: conditions(["True", "Synced", "old message"], reconciledOk, reconciledOk, T0).map(
        (c) => ({ ...c, observedGeneration: 3 }),
      ),
    };
    const failed = composeStatus(
      prev,
      record({ failure: { reason: "SourceFailed", message: "timeout", stalled: false } }),
    );
    expect(failed.conditions).toEqual([
      {
        type: "Ready",
        status: "False",
        reason: "SourceFailed",
        message: "timeout",
        lastTransitionTime: NOW,
        observedGeneration: 4,
      },
      {
        type: "Reconciling",
        status: "False",
        reason: "SourceFailed",
        message: "will retry",
        lastTransitionTime: T0,
        observedGeneration: 4,
      },
      {
        type: "Stalled",
        status: "False",
        reason: "Retrying",
        message: "transient; retrying with backoff",
        lastTransitionTime: T0,
        observedGeneration: 4,
      },
    ]);
    const same = composeStatus(prev, record());
    expect(same.conditions?.map((c) => [c.type, c.lastTransitionTime])).toEqual([
      ["Ready", T0],
      ["Reconciling", T0],
      ["Stalled", T0],
    ]);
  });

  it("keeps conditions of other types", () => {
    const other: Condition = {
      type: "Custom",
      status: "True",
      reason: "X",
      message: "",
      lastTransitionTime: T0,
    };
    expect(composeStatus({ conditions: [other] }, record()).conditions?.map((c) => c.type)).toEqual(
      ["Ready", "Reconciling", "Stalled", "Custom"],
    );
  });

  describe("a sync window holding a sync back", () => {
    const window = {
      message:
        'automated sync is blocked by the open deny window spec.syncWindows[0] ("0 22 * * *" UTC, 8h); next allowed at 2026-11-29T12:02:00.000Z',
      next: new Date(later(120_000)),
    };
    const applied: AppStatus = { revision: R1, objectHash: "h1", nextSyncWindow: T0 };

    it("a new revision: OutOfSync, Ready names the window, and when it opens (the tick's cue)", () => {
      const status = composeStatus(
        applied,
        record({ observedRevision: R2, syncStatus: "OutOfSync", syncWindow: window }),
      );
      expect(pick(status, ["syncStatus", "nextSyncWindow", "nextReconcileAt"])).toEqual({
        syncStatus: "OutOfSync",
        nextSyncWindow: later(120_000),
      });
      expect(status.conditions?.[0]).toMatchObject({
        type: "Ready",
        status: "True",
        reason: "OutsideSyncWindow",
        message: `revision ${R2} is not applied: ${window.message}`,
      });
    });

    it("a changed render of the applied revision, and drift selfHeal may not correct", () => {
      const render = composeStatus(
        applied,
        record({ observedObjectHash: "h2", syncStatus: "OutOfSync", syncWindow: window }),
      );
      expect(render.conditions?.[0]?.message).toBe(
        `the changed render of revision ${R1} is not applied: ${window.message}`,
      );
      const drift = [{ ...cm, fields: [{ path: "data.a", desired: "1", live: "2" }] }];
      const drifted = composeStatus(
        applied,
        record({ observedObjectHash: "h1", syncStatus: "OutOfSync", drift, syncWindow: window }),
      );
      expect(drifted.conditions?.[0]?.message).toBe(
        `1 drifted object(s) are not corrected (see status.drift): ${window.message}`,
      );
    });

    it("a window that opens later than the interval: its time, and no stored schedule", () => {
      const far = { ...window, next: new Date(later(3_600_000)) };
      const status = composeStatus(applied, record({ syncStatus: "OutOfSync", syncWindow: far }));
      expect(status.nextReconcileAt).toBeUndefined();
      expect(status.nextSyncWindow).toBe(later(3_600_000));
    });

    it("an App that never synced, held by a deny window: OutsideSyncWindow, not Missing", () => {
      const status = composeStatus(
        {},
        record({
          observedRevision: R2,
          inventory: [],
          resources: [{ ...cm, status: "OutOfSync", health: "Missing" }],
          health: { status: "Missing", reason: "1 of 1 object(s) missing" },
          syncStatus: "OutOfSync",
          syncWindow: window,
        }),
      );
      expect(status.conditions?.[0]).toMatchObject({
        type: "Ready",
        status: "False",
        reason: "OutsideSyncWindow",
        message: `1 of 1 object(s) missing; revision ${R2} is not applied: ${window.message}`,
      });
    });

    it("held while Degraded or Progressing: OutsideSyncWindow too, Ready False", () => {
      for (const health of ["Degraded", "Progressing"] as const) {
        const status = composeStatus(
          applied,
          record({
            observedRevision: R2,
            health: { status: health, reason: `web is ${health.toLowerCase()}` },
            syncStatus: "OutOfSync",
            syncWindow: window,
          }),
        );
        expect(status.conditions?.[0]).toMatchObject({
          type: "Ready",
          status: "False",
          reason: "OutsideSyncWindow",
          message: `web is ${health.toLowerCase()}; revision ${R2} is not applied: ${window.message}`,
        });
      }
    });

    it("no opening ahead: nextSyncWindowMessage says so; an opening or no window clears it", () => {
      const nextMessage =
        "no sync window opens within 366 days (searched until 2027-11-30T12:00:00.000Z)";
      const none = composeStatus(
        applied,
        record({ syncStatus: "OutOfSync", syncWindow: { message: window.message, nextMessage } }),
      );
      expect(none.nextSyncWindow).toBeUndefined();
      expect(none.nextSyncWindowMessage).toBe(nextMessage);
      const opens = composeStatus(none, record({ syncStatus: "OutOfSync", syncWindow: window }));
      expect(opens.nextSyncWindowMessage).toBeUndefined();
      expect(composeStatus(none, record()).nextSyncWindowMessage).toBeUndefined();
    });

    it("no window found ahead: no nextSyncWindow; a run without a window clears it", () => {
      const none = composeStatus(
        applied,
        record({ syncStatus: "OutOfSync", syncWindow: { message: window.message } }),
      );
      expect(none.nextSyncWindow).toBeUndefined();
      expect(composeStatus(applied, record()).nextSyncWindow).toBeUndefined();
    });
  });

  it("does not change the status it was given", () => {
    const prev: AppStatus = { revision: R2, heldRevision: R3, previousRevisions: [rev(R1)] };
    const copy = structuredClone(prev);
    composeStatus(prev, record({ applied: { revision: R3, objectHash: "h3" } }));
    expect(prev).toEqual(copy);
  });
});

describe("statusChanged", () => {
  const base: AppStatus = {
    revision: R1,
    syncStatus: "Synced",
    lastReconciledAt: T0,
  };
  it.each<[string, AppStatus, AppStatus, boolean]>([
    ["identical", base, { ...base }, false],
    ["only the run's time moved", base, { ...base, lastReconciledAt: NOW }, false],
    ["key order does not count", base, { syncStatus: "Synced", revision: R1 }, false],
    ["a field changed", base, { ...base, syncStatus: "OutOfSync" }, true],
    ["a field was added", base, { ...base, failures: 1 }, true],
    ["a field was removed", base, { syncStatus: "Synced" }, true],
    [
      "a stored schedule from an earlier version is dropped (once)",
      { ...base, nextReconcileAt: T0 },
      { ...base, lastReconciledAt: NOW },
      true,
    ],
  ])("%s → %s", (_name, prev, next, changed) => {
    expect(statusChanged(prev, next)).toBe(changed);
  });
});
