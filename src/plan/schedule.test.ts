import { describe, expect, it } from "vitest";
import type { App, AppRow } from "../app/index.ts";
import {
  backoffMs,
  cronPeriodMs,
  dueAt,
  failedRetryAt,
  followUpSeconds,
  hash53,
  isDue,
  lastSlot,
  nextRunAt,
  shardOf,
  type Tick,
  tickAt,
} from "./schedule.ts";

const MIN = 60_000;
const T0 = Date.parse("2026-11-29T12:00:00.000Z");
const at = (ms: number) => new Date(T0 + ms).toISOString();
const uid = (i: number) => `00000000-0000-4000-8000-${i.toString(16).padStart(12, "0")}`;
const tick = (ms: number, periodMs = MIN): Tick => ({ at: T0 + ms, periodMs });

/** A steady App: reconciled at generation 2, healthy, interval 5m. */
function row(over: Partial<AppRow> = {}): AppRow {
  return {
    namespace: "team-a",
    name: "web",
    uid: uid(1),
    generation: 2,
    observedGeneration: 2,
    deleting: false,
    interval: "5m",
    healthStatus: "Healthy",
    lastReconciledAt: at(-3 * MIN),
    ...over,
  };
}

describe("hash53", () => {
  it("is the same number for the same text, and differs with the text or the seed", () => {
    expect(hash53(uid(7))).toBe(hash53(uid(7)));
    expect(hash53(uid(7))).not.toBe(hash53(uid(8)));
    expect(hash53(uid(7), 1)).not.toBe(hash53(uid(7)));
    expect(Number.isSafeInteger(hash53("x".repeat(1000)))).toBe(true);
  });
});

describe("lastSlot", () => {
  it("is the App's slot at or before t, one interval apart, the same offset at every time", () => {
    const r = row();
    const s = lastSlot(r, T0);
    expect(s).toBeLessThanOrEqual(T0);
    expect(s).toBeGreaterThan(T0 - 5 * MIN);
    expect(lastSlot(r, s)).toBe(s);
    expect(lastSlot(r, s - 1)).toBe(s - 5 * MIN);
    expect(lastSlot(r, T0 + 17 * 5 * MIN)).toBe(s + 17 * 5 * MIN);
    expect(lastSlot(r, T0 - 3 * 5 * MIN)).toBe(s - 3 * 5 * MIN);
  });

  it("spreads 10,000 Apps evenly over the interval (each minute of 5 gets 20% ± 1.5%)", () => {
    const perMinute = [0, 0, 0, 0, 0];
    for (let i = 0; i < 10_000; i++) {
      const s = lastSlot(row({ uid: uid(i) }), T0);
      const minute = Math.floor((s - (T0 - 5 * MIN)) / MIN) % 5;
      perMinute[minute] = (perMinute[minute] ?? 0) + 1;
    }
    for (const n of perMinute) expect(Math.abs(n - 2000)).toBeLessThan(150);
  });

  it("uses namespace/name without a uid, and 5m for an interval that does not parse", () => {
    const noUid = row({ uid: undefined as unknown as string });
    delete noUid.uid;
    expect(lastSlot(noUid, T0)).toBe(lastSlot(noUid, T0));
    expect(lastSlot(noUid, T0)).not.toBe(lastSlot({ ...noUid, name: "other" }, T0));
    const bad = row({ interval: "soon" });
    expect(lastSlot(bad, T0) - lastSlot(bad, T0 - 1 - (T0 - lastSlot(bad, T0)))).toBe(5 * MIN);
  });
});

