import { describe, expect, it } from "vitest";
import { cronIssue, cronSchedule } from "./cron.ts";
import { validateSpec } from "./validate.ts";

describe("cronSchedule", () => {
  it("fires strictly after the given instant, in whole seconds", () => {
    const s = cronSchedule("0 22 * * *", "UTC");
    expect(s.next(new Date("2026-06-10T21:59:59.500Z"))?.toISOString()).toBe(
      "2026-06-10T22:00:00.000Z",
    );
    expect(s.next(new Date("2026-06-10T22:00:00.000Z"))?.toISOString()).toBe(
      "2026-06-11T22:00:00.000Z",
    );
  });

  it("Etc/UTC and a zone with a 45-minute offset", () => {
    expect(cronSchedule("0 8 * * *", "Etc/UTC").next(new Date("2026-01-01T00:00:00Z"))).toEqual(
      new Date("2026-01-01T08:00:00Z"),
    );
    expect(
      cronSchedule("0 8 * * *", "Asia/Kathmandu").next(new Date("2026-01-01T00:00:00Z")),
    ).toEqual(new Date("2026-01-01T02:15:00Z"));
  });

  it("nicknames and names of days", () => {
    const from = new Date("2026-06-10T12:00:00Z"); // a Wednesday
    expect(cronSchedule("@daily", "UTC").next(from)).toEqual(new Date("2026-06-11T00:00:00Z"));
    expect(cronSchedule("0 9 * * MON-FRI", "UTC").next(from)).toEqual(
      new Date("2026-06-11T09:00:00Z"),
    );
  });
});

describe("cronIssue", () => {
  it.each([
    ["0 22 * * *", "UTC", undefined],
    ["0 9 * * 1-5", "Europe/Berlin", undefined],
    ["0 9 * *", "UTC", "invalid configuration format"],
    ["* * * * * *", "UTC", "requires exactly 5 parts"],
    ["61 * * * *", "UTC", "Invalid value for minute: 61"],
    ["0 0 30 2 *", "UTC", "never fires"],
    ["0 9 * * *", "Mars/Olympus", 'unknown time zone "Mars/Olympus"'],
  ])("%s in %s", (expression, zone, problem) => {
    const got = cronIssue(expression, zone);
    if (problem === undefined) expect(got).toBeUndefined();
    else expect(got).toContain(problem);
  });
});

describe("spec.syncWindows", () => {
  const base = { source: { git: { url: "https://git.example/o/r.git" } } };

  it("defaults timeZone to UTC and manualSync to false", () => {
    const r = validateSpec({
      ...base,
      syncWindows: [{ kind: "deny", schedule: "0 22 * * *", duration: "8h" }],
    });
    expect(r.ok && r.value.syncWindows).toEqual([
      { kind: "deny", schedule: "0 22 * * *", duration: "8h", timeZone: "UTC", manualSync: false },
    ]);
  });

  it("lists each bad field with its path", () => {
    const r = validateSpec({
      ...base,
      syncWindows: [
        { kind: "maybe", schedule: "0 22 * * *", duration: "8h" },
        { kind: "deny", schedule: "0 25 * * *", duration: "8h" },
        { kind: "allow", schedule: "0 9 * * *", duration: "30s" },
        { kind: "allow", schedule: "0 9 * * *", duration: "1h", timeZone: "Nowhere/Else" },
      ],
    });
    expect(r.ok).toBe(false);
    const issues = r.ok ? [] : r.error.map((i) => `${i.path}: ${i.message}`);
    expect(issues).toHaveLength(4);
    expect(issues[0]).toMatch(/^spec\.syncWindows\.0\.kind: /);
    expect(issues[1]).toMatch(/^spec\.syncWindows\.1\.schedule: .*hour/);
    expect(issues[2]).toBe("spec.syncWindows.2.duration: must be between 1m and 8760h (a year)");
    expect(issues[3]).toMatch(/^spec\.syncWindows\.3\.timeZone: unknown time zone "Nowhere\/Else"/);
  });
});
