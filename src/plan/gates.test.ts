import { describe, expect, it } from "vitest";
import { AppSpec, type AppStatus, type Operation } from "../app/index.ts";
import { type Decision, decide, outOfSync, refuseEmptyRender, type SourceHead } from "./gates.ts";

const R1 = "1".repeat(40);
const R2 = "2".repeat(40);
const R3 = "3".repeat(40);
const head: SourceHead = { revision: R3, objectHash: "h3" };
const NOW = new Date("2026-11-20T12:00:00Z");

/** A defaulted spec (automated on, as the schema defaults it) with overrides. */
function spec(over: Record<string, unknown> = {}): AppSpec {
  return AppSpec.parse({ source: { git: { url: "https://git.example/o/r.git" } }, ...over });
}
const policy = (p: Record<string, boolean>) => spec({ syncPolicy: p });
const op = (type: Operation["type"], revision?: string): Operation =>
  revision === undefined ? { id: "op-1", type } : { id: "op-1", type, revision };
const withOp = (o: Operation, over: Record<string, unknown> = {}) =>
  spec({ operation: o, ...over });

/** R2 applied, R1 before it; the source now names R3. */
const applied: AppStatus = {
  revision: R2,
  objectHash: "h2",
  previousRevisions: [{ revision: R1, objectHash: "h1", deployedAt: "2026-11-01T00:00:00Z" }],
};
const upToDate: AppStatus = { ...applied, revision: R3, objectHash: "h3" };

