import { describe, expect, it } from "vitest";
import { matchesAny, matchesPattern } from "./patterns.ts";

describe("matchesPattern", () => {
  it.each([
    ["dev", "dev", true],
    ["dev", "dev2", false],
    ["dev", "de", false],
    ["*", "", true],
    ["*", "anything/at/all", true],
    ["team-*", "team-a", true],
    ["team-*", "team-", true],
    ["team-*", "xteam-a", false],
    ["*-prod", "shop-prod", true],
    ["*-prod", "shop-prod-2", false],
    ["https://github.com/org/*", "https://github.com/org/repo.git", true],
    ["https://github.com/org/*", "https://github.com/other/repo.git", false],
    ["a*b*c", "abc", true],
    ["a*b*c", "a-b-b-c", true],
    ["a*b*c", "acb", false],
    ["ab*ba", "aba", false],
    ["a**", "a", true],
  ])("%s against %s: %s", (pattern, value, want) => {
    expect(matchesPattern(pattern, value)).toBe(want);
  });

  it("any of several", () => {
    expect(matchesAny(["dev", "team-*"], "team-b")).toBe(true);
    expect(matchesAny(["dev", "team-*"], "prod")).toBe(false);
    expect(matchesAny([], "dev")).toBe(false);
  });
});
