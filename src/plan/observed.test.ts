import { describe, expect, it } from "vitest";
import type { AppStatus, DriftEntry, ResourceStatus } from "../app/index.ts";
import type { ObjectRef } from "../core/index.ts";
import { refKey } from "../core/index.ts";
import type { Comparison } from "./compare.ts";
import type { RunEvent } from "./events.ts";
import { type ObservedInput, observedOutcome } from "./observed.ts";
import type { RunOutcome } from "./status.ts";

const R1 = "1".repeat(40);
const R2 = "2".repeat(40);

const A: ObjectRef = { apiVersion: "v1", kind: "ConfigMap", namespace: "team-a", name: "a" };
const B: ObjectRef = { apiVersion: "v1", kind: "ConfigMap", namespace: "team-a", name: "b" };
const synced = (r: ObjectRef): ResourceStatus => ({ ...r, status: "Synced", health: "Healthy" });
const drifted = (r: ObjectRef): ResourceStatus => ({
  ...r,
  status: "OutOfSync",
  health: "Healthy",
  message: "drifted: data.k",
});
const driftOf = (r: ObjectRef): DriftEntry => ({
  ...r,
  fields: [{ path: "data.k", desired: "1", live: "2", manager: "kubectl-edit" }],
});
const healthy = { status: "Healthy" as const, reason: "all 2 objects healthy" };
const corrected: RunEvent = {
  type: "Normal",
  reason: "DriftCorrected",
  message: "re-applied ConfigMap team-a/a",
};

/** R1 applied with hash h1; the run rendered R1/h1 again and found A and B Synced. */
const prev: AppStatus = { revision: R1, objectHash: "h1", syncStatus: "Synced" };
function input(over: Partial<ObservedInput> = {}, comparison?: Partial<Comparison>): ObservedInput {
  return {
    prev,
    inventory: [A, B],
    desired: { revision: R1, objectHash: "h1" },
    comparison: { resources: [synced(A), synced(B)], drift: [], errors: [], ...comparison },
    health: healthy,
    ...over,
  };
}
const outcome = (over: Partial<RunOutcome> = {}): RunOutcome => ({
  inventory: [A, B],
  resources: [synced(A), synced(B)],
  health: healthy,
  syncStatus: "Synced",
  drift: [],
  events: [],
  ...over,
});