describe("decide", () => {
  const refused = (o: Operation, message: string): Decision => ({
    action: "none",
    reason: "OperationRefused",
    operation: o,
    message,
  });
  const frozenMessage = "App is frozen: operations are refused while spec.freeze is true";

  it.each<[string, AppSpec, AppStatus, Decision]>([
    [
      "freeze without an operation applies nothing",
      spec({ freeze: true }),
      applied,
      { action: "none", reason: "Frozen" },
    ],
    [
      "freeze refuses a pending operation",
      withOp(op("Sync"), { freeze: true }),
      applied,
      refused(op("Sync"), frozenMessage),
    ],
    [
      "freeze refuses even a Rollback to a known revision",
      withOp(op("Rollback", R1), { freeze: true }),
      applied,
      refused(op("Rollback", R1), frozenMessage),
    ],
    [
      "freeze with an operation already consumed is just Frozen",
      withOp(op("Sync"), { freeze: true }),
      { ...applied, operationState: { id: "op-1", type: "Sync", phase: "Succeeded" } },
      { action: "none", reason: "Frozen" },
    ],
    [
      "Sync applies the source's revision",
      withOp(op("Sync")),
      applied,
      { action: "apply", revision: R3, reason: "Sync", operation: op("Sync") },
    ],
    [
      "Sync applies even when up to date and automated is off",
      withOp(op("Sync"), { syncPolicy: { automated: false } }),
      upToDate,
      { action: "apply", revision: R3, reason: "Sync", operation: op("Sync") },
    ],
    [
      "Sync bypasses requiresApproval",
      withOp(op("Sync"), { syncPolicy: { requiresApproval: true } }),
      applied,
      { action: "apply", revision: R3, reason: "Sync", operation: op("Sync") },
    ],
    [
      "Deploy applies the source's revision",
      withOp(op("Deploy")),
      applied,
      { action: "apply", revision: R3, reason: "Deploy", operation: op("Deploy") },
    ],
    [
      "Restart restarts",
      withOp(op("Restart")),
      applied,
      { action: "restart", reason: "Restart", operation: op("Restart") },
    ],
    [
      "a Running operation with the same id is still pending",
      withOp(op("Restart")),
      { ...applied, operationState: { id: "op-1", type: "Restart", phase: "Running" } },
      { action: "restart", reason: "Restart", operation: op("Restart") },
    ],
    [
      "a finished operation id is not run again: the gates decide",
      withOp(op("Restart")),
      { ...applied, operationState: { id: "op-1", type: "Restart", phase: "Failed" } },
      { action: "apply", revision: R3, reason: "Automated" },
    ],
    [
      "a new operation id runs although an older one finished",
      withOp(op("Restart")),
      { ...applied, operationState: { id: "op-0", type: "Restart", phase: "Succeeded" } },
      { action: "restart", reason: "Restart", operation: op("Restart") },
    ],
    [
      "Approve with nothing held is refused",
      withOp(op("Approve")),
      applied,
      refused(op("Approve"), "nothing is held for approval"),
    ],
    [
      "Approve naming another revision than the held one is stale",
      withOp(op("Approve", R2)),
      { ...applied, heldRevision: R3, heldObjectHash: "h3" },
      refused(
        op("Approve", R2),
        `stale approval: ${R2} is not the held revision ${R3.slice(0, 7)}`,
      ),
    ],
    [
      "Approve naming the held revision applies it",
      withOp(op("Approve", R3)),
      { ...applied, heldRevision: R3, heldObjectHash: "h3" },
      { action: "apply", revision: R3, reason: "Approved", operation: op("Approve", R3) },
    ],
    [
      "Approve without a revision applies the held one, not the source's newer head",
      withOp(op("Approve")),
      { ...applied, heldRevision: R1, heldObjectHash: "h1" },
      { action: "apply", revision: R1, reason: "Approved", operation: op("Approve", R1) },
    ],
    [
      "Rollback without a revision goes to the newest previous revision",
      withOp(op("Rollback")),
      applied,
      { action: "apply", revision: R1, reason: "Rollback", operation: op("Rollback", R1) },
    ],
    [
      "Rollback to a revision in previousRevisions",
      withOp(op("Rollback", R1)),
      {
        ...applied,
        previousRevisions: [
          { revision: R3, deployedAt: "2026-11-02T00:00:00Z" },
          { revision: R1, deployedAt: "2026-11-01T00:00:00Z" },
        ],
      },
      { action: "apply", revision: R1, reason: "Rollback", operation: op("Rollback", R1) },
    ],
    [
      "Rollback to the applied revision re-applies it",
      withOp(op("Rollback", R2)),
      applied,
      { action: "apply", revision: R2, reason: "Rollback", operation: op("Rollback", R2) },
    ],
    [
      "Rollback without a revision and without history is refused",
      withOp(op("Rollback")),
      { revision: R2, objectHash: "h2" },
      refused(op("Rollback"), "no previous revision to roll back to"),
    ],
    [
      "Rollback to an unknown revision is refused",
      withOp(op("Rollback", R3)),
      applied,
      refused(
        op("Rollback", R3),
        `revision "${R3}" is not in status.previousRevisions (${R2.slice(0, 7)}, ${R1.slice(0, 7)})`,
      ),
    ],
    [
      "requiresApproval holds a revision not yet applied",
      policy({ requiresApproval: true }),
      applied,
      { action: "hold", revision: R3, reason: "RequiresApproval" },
    ],
    [
      "requiresApproval holds a changed render of the applied revision",
      policy({ requiresApproval: true }),
      { ...upToDate, objectHash: "h-old" },
      { action: "hold", revision: R3, reason: "RequiresApproval" },
    ],
    [
      "requiresApproval awaits when that revision and render are already held",
      policy({ requiresApproval: true }),
      { ...applied, heldRevision: R3, heldObjectHash: "h3" },
      { action: "none", reason: "AwaitingApproval" },
    ],
    [
      "requiresApproval holds again when the held revision renders differently now",
      policy({ requiresApproval: true }),
      { ...applied, heldRevision: R3, heldObjectHash: "h-old" },
      { action: "hold", revision: R3, reason: "RequiresApproval" },
    ],
    [
      "requiresApproval with nothing new is up to date",
      policy({ requiresApproval: true }),
      upToDate,
      { action: "none", reason: "UpToDate" },
    ],
    [
      "automated applies a new revision",
      spec(),
      applied,
      { action: "apply", revision: R3, reason: "Automated" },
    ],
    [
      "automated applies a changed render of the same revision",
      spec(),
      { ...upToDate, objectHash: "h-old" },
      { action: "apply", revision: R3, reason: "Automated" },
    ],
    [
      "automated applies the first revision of a new App",
      spec(),
      {},
      { action: "apply", revision: R3, reason: "Automated" },
    ],
    [
      "automated does not re-apply the revision a Rollback moved away from",
      spec(),
      { ...applied, rolledBackFrom: R3 },
      { action: "none", reason: "RolledBack" },
    ],
    [
      "automated applies a revision newer than the one rolled back from",
      spec(),
      { ...applied, rolledBackFrom: R1 },
      { action: "apply", revision: R3, reason: "Automated" },
    ],
    [
      "a new commit whose render is the applied one is up to date",
      spec(),
      { ...applied, objectHash: "h3" },
      { action: "none", reason: "UpToDate" },
    ],
    [
      "requiresApproval does not hold a commit whose render is the applied one",
      policy({ requiresApproval: true }),
      { ...applied, objectHash: "h3" },
      { action: "none", reason: "UpToDate" },
    ],
    [
      "requiresApproval awaits when the held render comes from another commit",
      policy({ requiresApproval: true }),
      { ...applied, heldRevision: R1, heldObjectHash: "h3" },
      { action: "none", reason: "AwaitingApproval" },
    ],
    [
      "requiresApproval: a rejected render is not held again, whatever commit renders it",
      policy({ requiresApproval: true }),
      { ...applied, rejectedRevision: R1, rejectedObjectHash: "h3" },
      { action: "none", reason: "Rejected" },
    ],
    [
      "requiresApproval: a render other than the rejected one is held",
      policy({ requiresApproval: true }),
      { ...applied, rejectedRevision: R3, rejectedObjectHash: "h-rejected" },
      { action: "hold", revision: R3, reason: "RequiresApproval" },
    ],
    [
      "requiresApproval does not hold again the render a Rollback moved away from",
      policy({ requiresApproval: true }),
      { ...applied, rolledBackFrom: R3 },
      { action: "none", reason: "RolledBack" },
    ],
    [
      "requiresApproval holds a render newer than the one rolled back from",
      policy({ requiresApproval: true }),
      { ...applied, rolledBackFrom: R1, rolledBackFromObjectHash: "h1" },
      { action: "hold", revision: R3, reason: "RequiresApproval" },
    ],
    [
      "automated keeps a Rollback while the source renders what was rolled back from",
      spec(),
      { ...applied, rolledBackFrom: R1, rolledBackFromObjectHash: "h3" },
      { action: "none", reason: "RolledBack" },
    ],
    [
      "automated applies a render other than the one rolled back from, whatever the revision",
      spec(),
      { ...applied, rolledBackFrom: R3, rolledBackFromObjectHash: "h-rolled-back" },
      { action: "apply", revision: R3, reason: "Automated" },
    ],
    [
      "automated does not retry a render whose apply failed terminally",
      spec(),
      { ...applied, failedObjectHash: "h3" },
      { action: "none", reason: "ApplyStalled" },
    ],
    [
      "automated applies a new render after a terminal failure",
      spec(),
      { ...applied, failedObjectHash: "h-old" },
      { action: "apply", revision: R3, reason: "Automated" },
    ],
    [
      "a Sync operation retries a render whose apply failed terminally",
      withOp(op("Sync")),
      { ...applied, failedObjectHash: "h3" },
      { action: "apply", revision: R3, reason: "Sync", operation: op("Sync") },
    ],
    [
      "without automated a new revision waits for a manual sync",
      policy({ automated: false }),
      applied,
      { action: "none", reason: "ManualSync" },
    ],
    ["automated and up to date", spec(), upToDate, { action: "none", reason: "UpToDate" }],
    [
      "manual and up to date",
      policy({ automated: false }),
      upToDate,
      { action: "none", reason: "UpToDate" },
    ],
  ])("%s", (_name, s, status, expected) => {
    expect(decide(s, status, head, NOW)).toEqual(expected);
  });
});

