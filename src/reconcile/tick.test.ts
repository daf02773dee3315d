import { describe, expect, it } from "vitest";
import { createFakeKube, testApp } from "../../test/support/fake-kube.ts";
import { SourceError } from "../core/index.ts";
import type { GitPort, Ports } from "./ports.ts";
import { dueAppSets, planTick, resolveSources } from "./tick.ts";

const MIN = 60_000;
const T0 = Date.parse("2026-11-29T12:00:00.000Z");

function git(answers: Record<string, string | Error>, calls: string[]): GitPort {
  return {
    async resolve(source, auth) {
      calls.push(`${source.url}#${source.ref}${auth ? `@${auth.token}` : ""}`);
      const a = answers[source.url];
      if (a === undefined || a instanceof Error) throw a ?? new Error("unknown");
      return a;
    },
    async fetch() {
      return [];
    },
  };
}

describe("planTick", () => {
  it("reads the compact list page by page and keeps only the due Apps", async () => {
    const kube = createFakeKube();
    for (let i = 0; i < 1234; i++) {
      kube.apps.set(`ns/a-${i}`, {
        ...testApp("ns", `a-${i}`, { spec: { interval: "5m" } }),
        metadata: { namespace: "ns", name: `a-${i}`, uid: `u-${i}`, generation: 1 },
        status: { observedGeneration: 1, healthStatus: "Healthy" },
      });
    }
    kube.apps.set("ns/new", testApp("ns", "new"));
    const skipped: string[] = [];
    let due = 0;
    for (let k = 1; k <= 5; k++) {
      const plan = await planTick(
        { kube },
        { at: T0 + k * MIN, periodMs: MIN },
        { pageSize: 500, onSkipped: (r) => skipped.push(r.name) },
      );
      expect(plan).toMatchObject({ listed: 1235, pages: 3 });
      expect(plan.due.some((d) => d.name === "new" && d.reason === "new")).toBe(true);
      due += plan.due.length - 1;
      expect(skipped.length + due + k).toBe(1235 * k);
    }
    // Over one interval every App came once.
    expect(due).toBe(1234);
    expect(kube.requestCounts().list).toBe(15);
  });
});

describe("resolveSources", () => {
  const ports = (answers: Record<string, string | Error>, calls: string[]) => {
    const kube = createFakeKube();
    kube.secrets.set("a/git", { token: "token-of-team-a" });
    const logs: Array<Record<string, unknown>> = [];
    const p: Pick<Ports, "kube" | "git" | "log"> = {
      kube,
      git: git(answers, calls),
      log: (e) => logs.push(e),
    };
    return { p, logs };
  };

  it("looks each repository, ref and Secret up once, however many Apps use it", async () => {
    const calls: string[] = [];
    const { p } = ports(
      { "https://x/r.git": "1".repeat(40), "https://x/s.git": "2".repeat(40) },
      calls,
    );
    const r = { url: "https://x/r.git", ref: "main" };
    const apps = [
      ...Array.from({ length: 100 }, () => ({ source: r })),
      { source: { ...r, secret: "a/git" } },
      { source: { url: "https://x/s.git", ref: "main" } },
      {},
    ];
    const hints = await resolveSources(p, apps);
    expect(calls.sort()).toEqual([
      "https://x/r.git#main",
      "https://x/r.git#main@token-of-team-a",
      "https://x/s.git#main",
    ]);
    expect([...hints.values()].map((h) => h.revision).sort()).toEqual([
      "1".repeat(40),
      "1".repeat(40),
      "2".repeat(40),
    ]);
  });

  it("a source that fails to resolve gets no hint (its runs resolve and record it)", async () => {
    const calls: string[] = [];
    const { p, logs } = ports(
      { "https://x/r.git": new SourceError("authentication failed for https://x/r.git", false) },
      calls,
    );
    const hints = await resolveSources(p, [
      { source: { url: "https://x/r.git", ref: "main" } },
      { source: { url: "https://x/r.git", ref: "main", secret: "b/missing" } },
    ]);
    expect(hints.size).toBe(0);
    expect(logs.map((l) => l["error"])).toEqual(
      expect.arrayContaining([
        "authentication failed for https://x/r.git",
        "Secret b/missing (spec.source secretRef) not found",
      ]),
    );
  });

  it("gives up waiting at the deadline and returns what it has", async () => {
    const kube = createFakeKube();
    // The slow lookup answers only when the test lets it, after resolveSources returned.
    let answer: (sha: string) => void = () => {};
    const slow: GitPort = {
      resolve: (s) =>
        s.url === "fast"
          ? Promise.resolve("3".repeat(40))
          : new Promise((r) => {
              answer = r;
            }),
      fetch: async () => [],
    };
    const hints = await resolveSources(
      { kube, git: slow },
      [{ source: { url: "fast", ref: "main" } }, { source: { url: "slow", ref: "main" } }],
      { deadlineMs: 50 },
    );
    expect([...hints.values()].map((h) => h.url)).toEqual(["fast"]);
    answer("4".repeat(40));
  });
});

describe("dueAppSets", () => {
  const tick = { at: Date.parse("2026-12-03T10:00:00Z"), periodMs: 60_000 };
  const stored = (name: string, status?: Record<string, unknown>) => ({
    apiVersion: "plumb.dev/v1alpha1",
    kind: "AppSet",
    metadata: { name, namespace: "team", uid: `uid-${name}`, generation: 2 },
    spec: {},
    ...(status ? { status } : {}),
  });

  it("keeps the new, changed and failing AppSets of the namespace", async () => {
    const kube = createFakeKube();
    await kube.apply(stored("new"));
    await kube.apply(stored("changed", { observedGeneration: 1 }));
    await kube.apply(
      stored("failing", {
        observedGeneration: 2,
        conditions: [{ type: "ErrorOccurred", status: "True" }],
      }),
    );
    await kube.apply({
      ...stored("elsewhere"),
      metadata: { ...stored("x").metadata, namespace: "b" },
    });
    const due = await dueAppSets({ kube }, tick, { namespace: "team" });
    expect(due.map((s) => s.metadata.name).sort()).toEqual(["changed", "failing", "new"]);
  });

  it("a list that fails is logged and counts as none, so the Apps' tick goes on", async () => {
    const kube = createFakeKube();
    kube.fail.list = new Error("appsets.plumb.dev is forbidden");
    const logged: Array<Record<string, unknown>> = [];
    const due = await dueAppSets({ kube, log: (e) => logged.push(e) }, tick);
    expect(due).toEqual([]);
    expect(logged).toEqual([
      {
        msg: "AppSets not listed; this tick evaluates none",
        error: "appsets.plumb.dev is forbidden",
      },
    ]);
  });
});
