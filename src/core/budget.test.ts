import { describe, expect, it } from "vitest";
import { capText, parseByteQuantity, runBudget } from "./budget.ts";

describe("runBudget", () => {
  it("the default ceiling gives the caps plumb had before it: 32 MiB downloaded, 20 MiB read and rendered", () => {
    expect(runBudget()).toEqual({
      maxRunMemory: 536_870_912,
      maxDownloadBytes: 33_554_432,
      maxPackObjectBytes: 67_108_864,
      maxSourceBytes: 20_971_520,
      maxRenderOutputBytes: 20_971_520,
      maxDocumentTokens: 524_288,
      maxRenderTokens: 2_097_152,
    });
  });

  it("scales every cap with the ceiling", () => {
    const b = runBudget(128 * 1024 * 1024);
    expect(b.maxPackObjectBytes).toBe(16 * 1024 * 1024);
    expect(b.maxSourceBytes).toBe(5 * 1024 * 1024);
    expect(b.maxDocumentTokens).toBe(131_072);
    expect(capText(b, "maxPackObjectBytes")).toBe(
      "the 16777216-byte cap (PLUMB_MAX_RUN_MEMORY / 8, of 134217728 bytes)",
    );
    expect(capText(b, "maxDocumentTokens")).toBe(
      "the 131072-token cap (PLUMB_MAX_RUN_MEMORY / 1 KiB, of 134217728 bytes)",
    );
  });
});

describe("parseByteQuantity", () => {
  it("reads digits with a binary or decimal suffix, nothing else", () => {
    expect(parseByteQuantity("512Mi")).toBe(536_870_912);
    expect(parseByteQuantity("2k")).toBe(2000);
    expect(parseByteQuantity("7")).toBe(7);
    expect(parseByteQuantity("1.5Gi")).toBeUndefined();
    expect(parseByteQuantity("1mi")).toBeUndefined();
    expect(parseByteQuantity("99999999999999999999")).toBeUndefined();
  });
});