describe("decide with sync windows", () => {
  // 23:00 UTC: inside a deny window 22:00–06:00, outside an allow window 09:00–17:00.
  const night = new Date("2026-06-10T23:00:00Z");
  const deny = (manualSync = false) => ({
    kind: "deny",
    schedule: "0 22 * * *",
    duration: "8h",
    manualSync,
  });
  const office = (manualSync = false) => ({
    kind: "allow",
    schedule: "0 9 * * *",
    duration: "8h",
    manualSync,
  });
  const windowed = (windows: unknown[], over: Record<string, unknown> = {}) =>
    spec({ syncWindows: windows, ...over });

  it("an open deny window holds a new revision back, naming the window and the next opening", () => {
    const d = decide(windowed([deny()]), applied, head, night);
    expect(d).toMatchObject({ action: "none", reason: "OutsideSyncWindow" });
    expect(d.action === "none" && d.window?.next?.toISOString()).toBe("2026-06-11T06:00:00.000Z");
    expect(d.action === "none" && d.window?.message).toContain(
      'deny window spec.syncWindows[0] ("0 22 * * *" UTC, 8h)',
    );
  });

  it("the same revision applies once the window has closed", () => {
    expect(decide(windowed([deny()]), applied, head, new Date("2026-06-11T06:00:00Z"))).toEqual({
      action: "apply",
      revision: R3,
      reason: "Automated",
    });
  });

  it("outside every allow window a new revision waits; inside one it applies", () => {
    expect(decide(windowed([office()]), applied, head, night)).toMatchObject({
      action: "none",
      reason: "OutsideSyncWindow",
    });
    expect(
      decide(windowed([office()]), applied, head, new Date("2026-06-11T10:00:00Z")),
    ).toMatchObject({ action: "apply", reason: "Automated" });
  });

  it("up to date inside a deny window: nothing to hold back, but the window is reported", () => {
    const d = decide(windowed([deny()]), upToDate, head, night);
    expect(d).toMatchObject({ action: "none", reason: "UpToDate" });
    expect(d.action === "none" && d.window?.cause).toBe("deny");
  });

  it("a manual App is not held by windows (nothing automated to block)", () => {
    expect(
      decide(windowed([deny()], { syncPolicy: { automated: false } }), applied, head, night),
    ).toEqual({ action: "none", reason: "ManualSync" });
  });

  it("refuses a Sync operation during a deny window without manualSync", () => {
    const d = decide(windowed([deny()], { operation: op("Sync") }), applied, head, night);
    expect(d).toMatchObject({ action: "none", reason: "OperationRefused", operation: op("Sync") });
    expect(d.action === "none" && d.message).toMatch(
      /^manual sync is blocked by the open deny window spec\.syncWindows\[0\] .*; next allowed at 2026-06-11T06:00:00\.000Z \(manualSync: true on a window lets operations through\)$/,
    );
  });

  it.each<[string, Operation]>([
    ["Sync", op("Sync")],
    ["Deploy", op("Deploy")],
    ["Rollback", op("Rollback", R1)],
  ])("lets a %s through a deny window with manualSync", (_name, o) => {
    const d = decide(windowed([deny(true)], { operation: o }), applied, head, night);
    expect(d).toMatchObject({ action: "apply", operation: o });
  });

  it("lets an Approve through an allow window's closed hours only with manualSync", () => {
    const held = { ...applied, heldRevision: R3, heldObjectHash: "h3" };
    const approve = op("Approve", R3);
    const policy = { requiresApproval: true };
    expect(
      decide(windowed([office()], { operation: approve, syncPolicy: policy }), held, head, night),
    ).toMatchObject({ action: "none", reason: "OperationRefused" });
    expect(
      decide(
        windowed([office(true)], { operation: approve, syncPolicy: policy }),
        held,
        head,
        night,
      ),
    ).toMatchObject({ action: "apply", revision: R3, reason: "Approved" });
  });

  it("a Reject applies nothing: it runs inside a deny window", () => {
    const held = { ...applied, heldRevision: R3, heldObjectHash: "h3" };
    const d = decide(windowed([deny()], { operation: op("Reject", R3) }), held, head, night);
    expect(d).toMatchObject({ action: "reject", revision: R3 });
  });

  it("a Restart is not a sync: it runs inside a deny window", () => {
    const d = decide(windowed([deny()], { operation: op("Restart") }), applied, head, night);
    expect(d).toEqual({ action: "restart", reason: "Restart", operation: op("Restart") });
  });

  it("requiresApproval still stages a new revision inside a deny window (nothing is applied)", () => {
    const d = decide(
      windowed([deny()], { syncPolicy: { requiresApproval: true } }),
      applied,
      head,
      night,
    );
    expect(d).toEqual({ action: "hold", revision: R3, reason: "RequiresApproval" });
  });
});

