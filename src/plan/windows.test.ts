import { describe, expect, it } from "vitest";
import { SyncWindow } from "../app/index.ts";
import { nextSyncOpening, openWindows, syncBlocked } from "./windows.ts";

const win = (w: Record<string, unknown>): SyncWindow => SyncWindow.parse(w);
const at = (iso: string) => new Date(iso);
const iso = (d: Date | undefined) => d?.toISOString();

describe("openWindows", () => {
  const nightly = win({ kind: "deny", schedule: "0 22 * * *", duration: "8h" });

  it.each([
    ["2026-06-10T21:59:59Z", false],
    ["2026-06-10T22:00:00Z", true],
    ["2026-06-10T23:30:00Z", true],
    ["2026-06-11T00:00:00Z", true], // across midnight
    ["2026-06-11T05:59:59Z", true],
    ["2026-06-11T06:00:00Z", false], // closes after exactly 8h
  ])("a window from 22:00 for 8h at %s: open %s", (now, open) => {
    expect(openWindows([nightly], at(now)).length > 0).toBe(open);
  });

  it("gives the occurrence: opened and closes", () => {
    const [o] = openWindows([nightly], at("2026-06-11T01:00:00Z"));
    expect(o).toMatchObject({ index: 0 });
    expect(iso(o?.opened)).toBe("2026-06-10T22:00:00.000Z");
    expect(iso(o?.closes)).toBe("2026-06-11T06:00:00.000Z");
  });

  it("reads the schedule in its time zone on both sides of a DST change", () => {
    // 09:00 Europe/Berlin is 08:00Z in winter (CET) and 07:00Z from 29 March 2026 (CEST).
    const office = win({
      kind: "allow",
      schedule: "0 9 * * 1-5",
      duration: "1h",
      timeZone: "Europe/Berlin",
    });
    expect(openWindows([office], at("2026-03-27T08:30:00Z"))).toHaveLength(1); // Fri, CET
    expect(openWindows([office], at("2026-03-27T07:30:00Z"))).toHaveLength(0);
    expect(openWindows([office], at("2026-03-30T07:30:00Z"))).toHaveLength(1); // Mon, CEST
    expect(openWindows([office], at("2026-03-30T08:30:00Z"))).toHaveLength(0);
  });

  it("a time in the spring-forward gap opens at the first valid time after it, that day", () => {
    // 02:30 does not exist in Berlin on 29 March 2026: the clock jumps from 02:00 to 03:00 CEST.
    const w = win({
      kind: "deny",
      schedule: "30 2 * * *",
      duration: "1h",
      timeZone: "Europe/Berlin",
    });
    expect(iso(openWindows([w], at("2026-03-29T01:30:00Z"))[0]?.opened)).toBe(
      "2026-03-29T01:00:00.000Z",
    );
    expect(iso(openWindows([w], at("2026-03-28T02:00:00Z"))[0]?.opened)).toBe(
      "2026-03-28T01:30:00.000Z",
    );
  });

  it("a time that occurs twice (fall back) opens once, at its first occurrence", () => {
    // 01:00 New York on 1 November 2026 is 05:00Z (EDT) and again 06:00Z (EST).
    const w = win({
      kind: "deny",
      schedule: "0 1 * * *",
      duration: "30m",
      timeZone: "America/New_York",
    });
    expect(openWindows([w], at("2026-11-01T05:10:00Z"))).toHaveLength(1);
    expect(openWindows([w], at("2026-11-01T06:10:00Z"))).toHaveLength(0);
    expect(iso(openWindows([w], at("2026-11-02T06:10:00Z"))[0]?.opened)).toBe(
      "2026-11-02T06:00:00.000Z",
    );
  });
});

