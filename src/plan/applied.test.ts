import { describe, expect, it } from "vitest";
import type { Operation, ResourceStatus } from "../app/index.ts";
import type { KubeObject, ObjectRef } from "../core/index.ts";
import { refKey, refOf } from "../core/index.ts";
import { type AppliedInput, appliedOutcome } from "./applied.ts";
import type { RunOutcome } from "./status.ts";

const R1 = "1".repeat(40);
const R2 = "2".repeat(40);
const R3 = "3".repeat(40);
const now = new Date("2026-11-29T12:00:00.000Z");
const NOW = now.toISOString();

const cfg: KubeObject = {
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name: "cfg", namespace: "team-a" },
};
const web: KubeObject = {
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "web", namespace: "team-a" },
};
const CFG = refOf(cfg);
const WEB = refOf(web);
const OLD: ObjectRef = { apiVersion: "v1", kind: "Secret", namespace: "team-a", name: "old" };
const NS: ObjectRef = { apiVersion: "v1", kind: "Namespace", name: "extra" };

const line = (
  ref: ObjectRef,
  status: ResourceStatus["status"],
  health?: ResourceStatus["health"],
  message?: string,
): ResourceStatus => {
  const out: ResourceStatus = { ...ref, status };
  if (health) out.health = health;
  if (message) out.message = message;
  return out;
};
const byKey = (...objects: KubeObject[]) => new Map(objects.map((o) => [refKey(refOf(o)), o]));
const noPrune: AppliedInput["prune"] = { deleted: [], failed: [], skipped: [], unpruned: [] };
const allHealthy = { status: "Healthy" as const, reason: "all 2 objects healthy" };
const allMissing = {
  status: "Missing" as const,
  reason: "ConfigMap team-a/cfg: not found; Deployment team-a/web: not found",
};

/** R2 (cfg and web) applied whole by the automated gate; nothing to prune. */
function input(over: Partial<AppliedInput> = {}): AppliedInput {
  return {
    target: { revision: R2, objects: [cfg, web], objectHash: "h2" },
    sourceRevision: R2,
    reason: "Automated",
    previous: [CFG, WEB],
    applied: byKey(cfg, web),
    failed: new Map(),
    prune: noPrune,
    health: {
      byKey: new Map([
        [refKey(CFG), { status: "Healthy" }],
        [refKey(WEB), { status: "Healthy", message: "1 of 1 replicas available" }],
      ]),
      ...allHealthy,
    },
    now,
    ...over,
  };
}
const fail = (message: string) => ({ message, terminal: false });
const warning = (message: string) => ({ type: "Warning", reason: "ApplyFailed", message }) as const;
/** Health as assessSet gives it when web's apply failed and web does not exist. */
const webMissing = new Map([
  [refKey(CFG), { status: "Healthy" as const }],
  [refKey(WEB), { status: "Missing" as const, message: "not found" }],
]);
const appliedTwo = {
  type: "Normal",
  reason: "Applied",
  message: `applied revision ${R2}: 2 object(s)`,
} as const;
/** The outcome of input(): everything applied, Synced. */
const synced: RunOutcome = {
  inventory: [CFG, WEB],
  resources: [
    line(CFG, "Synced", "Healthy"),
    line(WEB, "Synced", "Healthy", "1 of 1 replicas available"),
  ],
  health: allHealthy,
  syncStatus: "Synced",
  events: [appliedTwo],
  rolledBackFrom: null,
  rolledBackFromObjectHash: null,
  failedObjectHash: null,
  applied: { revision: R2, objectHash: "h2" },
};
/** As synced, without failedObjectHash (a failure that is not terminal leaves it as it was). */
const { failedObjectHash: _kept, ...unrecorded } = synced;
const op = (type: Operation["type"], revision?: string): Operation =>
  revision ? { id: "op-1", type, revision } : { id: "op-1", type };