describe("outOfSync", () => {
  it.each<[string, AppStatus, boolean]>([
    ["same revision and render", { revision: R3, objectHash: "h3" }, false],
    [
      "another revision with the same render (a commit elsewhere in a monorepo)",
      { revision: R2, objectHash: "h3" },
      false,
    ],
    ["same revision, another render", { revision: R3, objectHash: "h2" }, true],
    ["a partial apply (no objectHash) is out of sync", { revision: R3 }, true],
    ["never applied", {}, true],
  ])("%s", (_name, status, expected) => {
    expect(outOfSync(status, head)).toBe(expected);
  });
});

describe("refuseEmptyRender", () => {
  it.each<[string, AppSpec, number, number]>([
    ["a render with objects proceeds", spec(), 3, 5],
    ["an empty render of an App that owns nothing proceeds", spec(), 0, 0],
    ["allowEmpty lets an empty render prune everything", policy({ allowEmpty: true }), 0, 5],
  ])("%s", (_name, s, rendered, owned) => {
    expect(refuseEmptyRender(s, rendered, owned, R3)).toBeUndefined();
  });

  it("refuses an empty render while the App owns objects: RenderFailed, not Stalled", () => {
    expect(refuseEmptyRender(spec(), 0, 2, R3)).toEqual({
      reason: "RenderFailed",
      message: `revision ${R3} renders no objects; refusing to prune all 2 (set spec.syncPolicy.allowEmpty to allow it)`,
      stalled: false,
    });
  });
});

