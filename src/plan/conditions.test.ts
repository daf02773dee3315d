import { describe, expect, it } from "vitest";
import type { Condition } from "../app/index.ts";
import { type ConditionInput, getCondition, setCondition } from "./conditions.ts";

const T0 = "2026-11-29T11:00:00.000Z";
const now = new Date("2026-11-29T12:00:00.000Z");
const NOW = now.toISOString();

const cond = (
  type: string,
  status: Condition["status"],
  reason: string,
  lastTransitionTime = T0,
): Condition => ({ type, status, reason, message: "", lastTransitionTime });

describe("setCondition", () => {
  it.each<[string, Condition[], ConditionInput, number | undefined, Condition[]]>([
    [
      "a new condition transitions now",
      [],
      { type: "Ready", status: "True", reason: "Synced", message: "ok" },
      3,
      [
        {
          type: "Ready",
          status: "True",
          reason: "Synced",
          message: "ok",
          lastTransitionTime: NOW,
          observedGeneration: 3,
        },
      ],
    ],
    [
      "same status keeps lastTransitionTime though reason and message change",
      [cond("Ready", "False", "Progressing")],
      { type: "Ready", status: "False", reason: "Degraded", message: "pod crashed" },
      3,
      [
        {
          type: "Ready",
          status: "False",
          reason: "Degraded",
          message: "pod crashed",
          lastTransitionTime: T0,
          observedGeneration: 3,
        },
      ],
    ],
    [
      "a status change transitions now",
      [cond("Ready", "False", "Progressing")],
      { type: "Ready", status: "True", reason: "Synced", message: "" },
      3,
      [
        {
          type: "Ready",
          status: "True",
          reason: "Synced",
          message: "",
          lastTransitionTime: NOW,
          observedGeneration: 3,
        },
      ],
    ],
    [
      "Unknown to False is a transition",
      [cond("Stalled", "Unknown", "Unknown")],
      { type: "Stalled", status: "False", reason: "Reconciled", message: "" },
      3,
      [
        {
          type: "Stalled",
          status: "False",
          reason: "Reconciled",
          message: "",
          lastTransitionTime: NOW,
          observedGeneration: 3,
        },
      ],
    ],
    [
      "no generation: observedGeneration left out, even if the old condition had one",
      [{ ...cond("Ready", "True", "Synced"), observedGeneration: 2 }],
      { type: "Ready", status: "True", reason: "Synced", message: "" },
      undefined,
      [cond("Ready", "True", "Synced")],
    ],
    [
      "other types are kept; order is Ready, Reconciling, Stalled, then others by name",
      [
        cond("Zeta", "True", "Z"),
        cond("Stalled", "False", "Reconciled"),
        cond("Alpha", "True", "A"),
        cond("Ready", "True", "Synced"),
      ],
      { type: "Reconciling", status: "True", reason: "Progressing", message: "" },
      undefined,
      [
        cond("Ready", "True", "Synced"),
        cond("Reconciling", "True", "Progressing", NOW),
        cond("Stalled", "False", "Reconciled"),
        cond("Alpha", "True", "A"),
        cond("Zeta", "True", "Z"),
      ],
    ],
  ])("%s", (_name, before, next, generation, expected) => {
    expect(setCondition(before, next, now, generation)).toEqual(expected);
  });

  it("does not change the array it was given", () => {
    const before = [cond("Stalled", "False", "Reconciled"), cond("Ready", "True", "Synced")];
    const copy = structuredClone(before);
    setCondition(before, { type: "Ready", status: "False", reason: "X", message: "" }, now, 1);
    expect(before).toEqual(copy);
  });

  it("cuts a message to 32768 characters (the metav1.Condition limit)", () => {
    const long = `${"a".repeat(32_768)}tail`;
    const [ready] = setCondition(
      [],
      { type: "Ready", status: "False", reason: "ApplyFailed", message: long },
      now,
      undefined,
    );
    expect(ready?.message).toBe("a".repeat(32_768));
  });

  it("cuts at 32768 UTF-8 bytes, never inside a character", () => {
    // "é" is 2 bytes and "😀" 4: 32767 bytes of ASCII + one of them does not fit whole.
    for (const wide of ["é", "😀"]) {
      const [ready] = setCondition(
        [],
        {
          type: "Ready",
          status: "False",
          reason: "ApplyFailed",
          message: `${"a".repeat(32_767)}${wide}`,
        },
        now,
        undefined,
      );
      expect(ready?.message).toBe("a".repeat(32_767));
    }
    const [fits] = setCondition(
      [],
      { type: "Ready", status: "False", reason: "ApplyFailed", message: `${"a".repeat(32_766)}é` },
      now,
      undefined,
    );
    expect(fits?.message).toBe(`${"a".repeat(32_766)}é`);
  });
});

describe("getCondition", () => {
  const conditions = [cond("Ready", "True", "Synced"), cond("Stalled", "False", "Reconciled")];
  it.each<[string, Condition[] | undefined, string, Condition | undefined]>([
    ["finds by type", conditions, "Stalled", cond("Stalled", "False", "Reconciled")],
    ["absent type", conditions, "Reconciling", undefined],
    ["no conditions at all", undefined, "Ready", undefined],
  ])("%s", (_name, list, type, expected) => {
    expect(getCondition(list, type)).toEqual(expected);
  });
});