describe("appliedOutcome", () => {
  it.each<[string, AppliedInput, RunOutcome]>([
    ["everything applied: Synced, revision and hash recorded", input(), synced],
    ["a new App owns what it applied", input({ previous: [] }), synced],
    [
      "a pruned object: a Pruned line and an Event, out of the inventory",
      input({ previous: [CFG, WEB, OLD], prune: { ...noPrune, deleted: [OLD] } }),
      {
        ...synced,
        resources: [
          ...synced.resources.slice(0, 1),
          line(OLD, "Pruned"),
          ...synced.resources.slice(1),
        ],
        events: [
          appliedTwo,
          { type: "Normal", reason: "Pruned", message: "pruned Secret team-a/old" },
        ],
      },
    ],
    [
      "a failed delete stays in the inventory and fails the run (PruneFailed), revision applied",
      input({
        previous: [CFG, WEB, OLD],
        prune: { ...noPrune, failed: [{ ref: OLD, message: "forbidden" }] },
      }),
      {
        ...synced,
        inventory: [CFG, WEB, OLD],
        resources: [
          synced.resources[0]!,
          line(OLD, "PruneFailed", undefined, "forbidden"),
          synced.resources[1]!,
        ],
        syncStatus: "OutOfSync",
        failure: { reason: "PruneFailed", message: "Secret team-a/old: forbidden", stalled: false },
      },
    ],
    [
      "a skipped prune is reported; kept in the inventory only when the skip says so",
      input({
        previous: [CFG, WEB, OLD, NS],
        prune: {
          ...noPrune,
          skipped: [
            { ref: NS, reason: "a Namespace is kept", keep: false },
            { ref: OLD, reason: "retry later", keep: true },
          ],
        },
      }),
      {
        ...synced,
        inventory: [CFG, WEB, OLD],
        resources: [
          synced.resources[0]!,
          line(NS, "PruneSkipped", undefined, "a Namespace is kept"),
          line(OLD, "PruneSkipped", undefined, "retry later"),
          synced.resources[1]!,
        ],
      },
    ],
    [
      "prune off: stale objects stay owned, OutOfSync, and the App is still Synced",
      input({ previous: [CFG, WEB, OLD], prune: { ...noPrune, unpruned: [OLD] } }),
      {
        ...synced,
        inventory: [CFG, WEB, OLD],
        resources: [
          synced.resources[0]!,
          line(OLD, "OutOfSync", undefined, "not in the source; prune is off"),
          synced.resources[1]!,
        ],
      },
    ],
    [
      "a partial apply records the revision without its hash (the next run applies again)",
      input({
        previous: [CFG],
        applied: byKey(cfg),
        failed: new Map([[refKey(WEB), fail("namespace not found")]]),
        health: { ...input().health, byKey: webMissing },
      }),
      {
        ...unrecorded,
        inventory: [CFG],
        resources: [synced.resources[0]!, line(WEB, "Failed", "Missing", "namespace not found")],
        syncStatus: "OutOfSync",
        events: [
          { type: "Normal", reason: "Applied", message: `applied revision ${R2}: 1 object(s)` },
          warning("Deployment team-a/web: namespace not found"),
        ],
        applied: { revision: R2 },
        failure: {
          reason: "ApplyFailed",
          message: "Deployment team-a/web: namespace not found",
          stalled: false,
        },
      },
    ],
    [
      "no object applied: no revision recorded, owned objects kept, no Applied event",
      input({
        previous: [WEB],
        applied: new Map(),
        failed: new Map([
          [refKey(CFG), fail("quota exceeded")],
          [refKey(WEB), fail("forbidden")],
        ]),
        health: { byKey: new Map(), ...allMissing },
      }),
      {
        inventory: [WEB],
        resources: [
          line(CFG, "Failed", "Missing", "quota exceeded"),
          line(WEB, "Failed", "Missing", "forbidden"),
        ],
        health: allMissing,
        syncStatus: "OutOfSync",
        events: [warning("ConfigMap team-a/cfg: quota exceeded; Deployment team-a/web: forbidden")],
        rolledBackFrom: null,
        rolledBackFromObjectHash: null,
        failure: {
          reason: "ApplyFailed",
          message: "ConfigMap team-a/cfg: quota exceeded; Deployment team-a/web: forbidden",
          stalled: false,
        },
      },
    ],
    [
      "apply and prune both failing: ApplyFailed names the apply errors",
      input({
        applied: byKey(cfg),
        failed: new Map([[refKey(WEB), fail("forbidden")]]),
        health: { ...input().health, byKey: webMissing },
        previous: [CFG, WEB, OLD],
        prune: { ...noPrune, failed: [{ ref: OLD, message: "timeout" }] },
      }),
      {
        ...unrecorded,
        inventory: [CFG, WEB, OLD],
        resources: [
          synced.resources[0]!,
          line(OLD, "PruneFailed", undefined, "timeout"),
          line(WEB, "Failed", "Missing", "forbidden"),
        ],
        syncStatus: "OutOfSync",
        events: [
          { type: "Normal", reason: "Applied", message: `applied revision ${R2}: 1 object(s)` },
          warning("Deployment team-a/web: forbidden"),
        ],
        applied: { revision: R2 },
        failure: {
          reason: "ApplyFailed",
          message: "Deployment team-a/web: forbidden",
          stalled: false,
        },
      },
    ],
    [
      "an allowed empty render applies (and records) the revision",
      input({
        target: { revision: R2, objects: [], objectHash: "h-empty" },
        previous: [OLD],
        applied: new Map(),
        prune: { ...noPrune, deleted: [OLD] },
        health: { byKey: new Map(), status: "Healthy", reason: "no objects" },
      }),
      {
        inventory: [],
        resources: [line(OLD, "Pruned")],
        health: { status: "Healthy", reason: "no objects" },
        syncStatus: "Synced",
        events: [{ type: "Normal", reason: "Pruned", message: "pruned Secret team-a/old" }],
        rolledBackFrom: null,
        rolledBackFromObjectHash: null,
        failedObjectHash: null,
        applied: { revision: R2, objectHash: "h-empty" },
      },
    ],
    [
      "a Rollback away from the source's revision: rolledBackFrom, OutOfSync, operation Succeeded",
      input({
        target: { revision: R1, objects: [cfg, web], objectHash: "h1" },
        sourceRevision: R3,
        reason: "Rollback",
        operation: op("Rollback", R1),
      }),
      {
        ...synced,
        syncStatus: "OutOfSync",
        rolledBackFrom: R3,
        applied: { revision: R1, objectHash: "h1" },
        events: [
          { type: "Normal", reason: "Applied", message: `applied revision ${R1}: 2 object(s)` },
          { type: "Normal", reason: "OperationSucceeded", message: `Rollback: applied ${R1}` },
        ],
        operationState: {
          id: "op-1",
          type: "Rollback",
          phase: "Succeeded",
          message: `applied ${R1}`,
          revision: R1,
          startedAt: NOW,
          finishedAt: NOW,
        },
      },
    ],
    [
      "a Rollback to the source's own revision clears rolledBackFrom",
      input({ reason: "Rollback", operation: op("Rollback", R2) }),
      {
        ...synced,
        events: [
          appliedTwo,
          { type: "Normal", reason: "OperationSucceeded", message: `Rollback: applied ${R2}` },
        ],
        operationState: {
          id: "op-1",
          type: "Rollback",
          phase: "Succeeded",
          message: `applied ${R2}`,
          revision: R2,
          startedAt: NOW,
          finishedAt: NOW,
        },
      },
    ],
    [
      "approving a held revision the source has moved past: OutOfSync, no rolledBackFrom",
      input({ sourceRevision: R3, reason: "Approved", operation: op("Approve") }),
      {
        ...synced,
        syncStatus: "OutOfSync",
        events: [
          appliedTwo,
          { type: "Normal", reason: "OperationSucceeded", message: `Approve: applied ${R2}` },
        ],
        operationState: {
          id: "op-1",
          type: "Approve",
          phase: "Succeeded",
          message: `applied ${R2}`,
          startedAt: NOW,
          finishedAt: NOW,
        },
      },
    ],
    [
      "an operation whose apply or prune failed is Failed with every error",
      input({
        reason: "Sync",
        operation: op("Sync"),
        applied: byKey(cfg),
        failed: new Map([[refKey(WEB), fail("forbidden")]]),
        health: { ...input().health, byKey: webMissing },
        previous: [CFG, WEB, OLD],
        prune: { ...noPrune, failed: [{ ref: OLD, message: "timeout" }] },
      }),
      {
        ...unrecorded,
        inventory: [CFG, WEB, OLD],
        resources: [
          synced.resources[0]!,
          line(OLD, "PruneFailed", undefined, "timeout"),
          line(WEB, "Failed", "Missing", "forbidden"),
        ],
        syncStatus: "OutOfSync",
        events: [
          { type: "Normal", reason: "Applied", message: `applied revision ${R2}: 1 object(s)` },
          warning("Deployment team-a/web: forbidden"),
          {
            type: "Warning",
            reason: "OperationFailed",
            message: "Sync: Deployment team-a/web: forbidden; Secret team-a/old: timeout",
          },
        ],
        operationState: {
          id: "op-1",
          type: "Sync",
          phase: "Failed",
          message: "Deployment team-a/web: forbidden; Secret team-a/old: timeout",
          startedAt: NOW,
          finishedAt: NOW,
        },
        applied: { revision: R2 },
        failure: {
          reason: "ApplyFailed",
          message: "Deployment team-a/web: forbidden",
          stalled: false,
        },
      },
    ],
    [
      "an invalid object (terminal): Stalled, and the render is recorded as failed",
      input({
        applied: byKey(cfg),
        failed: new Map([[refKey(WEB), { message: "spec.selector is immutable", terminal: true }]]),
      }),
      {
        ...synced,
        resources: [
          synced.resources[0]!,
          line(WEB, "Failed", "Healthy", "spec.selector is immutable"),
        ],
        syncStatus: "OutOfSync",
        events: [
          { type: "Normal", reason: "Applied", message: `applied revision ${R2}: 1 object(s)` },
          warning("Deployment team-a/web: spec.selector is immutable"),
        ],
        applied: { revision: R2 },
        failedObjectHash: "h2",
        failure: {
          reason: "ApplyFailed",
          message: "Deployment team-a/web: spec.selector is immutable",
          stalled: true,
        },
      },
    ],
    [
      "a terminal and a transient failure: not Stalled (retrying helps one of them)",
      input({
        applied: new Map(),
        failed: new Map([
          [refKey(CFG), { message: "invalid: data: Required value", terminal: true }],
          [refKey(WEB), fail("etcdserver: request timed out")],
        ]),
        health: { byKey: new Map(), ...allMissing },
      }),
      {
        inventory: [CFG, WEB],
        resources: [
          line(CFG, "Failed", "Missing", "invalid: data: Required value"),
          line(WEB, "Failed", "Missing", "etcdserver: request timed out"),
        ],
        health: allMissing,
        syncStatus: "OutOfSync",
        events: [
          warning(
            "ConfigMap team-a/cfg: invalid: data: Required value; Deployment team-a/web: etcdserver: request timed out",
          ),
        ],
        rolledBackFrom: null,
        rolledBackFromObjectHash: null,
        failure: {
          reason: "ApplyFailed",
          message:
            "ConfigMap team-a/cfg: invalid: data: Required value; Deployment team-a/web: etcdserver: request timed out",
          stalled: false,
        },
      },
    ],
    [
      "a recreated object: a Recreated Event naming the immutable fields",
      input({ recreated: [{ ref: WEB, fields: ["spec.selector"] }] }),
      {
        ...synced,
        events: [
          appliedTwo,
          {
            type: "Normal",
            reason: "Recreated",
            message:
              'recreated Deployment team-a/web: spec.selector cannot change in place (plumb.dev/recreate: "true")',
          },
        ],
      },
    ],
    [
      "a Rollback records the render it moved away from",
      input({
        target: { revision: R1, objects: [cfg, web], objectHash: "h1" },
        sourceRevision: R3,
        sourceObjectHash: "h3",
        reason: "Rollback",
      }),
      {
        ...synced,
        syncStatus: "OutOfSync",
        rolledBackFrom: R3,
        rolledBackFromObjectHash: "h3",
        applied: { revision: R1, objectHash: "h1" },
        events: [
          { type: "Normal", reason: "Applied", message: `applied revision ${R1}: 2 object(s)` },
        ],
      },
    ],
  ])("%s", (_name, given, expected) => {
    expect(appliedOutcome(given)).toEqual(expected);
  });
});

