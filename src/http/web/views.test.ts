import { describe, expect, it } from "vitest";
import { relativeTime } from "./views.ts";

const NOW = Date.parse("2026-03-04T05:06:07Z");
const at = (s: number) => NOW + s * 1000;

describe("relativeTime", () => {
  it("a coming time: in 2m, and due now once it has come (never 0s ago)", () => {
    expect(relativeTime(at(120), NOW, "next")).toBe("in 2m");
    expect(relativeTime(at(3 * 3600 + 5), NOW, "next")).toBe("in 3h");
    expect(relativeTime(at(0), NOW, "next")).toBe("due now");
    expect(relativeTime(at(-90), NOW, "next")).toBe("due now");
  });

  it("a past time: 3m ago, just now within the second, in 5s when a clock runs ahead", () => {
    expect(relativeTime(at(-180), NOW, "past")).toBe("3m ago");
    expect(relativeTime(at(-2 * 86400), NOW, "past")).toBe("2d ago");
    expect(relativeTime(at(0), NOW, "past")).toBe("just now");
    expect(relativeTime(at(-0.4), NOW, "past")).toBe("just now");
    expect(relativeTime(at(5), NOW, "past")).toBe("in 5s");
  });
});
