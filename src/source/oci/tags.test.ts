// Tag listing and tag policy against the local OCI registry (test/support/registry.ts).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRegistry, type TestRegistry } from "../../../test/support/registry.ts";
import { SourceError } from "../../core/index.ts";
import { createImagePort } from "../image.ts";
import { parseImageReference } from "./reference.ts";
import { openRepository } from "./registry.ts";
import { listTags, nextPath } from "./tags.ts";

const manifest = (n: number) => ({
  schemaVersion: 2,
  mediaType: "application/vnd.oci.image.manifest.v1+json",
  config: {
    mediaType: "application/vnd.oci.image.config.v1+json",
    digest: `sha256:${n.toString(16).padStart(64, "0")}`,
    size: n,
  },
  layers: [],
});

async function failure(promise: Promise<unknown>): Promise<SourceError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SourceError);
  return err as SourceError;
}

let paged: TestRegistry;
let bearer: TestRegistry;
beforeAll(async () => {
  paged = await startRegistry({ maxPageSize: 2, linkOrigin: "https://cdn.elsewhere.example" });
  bearer = await startRegistry({ auth: "bearer", username: "robot", password: "s3cret" });
});
afterAll(async () => {
  await paged?.stop();
  await bearer?.stop();
});

describe("listTags", () => {
  it("follows the Link header page by page, on the registry itself, and returns every tag", async () => {
    for (const [i, t] of ["1.4.0", "1.4.2", "1.4.10", "1.5.0", "latest"].entries()) {
      paged.push("org/web", t, manifest(i));
    }
    const repo = openRepository(parseImageReference(`${paged.host}/org/web`), undefined);
    const before = paged.requests.length;
    expect(await listTags(repo, "org/web")).toEqual([
      "1.4.0",
      "1.4.10",
      "1.4.2",
      "1.5.0",
      "latest",
    ]);
    // The Link names another origin: only its path and query are followed, here.
    expect(paged.requests.slice(before)).toEqual([
      "GET /v2/org/web/tags/list?n=1000",
      "GET /v2/org/web/tags/list?n=2&last=1.4.10",
      "GET /v2/org/web/tags/list?n=2&last=1.5.0",
    ]);
  });

  it("refuses a list longer than maxPages pages instead of using part of it", async () => {
    const repo = openRepository(parseImageReference(`${paged.host}/org/web`), undefined);
    const err = await failure(listTags(repo, "org/web", { maxPages: 2 }));
    expect(err.message).toBe(
      `${paged.host}/org/web has more than 2 pages of tags; refusing a partial list`,
    );
    expect(err.transient).toBe(false);
  });

  it("an unknown repository is a clear not-found", async () => {
    const repo = openRepository(parseImageReference(`${paged.host}/org/none`), undefined);
    const err = await failure(listTags(repo, "org/none"));
    expect(err.message).toBe(`repository ${paged.host}/org/none not found`);
  });
});

describe("nextPath (RFC 8288 Link)", () => {
  const prefix = "/v2/org/web/";
  it.each([
    ['</v2/org/web/tags/list?n=2&last=b>; rel="next"', "tags/list?n=2&last=b"],
    ["<https://other.example/v2/org/web/tags/list?last=b>; rel=next", "tags/list?last=b"],
    ['<https://x/a>; rel="prev", </v2/org/web/tags/list?last=c>; rel="next"', "tags/list?last=c"],
    ['</v2/org/web/tags/list?last=b>; rel="prev"', undefined],
  ])("%s → %s", (header, want) => {
    expect(nextPath(header, prefix, "r/org/web")).toBe(want);
  });

  it.each([
    '</v2/org/other/tags/list?last=b>; rel="next"',
    '</v2/org/web/manifests/latest>; rel="next"',
    '</v2/org/web/tags/list/../../../x>; rel="next"',
  ])("refuses a Link outside the tag list: %s", (header) => {
    expect(() => nextPath(header, prefix, "r/org/web")).toThrow(
      "r/org/web sent a tags Link outside its tag list; refused",
    );
  });
});

describe("ImagePort.pin", () => {
  const port = createImagePort();
  const auth = { username: "robot", password: "s3cret" };

  it("picks the highest tag matching a range and pins its digest, with one token", async () => {
    bearer.push("team/api", "1.3.9", manifest(10));
    const d142 = bearer.push("team/api", "1.4.2", manifest(11));
    bearer.push("team/api", "1.4.10-rc.1", manifest(12));
    bearer.push("team/api", "2.0.0", manifest(13));
    const before = bearer.requests.length;
    expect(await port.pin(`${bearer.host}/team/api`, "~1.4", auth)).toEqual({
      tag: "1.4.2",
      digest: d142,
    });
    const sent = bearer.requests.slice(before);
    expect(sent.filter((r) => r.startsWith("GET /token"))).toHaveLength(1);
    expect(sent.at(-1)).toBe("HEAD /v2/team/api/manifests/1.4.2");

    // A new matching tag is a new pin.
    const d143 = bearer.push("team/api", "1.4.3", manifest(14));
    expect(await port.pin(`${bearer.host}/team/api`, "~1.4", auth)).toEqual({
      tag: "1.4.3",
      digest: d143,
    });
    // A range naming a prerelease counts prereleases (Flux).
    expect((await port.pin(`${bearer.host}/team/api`, ">=1.4.4-0 <2", auth)).tag).toBe(
      "1.4.10-rc.1",
    );
  });

  it("a plain tag is resolved without listing tags", async () => {
    const d = bearer.push("team/api", "stable", manifest(20));
    const before = bearer.requests.length;
    expect(await port.pin(`${bearer.host}/team/api`, "stable", auth)).toEqual({
      tag: "stable",
      digest: d,
    });
    expect(bearer.requests.slice(before).some((r) => r.includes("tags/list"))).toBe(false);
  });

  it("no match, bad credentials and a bad repository are SourceErrors naming the app source", async () => {
    const none = await failure(port.pin(`${bearer.host}/team/api`, ">=3", auth));
    expect(none.message).toBe(
      `no tag of ${bearer.host}/team/api matches ">=3" (6 tags listed; prereleases count only when the range names one)`,
    );
    const denied = await failure(port.pin(`${bearer.host}/team/api`, "~1.4", undefined));
    expect(denied.message).toBe(
      `authentication failed for ${bearer.host}/team/api (HTTP 401): no credentials were given; the repository may be private (set spec.source.app.secretRef) or may not exist`,
    );
    const bad = await failure(port.pin(`${bearer.host}/team/api:1.0`, "1.0", auth));
    expect(bad.message).toBe(
      `invalid spec.source.app image "${bearer.host}/team/api:1.0": it holds a tag; give the repository alone and the tag in spec.source.app tag`,
    );
    expect(JSON.stringify([none, denied, bad].map((e) => e.message))).not.toContain("s3cret");
  });
});