describe("dueAt", () => {
  it("compares each App exactly once per interval when ticks cover it without gaps", () => {
    for (let i = 0; i < 500; i++) {
      const r = row({ uid: uid(i) });
      const slotTicks = [0, 1, 2, 3, 4].filter((k) => dueAt(r, tick(k * MIN))?.compare);
      expect(slotTicks).toHaveLength(1);
      expect(dueAt(r, tick(slotTicks[0]! * MIN))).toEqual({ reason: "slot", compare: true });
    }
  });

  it("with ticks every 5 minutes and a 1-minute interval, every tick compares", () => {
    const r = row({ interval: "1m" });
    for (let k = 0; k < 4; k++) {
      expect(dueAt(r, tick(k * 5 * MIN, 5 * MIN))).toEqual({ reason: "slot", compare: true });
    }
  });

  it.each<[string, Partial<AppRow>, string]>([
    ["being deleted", { deleting: true }, "deleting"],
    ["never reconciled", { observedGeneration: undefined as unknown as number }, "new"],
    ["the spec changed", { generation: 3 }, "spec"],
    ["Progressing (looked at every tick)", { healthStatus: "Progressing" }, "progressing"],
  ])("%s → due (%s), whatever the slot", (_name, over, reason) => {
    const r = { ...row(), ...over };
    if (over.observedGeneration === undefined && "observedGeneration" in over)
      delete r.observedGeneration;
    for (let k = 0; k < 5; k++) expect(dueAt(r, tick(k * MIN))?.reason).toBe(reason);
    // ... and the full comparison is still owed at the slot only.
    const compared = [0, 1, 2, 3, 4].filter((k) => dueAt(r, tick(k * MIN))?.compare);
    expect(compared).toHaveLength(1);
  });

  it("a failing App waits its backoff from the failed run, then is due every tick", () => {
    const failed = row({ failures: 1, lastReconciledAt: at(0), healthStatus: "Degraded" });
    expect(dueAt(failed, { at: T0 + 29_999, periodMs: MIN })).toBeUndefined();
    expect(dueAt(failed, { at: T0 + 30_000, periodMs: MIN })?.reason).toBe("retry");
    expect(dueAt(failed, { at: T0 + 10 * MIN, periodMs: MIN })?.reason).toBe("retry");
    const third = row({ failures: 3, lastReconciledAt: at(0) });
    expect(dueAt(third, { at: T0 + 119_999, periodMs: MIN })).toBeUndefined();
    expect(dueAt(third, { at: T0 + 120_000, periodMs: MIN })?.reason).toBe("retry");
  });

  it("a failing App is not retried before its backoff even when its slot comes", () => {
    const failed = row({ failures: 6, lastReconciledAt: at(0), interval: "1h" });
    for (let k = 0; k < 10; k++) expect(dueAt(failed, tick(k * MIN))).toBeUndefined();
    expect(dueAt(failed, tick(10 * MIN))?.reason).toBe("retry");
  });

  it("a failing App whose failure time is unknown is retried at once", () => {
    const r = row({ failures: 2 });
    delete r.lastReconciledAt;
    expect(dueAt(r, tick(0))?.reason).toBe("retry");
  });

  it("isDue reads a full App the same way", () => {
    const app: App = {
      apiVersion: "plumb.dev/v1alpha1",
      kind: "App",
      metadata: { namespace: "team-a", name: "web", uid: uid(1), generation: 2 },
      spec: { interval: "5m" },
      status: { observedGeneration: 2, healthStatus: "Healthy" },
    };
    const ticks = [0, 1, 2, 3, 4].map((k) => isDue(app, tick(k * MIN)));
    expect(ticks.filter(Boolean)).toHaveLength(1);
    expect(isDue({ ...app, status: { observedGeneration: 1 } }, tick(0))).toBe(true);
    expect(
      isDue({ ...app, metadata: { ...app.metadata, deletionTimestamp: at(0) } }, tick(0)),
    ).toBe(true);
  });
});

describe("backoffMs and failedRetryAt", () => {
  it.each([
    [0, "1h", 0],
    [1, "1h", 30_000],
    [2, "1h", 60_000],
    [5, "1h", 480_000],
    [6, "1h", 600_000],
    [1000, "1h", 600_000],
    [3, "1m", 60_000],
    [1, "10s", 10_000],
  ])("%d failures, interval %s → %d ms", (failures, interval, ms) => {
    expect(backoffMs(failures, parseInterval(interval))).toBe(ms);
    const r = row({ failures, interval, lastReconciledAt: at(0) });
    expect(failedRetryAt(r, T0)).toBe(failures > 0 ? T0 + ms : undefined);
  });
});

function parseInterval(text: string): number {
  return text.endsWith("h")
    ? Number(text.slice(0, -1)) * 3_600_000
    : text.endsWith("m")
      ? Number(text.slice(0, -1)) * MIN
      : Number(text.slice(0, -1)) * 1000;
}

