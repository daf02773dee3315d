// The render Worker (plumb-render, wrangler.render.toml): the Kustomize engine (kustomize.wasm,
// GOOS=js) instantiated once per isolate, serving the main Worker over a service binding
// (src/engines/binding.ts).
// POST /load: instantiates the engine (its own request, so its CPU time is not the render's).
// POST /kustomize: the engine's JSON request → its JSON response; an isolate without a loaded
// engine answers 503 with x-plumb-engine-cold when the caller loads apart (x-plumb-engine-load),
// else loads it first. A header reports the engine's linear memory (the Go heap: it only grows,
// so it is the isolate's peak for the engine).
import "../dist/engines/wasm_exec.js";
import kustomizeWasm from "../dist/engines/kustomize.wasm";
import { COLD_HEADER, LOAD_APART_HEADER } from "../src/engines/render-worker-headers.ts";

interface Go {
  importObject: WebAssembly.Imports;
  run(instance: WebAssembly.Instance): Promise<void>;
}

type Render = (request: string) => string;

let engine: Promise<{ render: Render; memory: WebAssembly.Memory }> | undefined;
let loaded = false;

async function load() {
  const go = new (globalThis as unknown as { Go: new () => Go }).Go();
  const instance = await WebAssembly.instantiate(kustomizeWasm, go.importObject);
  void go.run(instance);
  const render = (globalThis as unknown as { plumbKustomize?: Render }).plumbKustomize;
  if (!render) throw new Error("kustomize.wasm did not register plumbKustomize");
  loaded = true;
  return { render, memory: instance.exports["mem"] as WebAssembly.Memory };
}

const failed = (err: unknown) => {
  engine = undefined;
  loaded = false;
  return Response.json(
    { message: `render Worker: ${err instanceof Error ? err.message : String(err)}` },
    { status: 500 },
  );
};

export default {
  async fetch(request: Request): Promise<Response> {
    const path = new URL(request.url).pathname;
    if (request.method === "POST" && path === "/load") {
      try {
        engine ??= load();
        await engine;
        return Response.json({ ok: true });
      } catch (err) {
        return failed(err);
      }
    }
    if (request.method !== "POST" || path !== "/kustomize") {
      return Response.json({ message: "POST /kustomize or /load" }, { status: 404 });
    }
    if (!loaded && request.headers.get(LOAD_APART_HEADER) === "apart") {
      return Response.json(
        { message: "the engine is not loaded in this isolate: POST /load first" },
        { status: 503, headers: { [COLD_HEADER]: "1" } },
      );
    }
    try {
      engine ??= load();
      const { render, memory } = await engine;
      const out = render(await request.text());
      return new Response(out, {
        headers: {
          "content-type": "application/json",
          "x-plumb-wasm-memory-bytes": String(memory.buffer.byteLength),
        },
      });
    } catch (err) {
      return failed(err);
    }
  },
};
