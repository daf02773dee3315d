// HelperProcess against a real child process speaking the helper protocol (a Node stand-in,
// testdata/helper/fake-helper.mjs): the two limits, restarts, and what each failure says.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { EngineError } from "../render/engine.ts";
import { type HelperOptions, HelperProcess } from "./helper.ts";

const FAKE = join(import.meta.dirname, "testdata/helper/fake-helper.mjs");
const helpers: HelperProcess[] = [];
afterEach(async () => {
  await Promise.all(helpers.splice(0).map((h) => h.stop()));
});

function fake(mode: string, limits: Partial<HelperOptions> = {}): HelperProcess {
  const h = new HelperProcess({
    name: "Fake",
    action: "fake build",
    command: process.execPath,
    args: [FAKE, mode],
    renderTimeoutMs: 60_000,
    loadTimeoutMs: 60_000,
    notBuilt: "the Fake engine is not built: run `npm run build:engines`",
    ...limits,
  });
  helpers.push(h);
  return h;
}

const op = (o: string, text = "") => JSON.stringify({ op: o, text });

async function rejection(p: Promise<unknown>): Promise<EngineError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  if (!(e instanceof EngineError)) throw new Error(`expected an EngineError, got ${String(e)}`);
  return e;
}

describe("HelperProcess", () => {
  it("serves renders in order from one process, started once", async () => {
    const h = fake("ready");
    const [a, b] = await Promise.all([h.render(op("echo", "a")), h.render(op("echo", "b"))]);
    expect([a, b]).toEqual([
      { ok: true, yaml: "a" },
      { ok: true, yaml: "b" },
    ]);
    expect(h.stats()).toMatchObject({ loads: 1, renders: 2 });
  });

  it("the render's limit does not count loading: a load longer than it, then a render in time", async () => {
    const dir = mkdtempSync(join(tmpdir(), "plumb-helper-"));
    try {
      const gate = join(dir, "ready");
      const h = fake(`gated:${gate}`, { renderTimeoutMs: 3_000 });
      const render = h.render(op("echo", "after a slow load"));
      // Loading takes longer than the render's limit...
      await new Promise((r) => setTimeout(r, 3_500));
      writeFileSync(gate, "");
      // ...and the render, which starts only once the engine is ready, still succeeds.
      expect(await render).toEqual({ ok: true, yaml: "after a slow load" });
      expect(h.stats()).toMatchObject({ loads: 1, renders: 1 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a render past its limit says which limit ran out; a fresh helper is loaded at once, and the next render does not load again", async () => {
    const h = fake("ready", { renderTimeoutMs: 2_000 });
    await h.load();
    const first = h.pid();
    const e = await rejection(h.render(op("hang")));
    expect(e).toMatchObject({
      kind: "timeout",
      transient: true,
      message:
        "fake build did not finish within 2s (the render's limit, PLUMB_RENDER_TIMEOUT; loading the engine is not counted); the engine was restarted",
    });
    // The replacement was started by the time-out, not by the next render.
    expect(h.stats().loads).toBe(2);
    expect(await h.render(op("echo", "again"))).toEqual({ ok: true, yaml: "again" });
    expect(h.stats()).toMatchObject({ loads: 2, renders: 1 });
    expect(h.pid()).not.toBe(first);
  });

  it("an engine that does not load within its own limit: a timeout naming the start-up", async () => {
    const h = fake("never", { loadTimeoutMs: 300, renderTimeoutMs: 300 });
    expect(await rejection(h.render(op("echo")))).toMatchObject({
      kind: "timeout",
      transient: true,
      message:
        "the Fake engine did not load within 0.3s (its start-up limit; the machine may be overloaded); the render did not start",
    });
  });

  it("a crash during a render is transient, with the helper's last words; the next render starts a new one", async () => {
    const h = fake("ready");
    expect(await rejection(h.render(op("crash")))).toMatchObject({
      kind: "unavailable",
      transient: true,
      message:
        "the Fake engine exited during the render (code 2): boom; it is started again for the next render",
    });
    expect(await h.render(op("echo", "back"))).toEqual({ ok: true, yaml: "back" });
    expect(h.stats().loads).toBe(2);
  });

  it("not built, another protocol, or a line that is not JSON: unavailable, saying to build the engines", async () => {
    const missing = new HelperProcess({
      name: "Fake",
      action: "fake build",
      command: join(tmpdir(), "no-such-plumb-helper"),
      renderTimeoutMs: 1000,
      loadTimeoutMs: 1000,
      notBuilt: "the Fake engine is not built: run `npm run build:engines`",
    });
    expect(await rejection(missing.render(op("echo")))).toMatchObject({
      kind: "unavailable",
      transient: true,
      message: "the Fake engine is not built: run `npm run build:engines`",
    });
    expect(missing.stats().loads).toBe(0);
    expect(await rejection(fake("protocol2").render(op("echo")))).toMatchObject({
      kind: "unavailable",
      message:
        "the Fake engine speaks protocol 2, plumb 1: rebuild it with `npm run build:engines`",
    });
    expect(await rejection(fake("ready").render(op("garbage")))).toMatchObject({
      kind: "unavailable",
      message:
        "the Fake engine sent a line that is not JSON: this is not JSON; rebuild it with `npm run build:engines`",
    });
  });

  it("a process that ends on its own reaps its helper first (no helper outlives plumb; its CPU counts in plumb's)", () => {
    const out = execFileSync(
      process.execPath,
      [join(import.meta.dirname, "testdata/helper/exits.ts")],
      {
        encoding: "utf8",
      },
    );
    expect(JSON.parse(out.trim())).toEqual({ response: { ok: true, yaml: "hi" }, reaped: true });
  });
});