describe("nextRunAt", () => {
  it("is the tick at which the App's slot next comes", () => {
    for (let i = 0; i < 50; i++) {
      const r = row({ uid: uid(i) });
      const next = nextRunAt(r, new Date(T0)).getTime();
      expect(next).toBeGreaterThan(T0);
      expect(next).toBeLessThanOrEqual(T0 + 5 * MIN);
      expect(next % MIN).toBe(0);
      expect(dueAt(r, { at: next, periodMs: MIN })?.compare).toBe(true);
      for (let t = T0 + MIN - (T0 % MIN); t < next; t += MIN) {
        expect(dueAt(r, { at: t, periodMs: MIN })).toBeUndefined();
      }
    }
  });

  it("now for a changed spec; the retry tick for a failing App; the next tick while Progressing", () => {
    const now = new Date(T0 + 10_000);
    expect(nextRunAt(row({ generation: 3 }), now)).toEqual(now);
    expect(nextRunAt(row({ failures: 1, lastReconciledAt: at(0) }), now).getTime()).toBe(T0 + MIN);
    expect(nextRunAt(row({ failures: 4, lastReconciledAt: at(0) }), now).getTime()).toBe(
      T0 + 4 * MIN,
    );
    expect(nextRunAt(row({ healthStatus: "Progressing" }), now).getTime()).toBe(T0 + MIN);
  });
});

describe("tickAt", () => {
  it("puts a process started late on the grid of its period", () => {
    expect(tickAt(new Date(T0 + 42_000))).toEqual({ at: T0, periodMs: MIN });
    expect(tickAt(new Date(T0 + 4 * MIN + 1), 5 * MIN)).toEqual({ at: T0, periodMs: 5 * MIN });
  });
});

describe("shardOf", () => {
  it("puts every App in one shard, about evenly", () => {
    const counts = [0, 0, 0, 0];
    for (let i = 0; i < 8000; i++) {
      const s = shardOf(row({ uid: uid(i) }), 4);
      expect(s).toBe(shardOf(row({ uid: uid(i) }), 4));
      counts[s] = (counts[s] ?? 0) + 1;
    }
    for (const n of counts) expect(Math.abs(n - 2000)).toBeLessThan(150);
  });
});

describe("cronPeriodMs", () => {
  it.each<[string, number | undefined]>([
    ["* * * * *", MIN],
    ["*/5 * * * *", 5 * MIN],
    ["*/15 * * * *", 15 * MIN],
    ["0 * * * *", 60 * MIN],
    ["0 */2 * * *", 120 * MIN],
    ["*/7 * * * *", undefined],
    ["5 * * * *", undefined],
    ["0 9 * * *", undefined],
    ["* * * * 1-5", undefined],
    ["*/0 * * * *", undefined],
    ["nonsense", undefined],
  ])("%s → %s", (cron, ms) => {
    expect(cronPeriodMs(cron)).toBe(ms);
  });
});

describe("followUpSeconds", () => {
  it("asks a Progressing App that did not fail to run again in 30 s", () => {
    expect(followUpSeconds({ healthStatus: "Progressing" })).toBe(30);
  });

  it("asks for nothing when healthy or failing (the schedule's backoff)", () => {
    expect(followUpSeconds({ healthStatus: "Healthy" })).toBeUndefined();
    expect(followUpSeconds({ healthStatus: "Progressing", failures: 2 })).toBeUndefined();
    expect(followUpSeconds({})).toBeUndefined();
  });
});

describe("sync windows and redelivery (times kept in status)", () => {
  /** A steady App (interval 1h) whose slot falls in none of the ticks T0 … T0+10m. */
  function quiet(over: Partial<AppRow>): AppRow {
    for (let i = 0; ; i++) {
      const base = row({ uid: uid(i), interval: "1h" });
      const ticks = [...Array(11).keys()].map((k) => dueAt(base, tick(k * MIN)));
      if (ticks.every((d) => d === undefined)) return { ...base, ...over };
    }
  }

  it("a sync window that held a sync back makes the App due once it opened, with a full comparison", () => {
    const r = quiet({ nextSyncWindow: at(90_000) });
    expect(dueAt(r, tick(MIN))).toBeUndefined();
    expect(dueAt(r, tick(2 * MIN))).toEqual({ reason: "window", compare: true });
    expect(dueAt(r, tick(7 * MIN))).toEqual({ reason: "window", compare: true });
    expect(nextRunAt(r, new Date(T0 + 10_000))).toEqual(new Date(T0 + 2 * MIN));
  });

  it("undelivered notifications make the App due at status.redeliverAt, not before", () => {
    const r = quiet({ redeliverAt: at(MIN + 30_000) });
    expect(dueAt(r, tick(MIN))).toBeUndefined();
    expect(dueAt(r, tick(2 * MIN))).toEqual({ reason: "redeliver", compare: false });
    expect(nextRunAt(r, new Date(T0 + 10_000))).toEqual(new Date(T0 + 2 * MIN));
  });

  it("a malformed time in status is ignored", () => {
    const r = quiet({ nextSyncWindow: "soon", redeliverAt: "" });
    for (let k = 0; k <= 10; k++) expect(dueAt(r, tick(k * MIN))).toBeUndefined();
  });
});
