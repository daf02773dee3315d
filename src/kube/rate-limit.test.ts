import { describe, expect, it } from "vitest";
import { tokenBucket, withRateLimit } from "./rate-limit.ts";
import type { KubeTransport } from "./transport.ts";

/** A clock whose sleep moves time forward at once and records how long each wait was. */
function steppedClock() {
  let t = 0;
  const waits: number[] = [];
  return {
    waits,
    at: () => t,
    clock: {
      now: () => t,
      sleep: async (ms: number) => {
        waits.push(ms);
        t += ms;
      },
    },
  };
}

describe("tokenBucket", () => {
  it("lets `burst` through at once, then one every 1/qps seconds", async () => {
    const c = steppedClock();
    const take = tokenBucket({ qps: 5, burst: 10 }, c.clock);
    for (let i = 0; i < 10; i++) await take();
    expect(c.waits).toEqual([]);
    await take();
    await take();
    expect(c.waits).toEqual([200, 200]);
    expect(c.at()).toBe(400);
  });

  it("refills while idle, but never above burst", async () => {
    const c = steppedClock();
    const take = tokenBucket({ qps: 10, burst: 2 }, c.clock);
    await take();
    await take();
    await c.clock.sleep(10_000); // idle 10 s: 100 tokens earned, 2 kept
    c.waits.length = 0;
    await take();
    await take();
    await take();
    expect(c.waits).toEqual([100]);
  });

  it("refuses a zero rate", () => {
    expect(() => tokenBucket({ qps: 0, burst: 1 })).toThrow(
      "rate limit needs qps > 0 and burst >= 1, got 0/1",
    );
  });
});

describe("withRateLimit", () => {
  it("holds the requests beyond the burst and passes every one on", async () => {
    const c = steppedClock();
    const seen: Array<[string, number]> = [];
    const inner: KubeTransport = async (method, path) => {
      seen.push([`${method} ${path}`, c.at()]);
      return { status: 200, body: {} } as Awaited<ReturnType<KubeTransport>>;
    };
    const t = withRateLimit(inner, { qps: 50, burst: 2 }, c.clock);
    for (const p of ["/a", "/b", "/c", "/d"]) await t("GET", p);
    expect(seen).toEqual([
      ["GET /a", 0],
      ["GET /b", 0],
      ["GET /c", 20],
      ["GET /d", 40],
    ]);
  });
});
