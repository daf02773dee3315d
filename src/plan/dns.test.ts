import { describe, expect, it } from "vitest";
import type { DnsRecord } from "../core/index.ts";
import { dnsComment, planDns } from "./dns.ts";

const app = { namespace: "team-a", name: "blog" };
const mine = dnsComment(app);
const base = {
  app,
  zone: "example.com",
  target: "203.0.113.7",
  type: "A" as const,
  proxied: false,
};
const rec = (id: string, name: string, more: Partial<DnsRecord> = {}): DnsRecord => ({
  id,
  name,
  type: "A",
  content: "203.0.113.7",
  proxied: false,
  comment: mine,
  ...more,
});

describe("planDns", () => {
  it("creates a record per host in the zone, with the App's comment; hosts elsewhere are left out", () => {
    const plan = planDns({
      ...base,
      hosts: ["www.blog.example.com", "Blog.Example.com", "blog.other.org"],
      existing: [],
    });
    expect(plan).toEqual({
      delete: [],
      update: [],
      create: [
        {
          name: "blog.example.com",
          type: "A",
          content: "203.0.113.7",
          proxied: false,
          comment: mine,
        },
        {
          name: "www.blog.example.com",
          type: "A",
          content: "203.0.113.7",
          proxied: false,
          comment: mine,
        },
      ],
      conflicts: [],
      outside: ["blog.other.org"],
    });
    expect(mine).toBe("managed-by=plumb app=team-a/blog");
  });

  it("keeps a record already right, updates one that differs, deletes duplicates and records of names no longer served", () => {
    const plan = planDns({
      ...base,
      hosts: ["blog.example.com", "www.blog.example.com"],
      existing: [
        rec("1", "blog.example.com"),
        rec("2", "blog.example.com"),
        rec("3", "www.blog.example.com", { content: "198.51.100.1" }),
        rec("4", "old.example.com"),
        rec("1", "blog.example.com"),
      ],
    });
    expect(plan.delete.map((r) => r.id)).toEqual(["2", "4"]);
    expect(plan.update).toEqual([
      {
        id: "3",
        record: {
          name: "www.blog.example.com",
          type: "A",
          content: "203.0.113.7",
          proxied: false,
          comment: mine,
        },
      },
    ]);
    expect(plan.create).toEqual([]);
  });

  it("a type change replaces the record: delete, then create", () => {
    const plan = planDns({
      ...base,
      type: "CNAME",
      target: "lb.example.net",
      hosts: ["blog.example.com"],
      existing: [rec("1", "blog.example.com")],
    });
    expect(plan.delete.map((r) => r.id)).toEqual(["1"]);
    expect(plan.create).toEqual([
      {
        name: "blog.example.com",
        type: "CNAME",
        content: "lb.example.net",
        proxied: false,
        comment: mine,
      },
    ]);
  });

  it("never touches a record someone else made, nor plumb's own beside it: a conflict says whose", () => {
    const plan = planDns({
      ...base,
      hosts: ["blog.example.com", "shop.example.com", "docs.example.com"],
      existing: [
        rec("1", "blog.example.com", { comment: "", content: "192.0.2.1" }),
        rec("2", "blog.example.com"),
        rec("3", "shop.example.com", {
          type: "CNAME",
          content: "shop.pages.dev",
          comment: "managed-by=plumb app=team-b/shop",
        }),
        // A TXT record beside an A record is no conflict.
        rec("4", "docs.example.com", { type: "TXT", content: "v=spf1 -all", comment: "" }),
      ],
    });
    expect(plan.conflicts).toEqual([
      {
        host: "blog.example.com",
        message:
          "blog.example.com: left alone, its DNS already has A 192.0.2.1 (made by someone else)",
      },
      {
        host: "shop.example.com",
        message:
          "shop.example.com: left alone, its DNS already has CNAME shop.pages.dev (made by App team-b/shop)",
      },
    ]);
    expect(plan.delete).toEqual([]);
    expect(plan.update).toEqual([]);
    expect(plan.create.map((r) => r.name)).toEqual(["docs.example.com"]);
  });

  it("a CNAME shares its name with nothing: any foreign record is a conflict", () => {
    const plan = planDns({
      ...base,
      type: "CNAME",
      target: "lb.example.net",
      hosts: ["docs.example.com"],
      existing: [rec("4", "docs.example.com", { type: "TXT", content: "x", comment: "" })],
    });
    expect(plan.conflicts.map((c) => c.host)).toEqual(["docs.example.com"]);
    expect(plan.create).toEqual([]);
  });

  it("no hosts left: every record of the App goes, and nobody else's", () => {
    const plan = planDns({
      ...base,
      hosts: [],
      existing: [rec("1", "blog.example.com"), rec("9", "x.example.com", { comment: "mine" })],
    });
    expect(plan.delete.map((r) => r.id)).toEqual(["1"]);
  });
});
