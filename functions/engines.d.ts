// Modules the build makes (scripts/build-engines.sh) and wrangler bundles: Go's wasm_exec.js
// (defines globalThis.Go) and kustomize.wasm (a compiled module, wrangler's default rule).
declare module "*/wasm_exec.js";
declare module "*.wasm" {
  const module: WebAssembly.Module;
  export default module;
}
