import { describe, expect, it } from "vitest";
import { AppSpec, type AppStatus } from "../app/index.ts";
import { isSteady } from "./steady.ts";

const R0 = "0".repeat(40);
const R1 = "1".repeat(40);

function spec(over: Record<string, unknown> = {}): AppSpec {
  return AppSpec.parse({ source: { git: { url: "https://git.example/o/r.git" } }, ...over });
}
/** The last full run saw R1 at generation 2 and applied it. */
const steady: AppStatus = {
  observedGeneration: 2,
  observedRevision: R1,
  observedObjectHash: "h1",
  revision: R1,
  objectHash: "h1",
  syncStatus: "Synced",
};
/** As steady, but the source's R1 is not the applied revision (R0 is). */
const notApplied: AppStatus = {
  ...steady,
  revision: R0,
  objectHash: "h0",
  syncStatus: "OutOfSync",
};
const op = { operation: { id: "op-1", type: "Sync" } };

describe("isSteady", () => {
  it.each<[string, AppSpec, AppStatus, number | undefined, string, boolean]>([
    ["nothing changed and not yet due", spec(), steady, 2, R1, true],
    ["a pending operation", spec(op), steady, 2, R1, false],
    [
      "an operation already consumed",
      spec(op),
      { ...steady, operationState: { id: "op-1", type: "Sync", phase: "Succeeded" } },
      2,
      R1,
      true,
    ],
    [
      "selfHeal owes a drift comparison",
      spec({ syncPolicy: { selfHeal: true } }),
      steady,
      2,
      R1,
      false,
    ],
    ["a failure being retried", spec(), { ...steady, failures: 1 }, 2, R1, false],
    ["zero failures", spec(), { ...steady, failures: 0 }, 2, R1, true],
    [
      "a prune waits for a rollout",
      spec(),
      {
        ...steady,
        inventory: [
          {
            apiVersion: "v1",
            kind: "ConfigMap",
            name: "c-1",
            prunePending: "2026-01-01T00:00:00Z",
          },
        ],
      },
      2,
      R1,
      false,
    ],
    ["the spec changed (generation)", spec(), steady, 3, R1, false],
    ["the App has no generation", spec(), steady, undefined, R1, false],
    ["the source moved to another revision", spec(), steady, 2, R0, false],
    [
      "the last run did not render (no observedObjectHash)",
      spec(),
      (({ observedObjectHash: _, ...s }) => s)(steady),
      2,
      R1,
      false,
    ],
    [
      "automated and the revision is not applied: the gates would apply it",
      spec(),
      notApplied,
      2,
      R1,
      false,
    ],
    ["not applied, but frozen", spec({ freeze: true }), notApplied, 2, R1, true],
    [
      "not applied, but manual sync",
      spec({ syncPolicy: { automated: false } }),
      notApplied,
      2,
      R1,
      true,
    ],
    [
      "not applied, but held for approval",
      spec({ syncPolicy: { requiresApproval: true } }),
      { ...notApplied, heldRevision: R1, heldObjectHash: "h1", syncStatus: "Held" },
      2,
      R1,
      true,
    ],
    [
      "not applied, but a Rollback moved away from it",
      spec(),
      { ...notApplied, rolledBackFrom: R1 },
      2,
      R1,
      true,
    ],
    [
      "another commit whose render is the applied one",
      spec(),
      { ...steady, revision: R0 },
      2,
      R1,
      true,
    ],
    [
      "not applied, but it renders what a Rollback moved away from (another commit)",
      spec(),
      { ...notApplied, rolledBackFrom: "2".repeat(40), rolledBackFromObjectHash: "h1" },
      2,
      R1,
      true,
    ],
    [
      "a Rollback moved away from another render",
      spec(),
      { ...notApplied, rolledBackFrom: R1, rolledBackFromObjectHash: "h2" },
      2,
      R1,
      false,
    ],
    [
      "a Rollback moved away from another revision",
      spec(),
      { ...notApplied, rolledBackFrom: "2".repeat(40) },
      2,
      R1,
      false,
    ],
  ])("%s → %s", (_name, s, prev, generation, revision, expected) => {
    expect(isSteady(s, prev, generation, revision, false)).toBe(expected);
  });

  it("a run that owes a full comparison (its slot came, or a person asked) is never steady", () => {
    expect(isSteady(spec(), steady, 2, R1, false)).toBe(true);
    expect(isSteady(spec(), steady, 2, R1, true)).toBe(false);
    expect(isSteady(spec({ freeze: true }), notApplied, 2, R1, true)).toBe(false);
  });
});
