import { describe, expect, it } from "vitest";
import { isTagRange, normalizeRange, pickTag } from "./tag-policy.ts";

describe("isTagRange", () => {
  it.each([
    ["~1.4", true],
    [">=2 <3", true],
    ["^1.0.0", true],
    ["1.*", true],
    ["*", true],
    [">=1.0, <2.0", true],
    ["1.2.3 || 2.0.0", true],
    ["1.4", false],
    ["1.x", false],
    ["latest", false],
    ["v1.4.2", false],
    ["1.4.2-rc.1", false],
  ])("%s → %s", (tag, range) => {
    expect(isTagRange(tag)).toBe(range);
  });
});

describe("normalizeRange", () => {
  it("accepts node-semver ranges and Masterminds' comma as and", () => {
    expect(normalizeRange("~1.4")).toBe(">=1.4.0 <1.5.0-0");
    expect(normalizeRange(">=1.0, <2.0")).toBe(">=1.0.0 <2.0.0-0");
  });
  it.each(["", " ", ">=", "~a", "1.0.0p <", ">>1"])("refuses %j", (range) => {
    expect(normalizeRange(range)).toBeUndefined();
  });
});

describe("pickTag (Flux ImagePolicy semver)", () => {
  const tags = ["1.3.9", "1.4.0", "1.4.2", "1.4.10", "1.5.0", "2.0.0", "2.1.0-rc.1", "latest"];

  it.each([
    ["~1.4", "1.4.10"], // numeric, not lexical: 1.4.10 > 1.4.2
    [">=2 <3", "2.0.0"], // 2.1.0-rc.1 is a prerelease and the range names none
    ["^1.0.0", "1.5.0"],
    [">=2.1.0-0", "2.1.0-rc.1"], // the range names a prerelease: prereleases count
    ["1.0.0 - 2.0.0", "2.0.0"], // a hyphen range names no prerelease
    ["*", "2.0.0"],
    ["1.*", "1.5.0"],
    ["<1.0.0", undefined],
  ])("%s picks %s", (range, want) => {
    expect(pickTag(range, tags)).toBe(want);
  });

  it("reads a leading v, ignores tags that are not strict X.Y.Z versions", () => {
    expect(pickTag("~1.0", ["v1.0.0", "v1.0.3", "1.0", "1.0.9.1", "1.0.7p", "b1.0.8"])).toBe(
      "v1.0.3",
    );
  });

  it("equal versions pick the tag that sorts first, whatever the registry's order", () => {
    expect(pickTag("^1", ["v1.2.3", "1.2.3"])).toBe("1.2.3");
    expect(pickTag("^1", ["1.2.3", "v1.2.3"])).toBe("1.2.3");
  });

  it("no tags, or an invalid range, picks nothing", () => {
    expect(pickTag("~1.4", [])).toBeUndefined();
    expect(pickTag(">=", tags)).toBeUndefined();
  });
});
