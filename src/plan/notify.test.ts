import { describe, expect, it } from "vitest";
import type { AppStatus } from "../app/index.ts";
import { transitions } from "./notify.ts";

const ready = (
  status: "True" | "False",
  reason: string,
  message = "m",
): AppStatus["conditions"] => [
  { type: "Ready", status, reason, message, lastTransitionTime: "2026-11-29T00:00:00Z" },
];
const A = "a".repeat(40);
const B = "b".repeat(40);

describe("transitions", () => {
  it("announces a new revision, once", () => {
    const before: AppStatus = {
      revision: A,
      healthStatus: "Healthy",
      conditions: ready("True", "Synced"),
    };
    const after: AppStatus = { ...before, revision: B };
    expect(transitions(before, after, 0)).toEqual([
      { event: "Synced", message: "applied revision bbbbbbb" },
    ]);
    expect(transitions(after, after, 0)).toEqual([]);
  });

  it("a partly failed apply is Failed, not Synced", () => {
    const before: AppStatus = { revision: A, conditions: ready("True", "Synced") };
    const after: AppStatus = {
      revision: B,
      conditions: ready("False", "ApplyFailed", "Widget w: no kind"),
    };
    expect(transitions(before, after, 0)).toEqual([
      { event: "Failed", message: "ApplyFailed: Widget w: no kind" },
    ]);
  });

  it("a steady failure alerts once; a different failure alerts again", () => {
    const failing: AppStatus = { conditions: ready("False", "RenderFailed", "x.yaml:1: bad") };
    expect(transitions({}, failing, 0)).toHaveLength(1);
    expect(transitions(failing, failing, 0)).toEqual([]);
    const other: AppStatus = { conditions: ready("False", "RenderFailed", "y.yaml:2: bad") };
    expect(transitions(failing, other, 0)).toEqual([
      { event: "Failed", message: "RenderFailed: y.yaml:2: bad" },
    ]);
  });

  it("a failure that clears without a new apply is announced once (Synced, in sync again)", () => {
    const failing: AppStatus = {
      revision: A,
      observedRevision: B,
      conditions: ready("False", "RenderFailed", "x.yaml:1: bad"),
    };
    const fixed: AppStatus = { ...failing, conditions: ready("True", "Synced") };
    expect(transitions(failing, fixed, 0)).toEqual([
      { event: "Synced", message: "in sync again at revision bbbbbbb" },
    ]);
    expect(transitions(fixed, fixed, 0)).toEqual([]);
    const applied: AppStatus = { ...fixed, revision: B };
    expect(transitions(failing, applied, 0)).toEqual([
      { event: "Synced", message: "applied revision bbbbbbb" },
    ]);
  });

  it("Degraded, Recovered, Held and DriftCorrected on their transitions only", () => {
    expect(
      transitions({ healthStatus: "Healthy" }, { healthStatus: "Degraded", healthReason: "r" }, 0),
    ).toEqual([{ event: "Degraded", message: "r" }]);
    expect(transitions({ healthStatus: "Degraded" }, { healthStatus: "Healthy" }, 0)).toEqual([
      { event: "Recovered", message: "healthy again" },
    ]);
    const preview = [
      {
        apiVersion: "v1",
        kind: "Service",
        name: "web",
        status: "OutOfSync" as const,
        message: "will be created",
      },
    ];
    expect(transitions({}, { heldRevision: B, resources: preview }, 0)).toEqual([
      {
        event: "Held",
        message: "revision bbbbbbb is waiting for approval",
        held: { revision: B, preview },
      },
    ]);
    expect(transitions({ heldRevision: B }, { heldRevision: B }, 2)).toEqual([
      { event: "DriftCorrected", message: "re-applied 2 drifted object(s)" },
    ]);
  });
});