describe("revision prefixes in spec.operation", () => {
  const A = "28744dd0c1a1b2c3d4e5f60718293a4b5c6d7e8f";
  const B = "28744dd9aaaabbbbccccddddeeeeffff00001111";
  const history: AppStatus = {
    revision: R3,
    objectHash: "h3",
    previousRevisions: [
      { revision: A, deployedAt: "2026-11-02T00:00:00Z" },
      { revision: B, deployedAt: "2026-11-01T00:00:00Z" },
    ],
  };

  it("Approve with the short SHA Slack showed applies the held revision, recorded in full", () => {
    const status = { ...applied, heldRevision: A, heldObjectHash: "hA" };
    expect(decide(withOp(op("Approve", "28744dd")), status, head, NOW)).toEqual({
      action: "apply",
      revision: A,
      reason: "Approved",
      operation: op("Approve", A),
    });
  });

  it("Rollback to an unambiguous prefix applies that revision", () => {
    expect(decide(withOp(op("Rollback", "28744dd9")), history, head, NOW)).toEqual({
      action: "apply",
      revision: B,
      reason: "Rollback",
      operation: op("Rollback", B),
    });
  });

  it("an ambiguous prefix is refused, naming the matches", () => {
    expect(decide(withOp(op("Rollback", "28744dd")), history, head, NOW)).toEqual({
      action: "none",
      reason: "OperationRefused",
      operation: op("Rollback", "28744dd"),
      message:
        'revision "28744dd" is ambiguous: it matches 28744dd0, 28744dd9; give more characters',
    });
  });
});