describe("appliedOutcome with a prune pending on a rollout", () => {
  const since = "2026-11-29T11:00:00.000Z";
  const reason = `pending prune since ${since}: Secret team-a/old is still used by Pod web-1; pruned once the rollout that moved away from it has finished`;
  const prune: AppliedInput["prune"] = {
    ...noPrune,
    skipped: [{ ref: OLD, reason, keep: true, pendingSince: since }],
  };

  it("keeps it in the inventory marked prunePending, shows it PrunePending, and the App Progressing", () => {
    const out = appliedOutcome(input({ previous: [CFG, WEB, OLD], prune }));
    expect(out.inventory).toEqual([CFG, WEB, { ...OLD, prunePending: since }]);
    expect(out.resources).toContainEqual(line(OLD, "PrunePending", undefined, reason));
    expect(out.health).toEqual({ status: "Progressing", reason });
    expect(out.syncStatus).toBe("Synced");
  });

  it("a worse health stays as it is", () => {
    const degraded = { ...input().health, status: "Degraded" as const, reason: "web: crash" };
    const out = appliedOutcome(input({ previous: [CFG, WEB, OLD], prune, health: degraded }));
    expect(out.health).toEqual({ status: "Degraded", reason: "web: crash" });
  });
});

describe("appliedOutcome: sync waves still pending", () => {
  it("a later wave not applied yet: OutOfSync, no failure, the render not recorded as applied", () => {
    const waiting =
      "not applied yet: waiting for sync wave 0 to be healthy (ConfigMap team-a/cfg Progressing)";
    const out = appliedOutcome(
      input({
        previous: [],
        applied: byKey(cfg),
        pending: new Map([[refKey(WEB), waiting]]),
        target: {
          revision: R2,
          objects: [cfg, web],
          objectHash: "h2",
          hashes: new Map([
            [refKey(CFG), "c"],
            [refKey(WEB), "w"],
          ]),
        },
        health: {
          byKey: new Map([
            [refKey(CFG), { status: "Progressing" }],
            [refKey(WEB), { status: "Progressing", message: waiting }],
          ]),
          status: "Progressing",
          reason: "2 objects progressing",
        },
      }),
    );
    expect(out.resources).toEqual([
      line(CFG, "Synced", "Progressing"),
      line(WEB, "OutOfSync", "Progressing", waiting),
    ]);
    expect(out.syncStatus).toBe("OutOfSync");
    expect(out.failure).toBeUndefined();
    expect(out.applied).toEqual({ revision: R2 });
    // web never applied: not in the inventory yet; cfg with the hash of the form applied.
    expect(out.inventory).toEqual([{ ...CFG, hash: "c" }]);
  });
});

describe("appliedOutcome: delete hooks", () => {
  it("records the applied render's delete hooks for the finalizer (status.deleteHooks)", () => {
    const backup: KubeObject = {
      apiVersion: "batch/v1",
      kind: "Job",
      metadata: {
        name: "backup",
        namespace: "team-a",
        annotations: { "helm.sh/hook": "pre-delete" },
      },
    };
    const target = { revision: R2, objects: [cfg, web], objectHash: "h2", deleteHooks: [backup] };
    expect(appliedOutcome(input({ target })).deleteHooks).toEqual([refOf(backup)]);
    expect(appliedOutcome(input({ target: { ...target, deleteHooks: [] } })).deleteHooks).toEqual(
      [],
    );
  });
});
