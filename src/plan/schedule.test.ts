import { describe, expect, it } from "vitest";
import type { App, AppStatus } from "../app/index.ts";
import { followUpSeconds, isDue, nextReconcileAt } from "./schedule.ts";

const now = new Date("2026-11-29T12:00:00.000Z");
const later = (ms: number) => new Date(now.getTime() + ms).toISOString();

describe("nextReconcileAt", () => {
  it.each([
    ["success waits the interval", "5m", 0, 300_000],
    ["a fractional interval", "1.5s", 0, 1_500],
    ["negative failures count as success", "5m", -1, 300_000],
    ["first failure retries after 30 s", "1h", 1, 30_000],
    ["second failure doubles to 60 s", "1h", 2, 60_000],
    ["third failure doubles to 120 s", "1h", 3, 120_000],
    ["fifth failure: 480 s", "1h", 5, 480_000],
    ["sixth failure reaches the 10 min cap", "1h", 6, 600_000],
    ["many failures stay at the cap", "1h", 1000, 600_000],
    ["backoff never exceeds a short interval", "1m", 3, 60_000],
    ["a 10 s interval caps even the first retry", "10s", 1, 10_000],
    ["an interval under the cap caps the cap", "5m", 10, 300_000],
  ])("%s (%s, %d failures → +%d ms)", (_name, interval, failures, ms) => {
    expect(nextReconcileAt(interval, failures, now).toISOString()).toBe(later(ms));
  });

  it("throws on an interval that is not a duration", () => {
    expect(() => nextReconcileAt("soon", 0, now)).toThrow('invalid duration "soon"');
  });
});

function app(status: AppStatus | undefined, meta: Partial<App["metadata"]> = {}): App {
  const a: App = {
    apiVersion: "plumb.dev/v1alpha1",
    kind: "App",
    metadata: { namespace: "team-a", name: "web", generation: 2, ...meta },
  };
  if (status) a.status = status;
  return a;
}
const reconciled = (next: string, gen = 2): AppStatus => ({
  observedGeneration: gen,
  nextReconcileAt: next,
});

describe("isDue", () => {
  it.each<[string, App, boolean]>([
    ["not yet due", app(reconciled(later(1000))), false],
    ["due exactly at nextReconcileAt", app(reconciled(later(0))), true],
    ["past nextReconcileAt", app(reconciled(later(-1000))), true],
    ["never reconciled (no status)", app(undefined), true],
    ["no nextReconcileAt", app({ observedGeneration: 2 }), true],
    ["no observedGeneration", app({ nextReconcileAt: later(1000) }), true],
    ["generation changed since the last run", app(reconciled(later(1000), 1)), true],
    [
      "the App has no generation but status observed one",
      { ...app(reconciled(later(1000))), metadata: { namespace: "team-a", name: "web" } },
      true,
    ],
    [
      "being deleted, though not due (the finalizer must run)",
      app(reconciled(later(60_000)), { deletionTimestamp: later(-5000) }),
      true,
    ],
    ["a malformed nextReconcileAt", app(reconciled("tomorrow")), true],
    ["an empty nextReconcileAt", app(reconciled("")), true],
    [
      "a sync window that held a sync back has opened",
      app({ ...reconciled(later(60_000)), nextSyncWindow: later(-1) }),
      true,
    ],
    [
      "a sync window opens later",
      app({ ...reconciled(later(60_000)), nextSyncWindow: later(30_000) }),
      false,
    ],
  ])("%s → %s", (_name, a, due) => {
    expect(isDue(a, now)).toBe(due);
  });
});

describe("followUpSeconds", () => {
  const now = new Date("2026-12-01T10:00:00Z");
  it("asks for the next run of a Progressing App when it is due", () => {
    expect(
      followUpSeconds(
        { healthStatus: "Progressing", nextReconcileAt: "2026-12-01T10:00:30Z" },
        now,
      ),
    ).toBe(30);
    expect(
      followUpSeconds(
        { healthStatus: "Progressing", nextReconcileAt: "2026-12-01T09:00:00Z" },
        now,
      ),
    ).toBe(1);
  });

  it("asks for nothing when healthy, failing (the schedule's backoff) or unscheduled", () => {
    const next = "2026-12-01T10:00:30Z";
    expect(
      followUpSeconds({ healthStatus: "Healthy", nextReconcileAt: next }, now),
    ).toBeUndefined();
    expect(
      followUpSeconds({ healthStatus: "Progressing", failures: 2, nextReconcileAt: next }, now),
    ).toBeUndefined();
    expect(followUpSeconds({ healthStatus: "Progressing" }, now)).toBeUndefined();
  });
});
