import { describe, expect, it } from "vitest";
import { matchRevision, shortRevision } from "./revisions.ts";

const A = "28744dd0c1a1b2c3d4e5f60718293a4b5c6d7e8f";
const B = "28744dd9aaaabbbbccccddddeeeeffff00001111";
const C = "3f2a000000000000000000000000000000000000";
const DIGEST = `sha256:${"ab12cd3".padEnd(64, "0")}`;
const APP = `registry.example.com/acme/shop:1.4.2@sha256:${"9".repeat(64)},redis:7@sha256:${"1".repeat(64)}`;

describe("shortRevision", () => {
  it.each([
    [A, "28744dd"],
    [`${A}${"0".repeat(24)}`, "28744dd"],
    [DIGEST, "sha256:ab12cd3"],
    [APP, "shop:1.4.2@9999999,redis:7@1111111"],
    ["v1.2.3", "v1.2.3"],
  ])("%s → %s", (revision, short) => {
    expect(shortRevision(revision)).toBe(short);
  });
});

describe("matchRevision", () => {
  it("accepts the full revision, its short form and an unambiguous prefix of 7+ hex characters", () => {
    expect(matchRevision(A, [A, C])).toEqual({ revision: A });
    expect(matchRevision("28744dd0", [A, B, C])).toEqual({ revision: A });
    expect(matchRevision("3F2A000", [A, C])).toEqual({ revision: C });
    expect(matchRevision("sha256:ab12cd3", [DIGEST])).toEqual({ revision: DIGEST });
    expect(matchRevision("ab12cd30", [DIGEST])).toEqual({ revision: DIGEST });
    expect(matchRevision("shop:1.4.2@9999999,redis:7@1111111", [APP])).toEqual({ revision: APP });
  });

  it("every short form plumb shows is accepted back", () => {
    for (const r of [A, C, DIGEST, APP]) {
      expect(matchRevision(shortRevision(r), [r, "f".repeat(40)])).toEqual({ revision: r });
    }
  });

  it("refuses an ambiguous prefix, naming the matches", () => {
    expect(matchRevision("28744dd", [A, B])).toEqual({
      error: 'revision "28744dd" is ambiguous: it matches 28744dd0, 28744dd9; give more characters',
      matches: [A, B],
    });
  });

  it("refuses a prefix shorter than 7 and one that matches nothing, naming what it accepts", () => {
    expect(matchRevision("28744d", [A, C])).toEqual({
      error:
        'revision "28744d" is not in the known revisions (28744dd, 3f2a000) (a prefix needs at least 7 hex characters)',
      matches: [],
    });
    expect(matchRevision("deadbee", [], "status.previousRevisions")).toEqual({
      error: 'revision "deadbee" is not in status.previousRevisions (none)',
      matches: [],
    });
  });

  it("a prefix never matches inside an app source's pins", () => {
    expect(matchRevision("9999999", [APP])).toMatchObject({ matches: [] });
  });
});
