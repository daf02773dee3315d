import { describe, expect, it } from "vitest";
import { AppSpec, type Operation, type OperationState } from "../app/index.ts";
import { operationFinished, operationOutcome, pendingOperation } from "./operations.ts";

const now = new Date("2026-11-29T12:00:00.000Z");
const NOW = now.toISOString();
const state = (id: string, phase: OperationState["phase"]): OperationState => ({
  id,
  type: "Sync",
  phase,
});

describe("operationFinished", () => {
  it.each<[string, OperationState | undefined, unknown, boolean]>([
    ["no state", undefined, "op-1", false],
    ["Succeeded with the same id", state("op-1", "Succeeded"), "op-1", true],
    ["Failed with the same id", state("op-1", "Failed"), "op-1", true],
    ["Running is not finished", state("op-1", "Running"), "op-1", false],
    ["another id", state("op-0", "Succeeded"), "op-1", false],
  ])("%s → %s", (_name, s, id, expected) => {
    expect(operationFinished(s, id)).toBe(expected);
  });
});

describe("pendingOperation", () => {
  const sync: Operation = { id: "op-1", type: "Sync" };
  const spec = (operation?: Operation) =>
    AppSpec.parse({
      source: { git: { url: "https://git.example/o/r.git" } },
      ...(operation ? { operation } : {}),
    });
  it.each<[string, AppSpec, OperationState | undefined, Operation | undefined]>([
    ["no operation", spec(), undefined, undefined],
    ["a new operation", spec(sync), undefined, sync],
    ["consumed: not pending", spec(sync), state("op-1", "Succeeded"), undefined],
    ["refused earlier: not pending", spec(sync), state("op-1", "Failed"), undefined],
    ["still Running: pending", spec(sync), state("op-1", "Running"), sync],
    ["a new id after another finished", spec(sync), state("op-0", "Failed"), sync],
  ])("%s", (_name, s, operationState, expected) => {
    expect(pendingOperation(s, operationState ? { operationState } : {})).toEqual(expected);
  });
});

describe("operationOutcome", () => {
  it.each<[string, Operation, "Succeeded" | "Failed", string, ReturnType<typeof operationOutcome>]>(
    [
      [
        "success: a Normal event; revision and requester recorded",
        { id: "op-1", type: "Rollback", revision: "abc", requestedBy: "ana", requestedAt: "x" },
        "Succeeded",
        "applied abc",
        {
          state: {
            id: "op-1",
            type: "Rollback",
            phase: "Succeeded",
            message: "applied abc",
            startedAt: NOW,
            finishedAt: NOW,
            revision: "abc",
            requestedBy: "ana",
          },
          event: { type: "Normal", reason: "OperationSucceeded", message: "Rollback: applied abc" },
        },
      ],
      [
        "failure: a Warning event; no revision or requester when the operation had none",
        { id: "op-2", type: "Approve" },
        "Failed",
        "nothing is held for approval",
        {
          state: {
            id: "op-2",
            type: "Approve",
            phase: "Failed",
            message: "nothing is held for approval",
            startedAt: NOW,
            finishedAt: NOW,
          },
          event: {
            type: "Warning",
            reason: "OperationFailed",
            message: "Approve: nothing is held for approval",
          },
        },
      ],
    ],
  )("%s", (_name, op, phase, message, expected) => {
    expect(operationOutcome(op, phase, message, now)).toEqual(expected);
  });
});
