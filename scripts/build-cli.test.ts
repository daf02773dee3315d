// scripts/build-cli.ts: the bundle is ASCII, so V8 keeps its source one byte per character.
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { asciiOnly, DIST, type Manifest, ROOT } from "./build-cli.ts";

describe("asciiOnly", () => {
  it("escapes every character above U+007F and keeps the program's meaning", () => {
    const source =
      '// nothing is a multiple of zero — so\nmodule.exports = [/(ns|µs|ms)/, /[\\ud800-\uffff]/u, /👋/u, "é"];';
    const ascii = asciiOnly(source);
    expect(ascii).not.toMatch(/[\u0080-\uffff]/);
    expect(ascii).toContain("zero \\u2014 so");
    expect(ascii).toContain("/(ns|\\u00b5s|ms)/");
    // The same values: the escaped regular expressions match what the originals match.
    const run = (src: string) => {
      const m = { exports: [] as unknown[] };
      new Function("module", src)(m);
      return m.exports as [RegExp, RegExp, RegExp, string];
    };
    const [duration, plane, wave, e] = run(ascii);
    const [duration0, plane0, wave0, e0] = run(source);
    expect(duration.source).not.toBe(duration0.source);
    for (const s of ["5µs", "5us", "x", "\uffff", "👋", "a👋b"]) {
      expect(duration.test(s)).toBe(duration0.test(s));
      expect(plane.test(s)).toBe(plane0.test(s));
      expect(wave.test(s)).toBe(wave0.test(s));
    }
    expect(duration.test("5µs")).toBe(true);
    expect(wave.test("a👋b")).toBe(true);
    expect(e).toBe(e0);
    expect(asciiOnly("plain")).toBe("plain");
  });

  it("leaves no character above U+007F in the built CLI", async () => {
    // Through the bin, which builds only when a source changed: a build of our own here would
    // move the manifest under functions/plumb.test.ts's code cache checks.
    await promisify(execFile)(process.execPath, [join(ROOT, "functions/plumb.mjs"), "--help"]);
    const { entry } = JSON.parse(readFileSync(join(DIST, "manifest.json"), "utf8")) as Manifest;
    const text = readFileSync(join(DIST, entry), "utf8");
    expect(text.length).toBeGreaterThan(1_000_000);
    expect(text.match(/[\u0080-\uffff]/g)).toBeNull();
  });
});
