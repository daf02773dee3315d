// The gates for Reject: consuming it, and not holding the rejected revision again.
import { describe, expect, it } from "vitest";
import type { AppSpec, AppStatus, Operation } from "../app/index.ts";
import { validateSpec } from "../app/index.ts";
import { decide } from "./gates.ts";

const HELD = "h".repeat(40);
const OTHER = "o".repeat(40);
const spec = (extra: Record<string, unknown> = {}): AppSpec => {
  const r = validateSpec({
    source: { git: { url: "https://git.example/r.git" } },
    syncPolicy: { requiresApproval: true },
    ...extra,
  });
  if (!r.ok) throw new Error("bad spec");
  return r.value;
};
const op = (type: Operation["type"], revision?: string): Operation => ({
  id: "op-1",
  type,
  requestedBy: "slack:U1",
  ...(revision ? { revision } : {}),
});
const held: AppStatus = {
  revision: OTHER,
  objectHash: "h0",
  heldRevision: HELD,
  heldObjectHash: "h1",
};
const rejected: AppStatus = {
  revision: OTHER,
  objectHash: "h0",
  rejectedRevision: HELD,
  rejectedObjectHash: "h1",
};

describe("decide: Reject and rejected revisions", () => {
  it.each([
    [
      "Reject of the held revision",
      spec({ operation: op("Reject", HELD) }),
      held,
      { revision: HELD, objectHash: "h1" },
      { action: "reject", revision: HELD, objectHash: "h1", reason: "Rejected" },
    ],
    [
      "Reject without a revision rejects what is held",
      spec({ operation: op("Reject") }),
      held,
      { revision: HELD, objectHash: "h1" },
      { action: "reject", revision: HELD, reason: "Rejected" },
    ],
    [
      "a stale Reject fails",
      spec({ operation: op("Reject", OTHER) }),
      held,
      { revision: HELD, objectHash: "h1" },
      {
        action: "none",
        reason: "OperationRefused",
        message: `stale rejection: ${OTHER} is not the held revision ${HELD}`,
      },
    ],
    [
      "a Reject with nothing held fails",
      spec({ operation: op("Reject") }),
      {},
      { revision: HELD, objectHash: "h1" },
      { action: "none", reason: "OperationRefused", message: "nothing is held to reject" },
    ],
    [
      "a Reject on a frozen App fails",
      spec({ operation: op("Reject"), freeze: true }),
      held,
      { revision: HELD, objectHash: "h1" },
      { action: "none", reason: "OperationRefused" },
    ],
    [
      "the rejected revision and set are not held again",
      spec(),
      rejected,
      { revision: HELD, objectHash: "h1" },
      { action: "none", reason: "Rejected" },
    ],
    [
      "the rejected revision rendering differently is a new proposal",
      spec(),
      rejected,
      { revision: HELD, objectHash: "h2" },
      { action: "hold", revision: HELD },
    ],
    [
      "a newer revision after a rejection is held",
      spec(),
      rejected,
      { revision: "n".repeat(40), objectHash: "h3" },
      { action: "hold", revision: "n".repeat(40) },
    ],
    [
      "a Sync after a rejection applies the head anyway",
      spec({ operation: op("Sync") }),
      rejected,
      { revision: HELD, objectHash: "h1" },
      { action: "apply", revision: HELD, reason: "Sync" },
    ],
  ])("%s", (_, s, status, desired, expected) => {
    expect(decide(s, status, desired, new Date("2026-11-20T12:00:00Z"))).toMatchObject(expected);
  });
});