describe("observedOutcome", () => {
  it.each<[string, ObservedInput, RunOutcome]>([
    ["the applied render, nothing drifted: Synced", input(), outcome()],
    [
      "the source names another revision: OutOfSync",
      input({ desired: { revision: R2, objectHash: "h2" } }),
      outcome({ syncStatus: "OutOfSync" }),
    ],
    [
      "another revision that renders the applied objects (a monorepo commit elsewhere): Synced",
      input({ desired: { revision: R2, objectHash: "h1" } }),
      outcome(),
    ],
    [
      "the render whose apply failed terminally, still refused: ApplyFailed, Stalled",
      input(
        {
          prev: { revision: R2, failedObjectHash: "h2", syncStatus: "OutOfSync" },
          desired: { revision: R2, objectHash: "h2" },
        },
        { errors: [{ ref: A, message: "spec.template is immutable", terminal: true }] },
      ),
      outcome({
        syncStatus: "OutOfSync",
        failure: {
          reason: "ApplyFailed",
          message: "ConfigMap team-a/a: spec.template is immutable",
          stalled: true,
        },
      }),
    ],
    [
      "the render whose apply failed terminally, an object never created (Missing): the last failure stands",
      input(
        {
          prev: {
            revision: R1,
            failedObjectHash: "h2",
            syncStatus: "OutOfSync",
            conditions: [
              {
                type: "Ready",
                status: "False",
                reason: "ApplyFailed",
                message:
                  "Service team-a/b: invalid: spec.ports[0].port: must be between 1 and 65535",
                lastTransitionTime: "2026-01-01T00:00:00Z",
              },
            ],
          },
          desired: { revision: R2, objectHash: "h2" },
        },
        { resources: [synced(A), { ...B, status: "OutOfSync", health: "Missing" }] },
      ),
      outcome({
        syncStatus: "OutOfSync",
        resources: [synced(A), { ...B, status: "OutOfSync", health: "Missing" }],
        failure: {
          reason: "ApplyFailed",
          message: "Service team-a/b: invalid: spec.ports[0].port: must be between 1 and 65535",
          stalled: true,
        },
      }),
    ],
    [
      "the same, with no ApplyFailed condition to quote: names what is not applied",
      input(
        {
          prev: { revision: R1, failedObjectHash: "h2", syncStatus: "OutOfSync" },
          desired: { revision: R2, objectHash: "h2" },
        },
        { resources: [synced(A), drifted(B)], drift: [driftOf(B)] },
      ),
      outcome({
        syncStatus: "OutOfSync",
        resources: [synced(A), drifted(B)],
        drift: [driftOf(B)],
        failure: {
          reason: "ApplyFailed",
          message: "the apply of this render failed; not applied: ConfigMap team-a/b",
          stalled: true,
        },
      }),
    ],
    [
      "the render whose apply failed, since made live by someone else (all Synced): no failure",
      input({
        prev: { revision: R1, failedObjectHash: "h2", syncStatus: "OutOfSync" },
        desired: { revision: R2, objectHash: "h2" },
      }),
      outcome({ syncStatus: "OutOfSync" }),
    ],
    [
      "refused dry runs of a render that never failed to apply: no failure",
      input(
        { desired: { revision: R2, objectHash: "h2" } },
        { errors: [{ ref: A, message: "spec.template is immutable", terminal: true }] },
      ),
      outcome({ syncStatus: "OutOfSync" }),
    ],
    [
      "the same revision renders differently (spec changed): OutOfSync",
      input({ desired: { revision: R1, objectHash: "h1b" } }),
      outcome({ syncStatus: "OutOfSync" }),
    ],
    [
      "a partial apply (no objectHash) is OutOfSync",
      input({ prev: { revision: R1, syncStatus: "OutOfSync" } }),
      outcome({ syncStatus: "OutOfSync" }),
    ],
    [
      "drift makes it OutOfSync and is recorded",
      input({}, { resources: [drifted(A), synced(B)], drift: [driftOf(A)] }),
      outcome({ syncStatus: "OutOfSync", resources: [drifted(A), synced(B)], drift: [driftOf(A)] }),
    ],
    [
      "a sync status the caller knows wins (Held)",
      input({ desired: { revision: R2, objectHash: "h2" }, syncStatus: "Held" }),
      outcome({ syncStatus: "Held" }),
    ],
    [
      "a correction clears the drift and marks the re-applied objects Synced",
      input(
        { corrected: { applied: new Set([refKey(A)]), event: corrected } },
        { resources: [drifted(A), synced(B)], drift: [driftOf(A)] },
      ),
      outcome({
        events: [corrected],
        driftCorrected: 1,
        corrected: { count: 1, objects: ["ConfigMap team-a/a: data.k by kubectl-edit"] },
      }),
    ],
    [
      "a correction that re-created a deleted object takes health from what it stored, not Missing",
      input(
        {
          health: { status: "Missing", reason: "ConfigMap team-a/a: not found" },
          corrected: {
            applied: new Set([refKey(A)]),
            event: corrected,
            health: {
              status: "Healthy",
              reason: "all 2 objects healthy",
              byKey: new Map([
                [refKey(A), { status: "Healthy" as const }],
                [refKey(B), { status: "Healthy" as const }],
              ]),
            },
          },
        },
        {
          resources: [
            { ...A, status: "OutOfSync", health: "Missing", message: "deleted" },
            synced(B),
          ],
          drift: [{ ...A, fields: [{ path: "(object)", desired: "exists", live: "deleted" }] }],
        },
      ),
      outcome({
        events: [corrected],
        driftCorrected: 1,
        corrected: { count: 1, objects: ["ConfigMap team-a/a: deleted"] },
      }),
    ],
    [
      "a correction leaves the lines it did not re-apply as they were",
      input(
        { corrected: { applied: new Set([refKey(A)]), event: corrected } },
        { resources: [drifted(A), drifted(B)], drift: [driftOf(A), driftOf(B)] },
      ),
      outcome({
        resources: [synced(A), drifted(B)],
        events: [corrected],
        driftCorrected: 1,
        corrected: { count: 1, objects: ["ConfigMap team-a/a: data.k by kubectl-edit"] },
      }),
    ],
    [
      "a correction that re-applied nothing counts none",
      input(
        { corrected: { applied: new Set(), event: corrected } },
        { resources: [drifted(A), synced(B)], drift: [driftOf(A)] },
      ),
      outcome({ resources: [drifted(A), synced(B)], events: [corrected] }),
    ],
    [
      "a correction of a render the source moved on from is still OutOfSync",
      input(
        {
          desired: { revision: R2, objectHash: "h2" },
          corrected: { applied: new Set([refKey(A)]), event: corrected },
        },
        { resources: [drifted(A), synced(B)], drift: [driftOf(A)] },
      ),
      outcome({
        syncStatus: "OutOfSync",
        events: [corrected],
        driftCorrected: 1,
        corrected: { count: 1, objects: ["ConfigMap team-a/a: data.k by kubectl-edit"] },
      }),
    ],
    [
      "nothing compared (fast path, restart): the last sync status and drift stand",
      input({
        prev: { ...prev, syncStatus: "OutOfSync", drift: [driftOf(A)] },
        desired: undefined,
      }),
      outcome({ syncStatus: "OutOfSync", drift: [driftOf(A)] }),
    ],
    [
      "nothing compared while Held: still Held",
      input({
        prev: { ...prev, syncStatus: "Held", heldRevision: R2, heldObjectHash: "h2" },
        desired: undefined,
      }),
      outcome({ syncStatus: "Held" }),
    ],
    [
      "nothing compared, never recorded: Unknown",
      input({ prev: {}, desired: undefined }),
      outcome({ syncStatus: "Unknown" }),
    ],
  ])("%s", (_name, given, expected) => {
    expect(observedOutcome(given)).toEqual(expected);
  });

  it("copies the inventory it was given", () => {
    const given = input();
    const out = observedOutcome(given);
    expect(out.inventory).toEqual(given.inventory);
    expect(out.inventory).not.toBe(given.inventory);
  });
});
