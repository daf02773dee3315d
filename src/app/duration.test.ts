import { describe, expect, it } from "vitest";
import { parseDuration } from "./duration.ts";

describe("parseDuration", () => {
  it.each([
    ["milliseconds", "500ms", 500],
    ["seconds", "45s", 45_000],
    ["minutes", "5m", 300_000],
    ["hours", "2h", 7_200_000],
    ["zero", "0s", 0],
    ["units in sequence add up", "1h30m", 5_400_000],
    ["every unit at once", "1h2m3s4ms", 3_723_004],
    ["ms is not read as minutes then s", "1m500ms", 60_500],
    ["a repeated unit adds up, as in Go", "1m1m", 120_000],
    ["leading zeros", "007s", 7_000],
    ["a fraction of an hour", "1.5h", 5_400_000],
    ["a fraction of a second", "0.25s", 250],
    ["fractions in a sequence", "1.5m0.5s", 90_500],
  ])("%s: %s = %d ms", (_name, text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each([
    ["empty", ""],
    ["a number without a unit", "30"],
    ["a unit without a number", "m"],
    ["an unknown unit", "1d"],
    ["Go's microseconds are not accepted", "5us"],
    ["units are case-sensitive", "5M"],
    ["a sign", "-5s"],
    ["a plus sign", "+5s"],
    ["a fraction without leading digits", ".5s"],
    ["a dot without decimals", "1.s"],
    ["a space inside", "1h 30m"],
    ["leading space", " 5s"],
    ["trailing space", "5s "],
    ["trailing garbage after a valid prefix", "5m!"],
    ["a trailing number without a unit", "1h30"],
    ["an exponent", "1e3s"],
  ])("%s: %j throws", (_name, text) => {
    expect(() => parseDuration(text)).toThrow(`invalid duration "${text}"`);
  });
});
