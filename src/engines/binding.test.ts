// The main Worker's side of the render Worker (serviceBindingEngines), against a stand-in for
// the binding that answers as functions/render-worker.ts does; the render Worker itself runs in
// workerd in test/e2e/worker.test.ts.
import { describe, expect, it } from "vitest";
import { EngineError } from "../render/engine.ts";
import { type ServiceBinding, serviceBindingEngines } from "./binding.ts";
import { COLD_HEADER, LOAD_APART_HEADER } from "./render-worker-headers.ts";

const request = { files: [], path: "", maxOutputBytes: 1000 };
const objects = [{ line: 1, object: { apiVersion: "v1", kind: "ConfigMap" } }];
const rendered = JSON.stringify({ ok: true, objects });

/** A binding whose isolate loads its engine on POST /load; `hang` paths never answer. */
function renderWorker(opts: { hang?: string[]; cold?: boolean; kustomize?: () => Response } = {}) {
  const calls: string[] = [];
  let loaded = opts.cold === false;
  const binding: ServiceBinding = {
    fetch(url, init) {
      const path = new URL(url).pathname;
      calls.push(path);
      if (opts.hang?.includes(path)) {
        return new Promise((_, reject) =>
          init?.signal?.addEventListener("abort", () => reject(init.signal?.reason)),
        );
      }
      if (path === "/load") {
        loaded = true;
        return Promise.resolve(Response.json({ ok: true }));
      }
      const apart = new Headers(init?.headers).get(LOAD_APART_HEADER) === "apart";
      if (!loaded && apart) {
        return Promise.resolve(
          Response.json(
            { message: "not loaded" },
            { status: 503, headers: { [COLD_HEADER]: "1" } },
          ),
        );
      }
      return Promise.resolve(opts.kustomize?.() ?? new Response(rendered));
    },
  };
  return { binding, calls };
}

async function rejection(p: Promise<unknown>): Promise<EngineError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  if (!(e instanceof EngineError)) throw new Error(`expected an EngineError, got ${String(e)}`);
  return e;
}

describe("serviceBindingEngines", () => {
  it("a cold isolate: loads the engine in a request of its own, then renders; a warm one renders at once", async () => {
    const cold = renderWorker();
    const engines = serviceBindingEngines(cold.binding);
    expect(await engines.kustomize!(request)).toEqual({ objects });
    expect(cold.calls).toEqual(["/kustomize", "/load", "/kustomize"]);
    expect(await engines.kustomize!(request)).toEqual({ objects });
    expect(cold.calls).toHaveLength(4);
  });

  it("a render past its limit says the render's limit ran out, not the load's", async () => {
    const w = renderWorker({ cold: false, hang: ["/kustomize"] });
    const e = await rejection(
      serviceBindingEngines(w.binding, { timeoutMs: 50 }).kustomize!(request),
    );
    expect(e).toMatchObject({
      kind: "timeout",
      transient: true,
      message:
        "kustomize build did not finish within 0.05s (the render's limit, PLUMB_RENDER_TIMEOUT; loading the engine is not counted)",
    });
  });

  it("a load past its own limit says so, and no render was sent after it", async () => {
    const w = renderWorker({ hang: ["/load"] });
    const e = await rejection(
      serviceBindingEngines(w.binding, { timeoutMs: 10, loadTimeoutMs: 50 }).kustomize!(request),
    );
    expect(e).toMatchObject({
      kind: "timeout",
      message:
        "the Kustomize engine did not load in the render Worker within 0.05s (its start-up limit); the render did not start",
    });
    expect(w.calls).toEqual(["/kustomize", "/load"]);
  });

  it("the render Worker out of CPU is a timeout naming its limit; another error answer is unavailable", async () => {
    const cpu = renderWorker({
      cold: false,
      kustomize: () => new Response("Worker exceeded CPU time limit.", { status: 503 }),
    });
    expect(await rejection(serviceBindingEngines(cpu.binding).kustomize!(request))).toMatchObject({
      kind: "timeout",
      message:
        "kustomize build: the render Worker ran out of CPU time (limits.cpu_ms in wrangler.render.toml)",
    });
    const broken = renderWorker({
      cold: false,
      kustomize: () => Response.json({ message: "render Worker: boom" }, { status: 500 }),
    });
    expect(
      await rejection(serviceBindingEngines(broken.binding).kustomize!(request)),
    ).toMatchObject({
      kind: "unavailable",
      transient: true,
      message:
        'kustomize build: the render Worker answered HTTP 500: {"message":"render Worker: boom"}',
    });
  });

  it("the engine's own error stays terminal", async () => {
    const w = renderWorker({
      cold: false,
      kustomize: () =>
        new Response(JSON.stringify({ ok: false, error: "app/kustomization.yaml: bad" })),
    });
    expect(await rejection(serviceBindingEngines(w.binding).kustomize!(request))).toMatchObject({
      kind: "failed",
      transient: false,
      message: "app/kustomization.yaml: bad",
    });
  });
});
