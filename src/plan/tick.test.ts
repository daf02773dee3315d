import { describe, expect, it } from "vitest";
import type { AppRow } from "../app/index.ts";
import { lastSlot } from "./schedule.ts";
import {
  APPSET_INTERVAL,
  type AppSetDueRef,
  appSetDue,
  batchBySource,
  dueRows,
  type GitSourceRef,
  groupBySource,
  hintFits,
  rowSource,
  sourceKey,
} from "./tick.ts";

const MIN = 60_000;
const T0 = Date.parse("2026-11-29T12:00:00.000Z");

function row(i: number, over: Partial<AppRow> = {}): AppRow {
  return {
    namespace: `ns-${i % 3}`,
    name: `app-${i}`,
    uid: `uid-${i}`,
    generation: 1,
    observedGeneration: 1,
    deleting: false,
    interval: "5m",
    healthStatus: "Healthy",
    git: { url: "https://git.example/o/r.git", ref: "main" },
    ...over,
  };
}

describe("dueRows", () => {
  const rows = Array.from({ length: 1000 }, (_, i) => row(i));

  it("ticks one minute apart over a 5-minute interval reconcile every App exactly once", () => {
    const seen = new Map<string, number>();
    for (let k = 1; k <= 5; k++) {
      for (const d of dueRows(rows, { at: T0 + k * MIN, periodMs: MIN })) {
        expect(d).toMatchObject({ reason: "slot", compare: true });
        seen.set(d.name, (seen.get(d.name) ?? 0) + 1);
      }
    }
    expect(seen.size).toBe(1000);
    expect([...seen.values()].every((n) => n === 1)).toBe(true);
  });

  it("--force: every App, each owing a full comparison", () => {
    const due = dueRows(rows.slice(0, 10), { at: T0, periodMs: MIN }, { force: true });
    expect(due).toHaveLength(10);
    expect(due.every((d) => d.compare)).toBe(true);
  });

  it("--shard I/N: the shards split the due Apps without overlap", () => {
    const tick = { at: T0, periodMs: 5 * MIN };
    const all = dueRows(rows, tick).map((d) => d.name);
    const shards = [0, 1, 2].map((index) =>
      dueRows(rows, tick, { shard: { index, count: 3 } }).map((d) => d.name),
    );
    expect(shards.flat().sort()).toEqual([...all].sort());
    for (const s of shards) expect(s.length).toBeGreaterThan(250);
  });

  it("carries each due App's Git source, its Secret qualified by the App's namespace", () => {
    const r = row(4, { git: { url: "u", ref: "main", secretName: "git" } });
    const due = dueRows([r], { at: lastSlot(r, T0), periodMs: MIN });
    expect(due).toEqual([
      {
        namespace: "ns-1",
        name: "app-4",
        reason: "slot",
        compare: true,
        source: { url: "u", ref: "main", secret: "ns-1/git" },
      },
    ]);
  });

  it("an App being deleted is due without a source (its finalizer looks nothing up)", () => {
    const r = row(5, { deleting: true });
    expect(dueRows([r], { at: T0, periodMs: MIN })).toEqual([
      expect.objectContaining({ name: "app-5", reason: "deleting" }),
    ]);
    expect(dueRows([r], { at: T0, periodMs: MIN })[0]).not.toHaveProperty("source");
  });
});

