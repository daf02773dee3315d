import { describe, expect, it } from "vitest";
import { formatRevision, givenPin, parseRevision, pinFor } from "./pins.ts";
import { resourcesFor } from "./sizes.ts";

const a = `sha256:${"a".repeat(64)}`;
const b = `sha256:${"b".repeat(64)}`;

describe("image revisions", () => {
  const pins = [
    { repository: "localhost:5000/org/web", tag: "1.4.2", digest: a },
    { repository: "ghcr.io/acme/job", tag: "v2.0.0", digest: b },
  ];

  it("format sorted, parse back, whatever the input order", () => {
    const revision = formatRevision(pins);
    expect(revision).toBe(`ghcr.io/acme/job:v2.0.0@${b},localhost:5000/org/web:1.4.2@${a}`);
    expect(formatRevision([...pins].reverse())).toBe(revision);
    expect(parseRevision(revision)).toEqual([pins[1], pins[0]]);
  });

  it("a Git commit or a bare digest is not an image revision", () => {
    expect(parseRevision("3f2a".repeat(10))).toBeUndefined();
    expect(parseRevision(a)).toBeUndefined();
    expect(parseRevision(`web:1.0@${a},garbage`)).toBeUndefined();
  });

  it("finds the pin of a tag by equality and of a range by the highest match", () => {
    const many = [
      { repository: "r/web", tag: "1.4.2", digest: a },
      { repository: "r/web", tag: "1.3.0", digest: b },
    ];
    expect(pinFor(many, { repository: "r/web", tag: "1.3.0" })?.digest).toBe(b);
    expect(pinFor(many, { repository: "r/web", tag: "~1.4" })?.digest).toBe(a);
    expect(pinFor(many, { repository: "r/web", tag: "^1" })?.digest).toBe(a);
    expect(pinFor(many, { repository: "r/web", tag: "~1.5" })).toBeUndefined();
    expect(pinFor(many, { repository: "r/api", tag: "1.4.2" })).toBeUndefined();
  });

  it("a digest the spec gives is its own pin, and finds only a pin of that digest", () => {
    const request = { repository: "r/web", tag: "1.4.2", digest: b };
    expect(givenPin(request)).toEqual({ repository: "r/web", tag: "1.4.2", digest: b });
    expect(givenPin({ repository: "r/web", tag: "1.4.2" })).toBeUndefined();
    const pinned = [
      { repository: "r/web", tag: "1.4.2", digest: a },
      { repository: "r/web", tag: "1.4.2", digest: b },
    ];
    expect(pinFor(pinned, request)).toEqual(pinned[1]);
    expect(pinFor([pinned[0]!], request)).toBeUndefined();
  });
});

describe("resourcesFor", () => {
  it("lays overrides over the preset key by key; a memory request moves the limit with it", () => {
    expect(resourcesFor("small")).toEqual({
      requests: { cpu: "100m", memory: "256Mi" },
      limits: { memory: "256Mi" },
    });
    expect(resourcesFor("medium", { limits: { cpu: "2" } })).toEqual({
      requests: { cpu: "500m", memory: "1Gi" },
      limits: { cpu: "2", memory: "1Gi" },
    });
    expect(resourcesFor("small", { requests: { memory: "2Gi" } })).toEqual({
      requests: { cpu: "100m", memory: "2Gi" },
      limits: { memory: "2Gi" },
    });
    expect(
      resourcesFor("large", { requests: { memory: "2Gi" }, limits: { memory: "3Gi" } }).limits,
    ).toEqual({ memory: "3Gi" });
  });
});
