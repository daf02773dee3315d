import { describe, expect, it } from "vitest";
import type { PendingNotification } from "../app/index.ts";
import {
  duePending,
  MAX_PENDING,
  nextPending,
  pendingTransition,
  REDELIVERY_WINDOW_MS,
  retryAt,
} from "./redelivery.ts";

const T0 = new Date("2026-12-01T10:00:00.000Z");
const later = (ms: number) => new Date(T0.getTime() + ms);
const pending = (at: Date, attempts = 1, event: "Failed" | "Synced" = "Failed") =>
  ({ event, message: "m", at: at.toISOString(), attempts }) satisfies PendingNotification;

describe("redelivery", () => {
  it("retries within the window of 1 hour and gives up after it", () => {
    const young = pending(later(-59 * 60_000));
    const old = pending(later(-REDELIVERY_WINDOW_MS));
    const broken = { ...pending(T0), at: "not a time" };
    expect(duePending([young, old, broken], T0)).toEqual({
      retry: [young],
      expired: [old, broken],
    });
    expect(duePending(undefined, T0)).toEqual({ retry: [], expired: [] });
  });

  it("marks a late message with the time it happened", () => {
    expect(pendingTransition(pending(T0))).toEqual({
      event: "Failed",
      message: "m (delayed: happened at 2026-12-01T10:00:00.000Z)",
    });
  });

  it("a Held one gets its preview (and buttons) only while its revision is still held", () => {
    const held = { ...pending(T0), event: "Held" as const, revision: "r2" };
    const resources = [
      { apiVersion: "v1", kind: "ConfigMap", name: "c", status: "OutOfSync" as const },
    ];
    expect(pendingTransition(held, { heldRevision: "r2", resources }).held).toEqual({
      revision: "r2",
      preview: resources,
    });
    expect(pendingTransition(held, { heldRevision: "r3", resources }).held).toBeUndefined();
    const kept = nextPending(
      [],
      [
        {
          target: "slack",
          transition: { event: "Held", message: "h", held: { revision: "r2", preview: [] } },
        },
      ],
      T0,
    );
    expect(kept.pending[0]?.revision).toBe("r2");
  });

  it("keeps what failed again (one more attempt) and what failed now, newest last, at most 10", () => {
    const first = pending(later(-60_000), 2);
    const { pending: queue, dropped } = nextPending(
      [first],
      [{ target: "slack", transition: { event: "Synced", message: "applied revision abc1234" } }],
      T0,
    );
    expect(queue).toEqual([
      { ...first, attempts: 3 },
      {
        target: "slack",
        event: "Synced",
        message: "applied revision abc1234",
        at: T0.toISOString(),
        attempts: 1,
      },
    ]);
    expect(dropped).toEqual([]);

    const many = Array.from({ length: MAX_PENDING }, (_, i) => pending(later(-i * 1000)));
    const capped = nextPending(
      many,
      [{ target: "slack", transition: { event: "Held", message: "h" } }],
      T0,
    );
    expect(capped.pending).toHaveLength(MAX_PENDING);
    expect(capped.pending.at(-1)?.event).toBe("Held");
    expect(capped.dropped).toEqual([{ ...many[0]!, attempts: 2 }]);
  });

  it("a long message is cut so status stays small", () => {
    const { pending: queue } = nextPending(
      [],
      [{ target: "slack", transition: { event: "Failed", message: "x".repeat(5000) } }],
      T0,
    );
    expect(queue[0]?.message).toHaveLength(512);
    expect(queue[0]?.message.endsWith("…")).toBe(true);
  });

  it("retries after 30 s, doubling per attempt, at most 10 min, never past the window", () => {
    expect(retryAt([], T0)).toBeUndefined();
    expect(retryAt([pending(T0, 1)], T0)).toEqual(later(30_000));
    expect(retryAt([pending(T0, 3)], T0)).toEqual(later(120_000));
    expect(retryAt([pending(T0, 9)], T0)).toEqual(later(600_000));
    const nearlyExpired = pending(later(-REDELIVERY_WINDOW_MS + 5_000), 9);
    expect(retryAt([nearlyExpired], T0)).toEqual(later(5_000));
  });
});
