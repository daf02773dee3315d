// A worker thread hosting the Kustomize engine (kustomize.wasm, GOOS=js) for Node: loaded once,
// then one render per message. The parent terminates the thread when a render passes its limit.
// Messages in: { id, dir, request } (request: the engine's JSON); out: { id, response } or
// { id, error }. { id, dir, request: undefined } only loads the engine.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { parentPort } from "node:worker_threads";

interface Go {
  importObject: WebAssembly.Imports;
  run(instance: WebAssembly.Instance): Promise<void>;
}

type Render = (request: string) => string;

let engine: Promise<Render> | undefined;

async function load(dir: string): Promise<Render> {
  await import(pathToFileURL(join(dir, "wasm_exec.js")).href);
  const GoClass = (globalThis as unknown as { Go: new () => Go }).Go;
  const go = new GoClass();
  const module = await WebAssembly.compile(await readFile(join(dir, "kustomize.wasm")));
  const instance = await WebAssembly.instantiate(module, go.importObject);
  void go.run(instance);
  const fn = (globalThis as unknown as { plumbKustomize?: Render }).plumbKustomize;
  if (!fn) throw new Error("kustomize.wasm did not register plumbKustomize");
  return fn;
}

parentPort?.on("message", async (msg: { id: number; dir: string; request?: string }) => {
  try {
    engine ??= load(msg.dir);
    const render = await engine;
    const response = msg.request === undefined ? "" : render(msg.request);
    parentPort?.postMessage({ id: msg.id, response });
  } catch (err) {
    engine = undefined;
    parentPort?.postMessage({
      id: msg.id,
      error: err instanceof Error ? err.message : String(err),
    });
  }
});
