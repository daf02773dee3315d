import { describe, expect, it } from "vitest";
import { chartRevision, parseChartRevision, pickVersion } from "./chart-version.ts";

const versions = [
  "1.3.9",
  "1.4.0",
  "1.4.7",
  "1.5.0",
  "2.0.0-rc.1",
  "2.1.0",
  "v2.3.1",
  "3.0.0",
  "junk",
];

describe("pickVersion", () => {
  it("an exact version picks exactly that one (v prefix tolerated)", () => {
    expect(pickVersion(versions, "1.4.0")).toBe("1.4.0");
    expect(pickVersion(versions, "2.3.1")).toBe("v2.3.1");
    expect(pickVersion(versions, "1.4.1")).toBeUndefined();
  });

  it("a range picks the highest match, pre-releases only when asked for", () => {
    expect(pickVersion(versions, "~1.4")).toBe("1.4.7");
    expect(pickVersion(versions, "^1")).toBe("1.5.0");
    expect(pickVersion(versions, ">=2 <3")).toBe("v2.3.1");
    expect(pickVersion(versions, ">=2, <3")).toBe("v2.3.1");
    expect(pickVersion(versions, "*")).toBe("3.0.0");
    expect(pickVersion(versions, "2.0.0-rc.1 || 1.3.x")).toBe("2.0.0-rc.1");
    expect(pickVersion(["2.0.0-rc.1"], ">=2.0.0-0")).toBe("2.0.0-rc.1");
    expect(pickVersion(["2.0.0-rc.1"], "^2")).toBeUndefined();
    expect(pickVersion(versions, ">=9")).toBeUndefined();
  });

  it("refuses a constraint that is not a range", () => {
    expect(() => pickVersion(versions, "latest!")).toThrow(/invalid chart version "latest!"/);
  });
});

describe("chart revisions", () => {
  it("round-trips version and digest and refuses anything else", () => {
    const digest = `sha256:${"a".repeat(64)}`;
    expect(parseChartRevision(chartRevision("1.2.3+build.1", digest))).toEqual({
      version: "1.2.3+build.1",
      digest,
    });
    expect(() => parseChartRevision("1.2.3")).toThrow(/not a chart revision/);
    expect(() => parseChartRevision(`1.2.3@sha256:${"A".repeat(64)}`)).toThrow();
  });
});
