// The render Worker (plumb-render, wrangler.render.toml): the Kustomize engine (kustomize.wasm,
// GOOS=js) instantiated once per isolate, serving the main Worker over a service binding.
// POST /kustomize: the engine's JSON request → its JSON response. A header reports the engine's
// linear memory (the Go heap: it only grows, so it is the isolate's peak for the engine).
import "../dist/engines/wasm_exec.js";
import kustomizeWasm from "../dist/engines/kustomize.wasm";

interface Go {
  importObject: WebAssembly.Imports;
  run(instance: WebAssembly.Instance): Promise<void>;
}

type Render = (request: string) => string;

let engine: Promise<{ render: Render; memory: WebAssembly.Memory }> | undefined;

async function load() {
  const go = new (globalThis as unknown as { Go: new () => Go }).Go();
  const instance = await WebAssembly.instantiate(kustomizeWasm, go.importObject);
  void go.run(instance);
  const render = (globalThis as unknown as { plumbKustomize?: Render }).plumbKustomize;
  if (!render) throw new Error("kustomize.wasm did not register plumbKustomize");
  return { render, memory: instance.exports["mem"] as WebAssembly.Memory };
}

export default {
  async fetch(request: Request): Promise<Response> {
    const path = new URL(request.url).pathname;
    if (request.method !== "POST" || path !== "/kustomize") {
      return Response.json({ message: "POST /kustomize" }, { status: 404 });
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
      engine = undefined;
      return Response.json(
        { message: `render Worker: ${err instanceof Error ? err.message : String(err)}` },
        { status: 500 },
      );
    }
  },
};