describe("syncBlocked", () => {
  const deny = (over: Record<string, unknown> = {}) =>
    win({ kind: "deny", schedule: "0 22 * * *", duration: "8h", ...over });
  const allow = (over: Record<string, unknown> = {}) =>
    win({ kind: "allow", schedule: "0 9 * * 1-5", duration: "8h", ...over });

  it("no windows: nothing blocks", () => {
    expect(syncBlocked(undefined, false, at("2026-06-10T23:00:00Z"))).toBeUndefined();
    expect(syncBlocked([], false, at("2026-06-10T23:00:00Z"))).toBeUndefined();
  });

  it("an open deny window blocks automated sync until it closes, across midnight", () => {
    const block = syncBlocked([deny()], false, at("2026-06-10T23:00:00Z"));
    expect(block?.cause).toBe("deny");
    expect(iso(block?.next)).toBe("2026-06-11T06:00:00.000Z");
    expect(block?.message).toBe(
      'automated sync is blocked by the open deny window spec.syncWindows[0] ("0 22 * * *" UTC, 8h); next allowed at 2026-06-11T06:00:00.000Z',
    );
    expect(syncBlocked([deny()], false, at("2026-06-11T06:00:00Z"))).toBeUndefined();
  });

  it("a deny window wins over an open allow window", () => {
    const windows = [allow({ schedule: "0 0 * * *", duration: "24h" }), deny()];
    const block = syncBlocked(windows, false, at("2026-06-10T23:00:00Z"));
    expect(block?.cause).toBe("deny");
    expect(block?.blocking.map((b) => b.index)).toEqual([1]);
    expect(syncBlocked(windows, false, at("2026-06-10T12:00:00Z"))).toBeUndefined();
  });

  it("with allow windows, automated sync runs only inside one; next is the next opening", () => {
    // Friday 10 July 2026, 18:00 UTC: the office window closed at 17:00; it opens Monday 09:00.
    const block = syncBlocked([allow()], false, at("2026-07-10T18:00:00Z"));
    expect(block?.cause).toBe("allow");
    expect(iso(block?.next)).toBe("2026-07-13T09:00:00.000Z");
    expect(block?.message).toContain("automated sync runs only inside an allow window");
    expect(block?.message).toContain('allow window spec.syncWindows[0] ("0 9 * * 1-5" UTC, 8h)');
    expect(syncBlocked([allow()], false, at("2026-07-13T09:00:00Z"))).toBeUndefined();
  });

  it("next opening over a DST change is the zone's wall-clock time", () => {
    const office = allow({ timeZone: "Europe/Berlin" });
    // Friday 27 March 2026, 20:00Z (21:00 CET): next is Monday 09:00 CEST = 07:00Z.
    expect(iso(syncBlocked([office], false, at("2026-03-27T20:00:00Z"))?.next)).toBe(
      "2026-03-30T07:00:00.000Z",
    );
  });

  it("manualSync lets operations through a deny window only when every open deny has it", () => {
    const now = at("2026-06-10T23:00:00Z");
    expect(syncBlocked([deny({ manualSync: true })], true, now)).toBeUndefined();
    expect(syncBlocked([deny({ manualSync: true })], false, now)?.cause).toBe("deny");
    const two = [deny({ manualSync: true }), deny({ schedule: "0 23 * * *", duration: "1h" })];
    const block = syncBlocked(two, true, now);
    expect(block?.cause).toBe("deny");
    expect(block?.message).toContain("manual sync is blocked");
    expect(block?.message).toContain("(manualSync: true on a window lets operations through)");
    // The second deny closes at midnight: from then the first one lets operations through.
    expect(iso(block?.next)).toBe("2026-06-11T00:00:00.000Z");
  });

  it("manualSync on every allow window lets operations through outside them", () => {
    const now = at("2026-07-10T18:00:00Z");
    expect(syncBlocked([allow({ manualSync: true })], true, now)).toBeUndefined();
    expect(syncBlocked([allow({ manualSync: true }), allow()], true, now)?.cause).toBe("allow");
  });

  it("back-to-back deny windows: next is when the last one closes", () => {
    const windows = [deny({ duration: "2h" }), deny({ schedule: "0 0 * * *", duration: "6h" })];
    expect(iso(syncBlocked(windows, false, at("2026-06-10T23:00:00Z"))?.next)).toBe(
      "2026-06-11T06:00:00.000Z",
    );
  });

  it("a deny window open before an allow window opens: next is the allow window's opening", () => {
    const windows = [allow({ schedule: "0 12 * * *", duration: "1h" }), deny()];
    expect(iso(syncBlocked(windows, false, at("2026-06-10T23:00:00Z"))?.next)).toBe(
      "2026-06-11T12:00:00.000Z",
    );
  });

  it("no opening within a year is said plainly, with how far it looked", () => {
    // Allowed only on 29 February: from March 2026 the next one is in 2028.
    const block = syncBlocked(
      [allow({ schedule: "0 0 29 2 *", duration: "1h" })],
      false,
      at("2026-03-01T00:00:00Z"),
    );
    expect(block?.next).toBeUndefined();
    expect(block?.message).toContain("no window allows it before 2027-03-02T00:00:00.000Z");
  });

  it("a deny window that never closes (overlapping hourly occurrences) has no next", () => {
    const always = [deny({ schedule: "0 * * * *", duration: "2h" })];
    // It gives up after 1,000 openings (hourly: 1,000 hours ahead) and says how far it looked.
    expect(nextSyncOpening(always, false, at("2026-06-10T23:00:00Z"))).toEqual({
      at: undefined,
      searchedUntil: at("2026-07-22T15:00:00Z"),
    });
  });

  it("a deny window always open says no window opens, and how far it looked, not just no time", () => {
    const now = at("2026-06-10T23:00:00Z");
    // Every minute for an hour: open at every instant; 1,000 openings are 1,000 minutes.
    const everyMinute = syncBlocked([deny({ schedule: "* * * * *", duration: "1h" })], false, now);
    expect(everyMinute?.next).toBeUndefined();
    expect(everyMinute?.nextMessage).toBe(
      "no sync window opens within 16 hours (searched until 2026-06-11T15:40:00.000Z)",
    );
    // Two daily windows that overlap cover the whole day: the search runs its full year.
    const overlapping = syncBlocked(
      [
        deny({ schedule: "0 0 * * *", duration: "13h" }),
        deny({ schedule: "0 12 * * *", duration: "13h" }),
      ],
      false,
      now,
    );
    expect(overlapping?.next).toBeUndefined();
    expect(overlapping?.nextMessage).toBe(
      "no sync window opens within 366 days (searched until 2027-06-11T23:00:00.000Z)",
    );
  });

  it("a block with a next opening has no nextMessage", () => {
    const block = syncBlocked([deny({})], false, at("2026-06-10T23:00:00Z"));
    expect(block?.next).toBeDefined();
    expect(block?.nextMessage).toBeUndefined();
  });

  it("names the description", () => {
    const block = syncBlocked(
      [deny({ description: "release freeze CHG-42" })],
      false,
      at("2026-06-10T23:00:00Z"),
    );
    expect(block?.message).toContain('("0 22 * * *" UTC, 8h: release freeze CHG-42)');
  });
});
