// The Cloudflare DNS adapter against a local server implementing the records endpoints it uses
// (test/support/cloudflare.ts), which records and checks every request.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CloudflareApi, startCloudflareApi } from "../../test/support/cloudflare.ts";
import { createCloudflareDns } from "./cloudflare.ts";

let api: CloudflareApi;
beforeAll(async () => {
  api = await startCloudflareApi("example.com", { maxPerPage: 2 });
});
afterAll(async () => {
  await api?.stop();
});

const port = () =>
  createCloudflareDns({ apiToken: api.token, zoneId: api.zoneId, baseURL: api.baseURL });
const comment = "managed-by=plumb app=team-a/blog";

describe("createCloudflareDns", () => {
  it("creates, lists by name and by comment (every page), updates and deletes records", async () => {
    const dns = port();
    const before = api.requests.length;
    const created = await dns.create({
      name: "blog.example.com",
      type: "A",
      content: "203.0.113.7",
      proxied: false,
      comment,
    });
    expect(created).toEqual({
      id: created.id,
      name: "blog.example.com",
      type: "A",
      content: "203.0.113.7",
      proxied: false,
      comment,
    });
    for (const host of ["a", "b", "c"])
      await dns.create({ name: `${host}.example.com`, type: "A", content: "203.0.113.7", comment });
    api.seed({ name: "blog.example.com", type: "TXT", content: "v=spf1 -all", comment: null });

    const named = await dns.listByName("blog.example.com");
    expect(named.map((r) => r.type).sort()).toEqual(["A", "TXT"]);
    expect(named.find((r) => r.type === "TXT")?.comment).toBeUndefined();
    // Four records carry the comment; pages hold two: both pages are read.
    expect((await dns.listByComment(comment)).map((r) => r.name)).toEqual([
      "a.example.com",
      "b.example.com",
      "blog.example.com",
      "c.example.com",
    ]);

    const updated = await dns.update(created.id, {
      name: "blog.example.com",
      type: "A",
      content: "198.51.100.1",
      proxied: true,
      comment,
    });
    expect(updated).toMatchObject({ id: created.id, content: "198.51.100.1", proxied: true });
    await dns.delete(created.id);
    expect(api.records.has(created.id)).toBe(false);

    const sent = api.requests.slice(before);
    expect(sent.every((r) => r.authorization === `Bearer ${api.token}`)).toBe(true);
    expect(sent[0]).toEqual({
      method: "POST",
      path: `/zones/${api.zoneId}/dns_records`,
      query: {},
      body: {
        type: "A",
        name: "blog.example.com",
        content: "203.0.113.7",
        ttl: 1,
        proxied: false,
        comment,
      },
      authorization: `Bearer ${api.token}`,
    });
    expect(sent.filter((r) => r.method === "GET").map((r) => r.query)).toEqual([
      { "name.exact": "blog.example.com", per_page: "100", match: "all" },
      { "comment.exact": comment, per_page: "100", match: "all" },
      { "comment.exact": comment, per_page: "100", match: "all", page: "2" },
    ]);
    expect(sent.at(-2)?.method).toBe("PUT");
    expect(sent.at(-1)).toMatchObject({
      method: "DELETE",
      path: `/zones/${api.zoneId}/dns_records/${created.id}`,
    });
  });

  it("Cloudflare's refusals come back as errors naming what failed, never the token", async () => {
    const dns = port();
    api.seed({ name: "docs.example.com", type: "A", content: "192.0.2.1", comment: null });
    const cname = await dns
      .create({ name: "docs.example.com", type: "CNAME", content: "lb.example.net", comment })
      .then(
        () => "created",
        (e: Error) => e.message,
      );
    expect(cname).toBe(
      'cloudflare: create CNAME docs.example.com: 400 {"success":false,"errors":[{"code":81053,"message":"An A, AAAA, or CNAME record with that host already exists."}],"messages":[],"result":null}',
    );
    const wrong = createCloudflareDns({
      apiToken: "wrong-token-0123456789",
      zoneId: api.zoneId,
      baseURL: api.baseURL,
      maxRetries: 0,
    });
    const denied = await wrong.listByName("docs.example.com").then(
      () => "listed",
      (e: Error) => e.message,
    );
    expect(denied).toContain("cloudflare: list records named docs.example.com: 403");
    expect(denied).toContain("Authentication error");
    expect(denied).not.toContain("wrong-token-0123456789");
    expect(cname).not.toContain(api.token);
  });

  it("a comment over the plan's limit is refused by Cloudflare, and said so", async () => {
    const long = `managed-by=plumb app=${"n".repeat(63)}/${"a".repeat(63)}`;
    const err = await port()
      .create({ name: "long.example.com", type: "A", content: "203.0.113.7", comment: long })
      .then(
        () => "",
        (e: Error) => e.message,
      );
    expect(err).toContain("Comment is too long (at most 100 characters)");
  });
});
