import { describe, expect, it } from "vitest";
import type { AppStatus } from "../app/index.ts";
import { normalizeMessage, sameMessage, steadyMessage } from "./messages.ts";
import { composeStatus, type RunRecord, statusChanged } from "./status.ts";

// As the HPA controller of the local control plane wrote it on successive reads.
const HPA_A =
  "AmbiguousSelector: pods by selector app=backend are controlled by multiple HPAs: [webapp/frontend webapp/backend]";
const HPA_B =
  "AmbiguousSelector: pods by selector app=backend are controlled by multiple HPAs: [webapp/backend webapp/frontend]";

describe("normalizeMessage", () => {
  it("sorts the items of Go-printed lists, and nothing else", () => {
    expect(normalizeMessage(HPA_A)).toBe(normalizeMessage(HPA_B));
    expect(normalizeMessage(HPA_A)).toBe(
      "AmbiguousSelector: pods by selector app=backend are controlled by multiple HPAs: [webapp/backend webapp/frontend]",
    );
    expect(normalizeMessage("pods [c b a] and [z y]")).toBe("pods [a b c] and [y z]");
    expect(normalizeMessage("one [item] stays; line\nbreaks  stay")).toBe(
      "one [item] stays; line\nbreaks  stay",
    );
    expect(normalizeMessage("nested [[b a] c] is left")).toBe("nested [[a b] c] is left");
  });
});

describe("sameMessage", () => {
  it.each<[string, string, string, boolean]>([
    ["the HPA's set in another order", HPA_A, HPA_B, true],
    [
      "clauses in another order",
      "cpu missing; memory missing",
      "memory missing; cpu missing",
      true,
    ],
    ["a comma list in another order", "a not ready, b not ready", "b not ready, a not ready", true],
    // A list glued to its first clause is not taken apart (the status is written once more).
    ["a list inside a clause", "waiting for a, b and c", "waiting for c, a and b", false],
    ["other spacing", "1 of 2  replicas\tready", "1 of 2 replicas ready", true],
    ["a number changed", "1 of 2 replicas ready", "2 of 2 replicas ready", false],
    ["numbers swapped", "desired 2, current 3", "desired 3, current 2", false],
    [
      "words moved between clauses",
      "Pod a ready; Pod b not ready",
      "Pod b ready; Pod a not ready",
      false,
    ],
    ["a set that lost an item", "[a b c]", "[a b]", false],
  ])("%s → %s", (_name, a, b, same) => {
    expect(sameMessage(a, b)).toBe(same);
    expect(sameMessage(b, a)).toBe(same);
  });
});

describe("steadyMessage", () => {
  it("keeps the previous text for the same state, takes the new one (normalised) otherwise", () => {
    expect(steadyMessage(HPA_A, HPA_B)).toBe(HPA_A);
    expect(steadyMessage(undefined, HPA_A)).toBe(normalizeMessage(HPA_A));
    expect(steadyMessage("1 of 2 ready", "2 of 2 ready")).toBe("2 of 2 ready");
  });
});

describe("composeStatus with messages copied from objects", () => {
  const hpa = {
    apiVersion: "autoscaling/v2",
    kind: "HorizontalPodAutoscaler",
    namespace: "webapp",
  };
  const run = (message: string): RunRecord => ({
    now: new Date("2026-11-29T12:00:00Z"),
    generation: 1,
    interval: "5m",
    observedRevision: "a".repeat(40),
    inventory: [{ ...hpa, name: "frontend" }],
    resources: [{ ...hpa, name: "frontend", status: "Synced", health: "Degraded", message }],
    health: { status: "Degraded", reason: `HorizontalPodAutoscaler webapp/frontend: ${message}` },
    syncStatus: "Synced",
  });

  it("an HPA whose message changes word order between reads gives the same status (no write)", () => {
    const first = composeStatus({}, run(HPA_A));
    for (const [i, message] of [HPA_B, HPA_A, HPA_B, HPA_B, HPA_A, HPA_B].entries()) {
      const later = { ...run(message), now: new Date(Date.parse("2026-11-29T12:05:00Z") + i) };
      const next = composeStatus(first, later);
      expect(statusChanged(first, next)).toBe(false);
    }
    const ready = first.conditions?.find((c) => c.type === "Ready");
    expect(ready?.message).toContain("[webapp/backend webapp/frontend]");
  });

  it("a real change of the message is still written", () => {
    const first: AppStatus = composeStatus({}, run(HPA_A));
    const healed = composeStatus(first, {
      ...run("ValidMetricFound: the HPA was able to compute the replica count"),
      health: { status: "Healthy", reason: "all 1 objects healthy" },
    });
    expect(statusChanged(first, healed)).toBe(true);
    expect(healed.resources?.[0]?.message).toBe(
      "ValidMetricFound: the HPA was able to compute the replica count",
    );
  });
});