describe("sources", () => {
  it("a hint fits only the source it was resolved for", () => {
    const source = { url: "https://x/r.git", ref: "main", secret: "a/git" };
    const hint = { ...source, revision: "c".repeat(40) };
    expect(hintFits(hint, source)).toBe(true);
    expect(hintFits(hint, { ...source, secret: "b/git" })).toBe(false);
    expect(hintFits(hint, { ...source, secret: undefined })).toBe(false);
    expect(hintFits(hint, { ...source, ref: "HEAD" })).toBe(false);
    expect(hintFits(hint, { ...source, url: "https://x/r" })).toBe(false);
    expect(hintFits(undefined, source)).toBe(false);
  });

  it("Apps of one repository and ref group together unless their credentials differ", () => {
    const apps: Array<{ name: string; source?: GitSourceRef | undefined }> = [
      { name: "a", source: rowSource(row(0)) },
      { name: "b", source: rowSource(row(1)) },
      {
        name: "c",
        source: rowSource(row(2, { git: { url: "https://git.example/o/r.git", ref: "dev" } })),
      },
      {
        name: "d",
        source: rowSource(
          row(3, { git: { url: "https://git.example/o/r.git", ref: "main", secretName: "s" } }),
        ),
      },
      { name: "e" },
    ];
    const groups = groupBySource(apps);
    expect([...groups.values()].map((g) => g.apps.map((a) => a.name))).toEqual([
      ["a", "b"],
      ["c"],
      ["d"],
    ]);
    expect(groups.has(sourceKey({ url: "https://git.example/o/r.git", ref: "main" }))).toBe(true);
  });

  it("batches keep one source per batch, at most `size` Apps, Apps without a source last", () => {
    const one = rowSource(row(0));
    const two = rowSource(row(1, { git: { url: "https://other/r.git", ref: "main" } }));
    const apps: Array<{ name: string; source?: GitSourceRef | undefined }> = [
      ...Array.from({ length: 5 }, (_, i) => ({ name: `a${i}`, source: one })),
      { name: "img" },
      ...Array.from({ length: 2 }, (_, i) => ({ name: `b${i}`, source: two })),
      { name: "img2" },
    ];
    expect(batchBySource(apps, 2).map((b) => b.map((a) => a.name))).toEqual([
      ["a0", "a1"],
      ["a2", "a3"],
      ["a4"],
      ["b0", "b1"],
      ["img", "img2"],
    ]);
  });
});

describe("appSetDue", () => {
  const tick = { at: T0, periodMs: MIN };
  const settled = (uid: string, over: Partial<AppSetDueRef["status"]> = {}): AppSetDueRef => ({
    metadata: { namespace: "ns", name: uid, uid, generation: 2 },
    status: { observedGeneration: 2, conditions: [], ...over },
  });
  // Uids whose slot in every 3 minutes falls inside, and outside, the tick's minute.
  const uids = Array.from({ length: 60 }, (_, i) => `uid-${i}`);
  const row = (uid: string) => ({ namespace: "ns", name: uid, uid, interval: APPSET_INTERVAL });
  const inSlot = uids.find((u) => lastSlot(row(u), T0) > T0 - MIN) ?? "";
  const outSlot = uids.find((u) => lastSlot(row(u), T0) <= T0 - MIN) ?? "";

  it("is due when never evaluated, when its spec changed and when it is failing", () => {
    expect(outSlot).not.toBe("");
    expect(appSetDue({ metadata: { namespace: "ns", name: "a", uid: outSlot } }, tick)).toBe(true);
    expect(
      appSetDue(
        { ...settled(outSlot), metadata: { ...settled(outSlot).metadata, generation: 3 } },
        tick,
      ),
    ).toBe(true);
    const failing = settled(outSlot, { conditions: [{ type: "ErrorOccurred", status: "True" }] });
    expect(appSetDue(failing, tick)).toBe(true);
    const fine = settled(outSlot, { conditions: [{ type: "ErrorOccurred", status: "False" }] });
    expect(appSetDue(fine, tick)).toBe(false);
  });

  it("is due when its slot in every 3 minutes falls in the tick, once in three one-minute ticks", () => {
    expect(inSlot).not.toBe("");
    expect(appSetDue(settled(inSlot), tick)).toBe(true);
    const ticks = [0, 1, 2].map((k) =>
      appSetDue(settled(inSlot), { at: T0 + k * MIN, periodMs: MIN }),
    );
    expect(ticks).toEqual([true, false, false]);
    expect(appSetDue(settled(inSlot), { at: T0 + 3 * MIN, periodMs: MIN })).toBe(true);
  });

  it("force takes every AppSet; a shard only its own", () => {
    expect(appSetDue(settled(outSlot), tick, { force: true })).toBe(true);
    const shards = [0, 1].map((index) =>
      appSetDue(settled(inSlot), tick, { shard: { index, count: 2 } }),
    );
    expect(shards.filter(Boolean)).toHaveLength(1);
  });
});
