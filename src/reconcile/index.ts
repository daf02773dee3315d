// The reconcile loop and its ports; adapters are passed in by the composition roots (functions/).

export * from "./appset.ts";
export * from "./diff.ts";
export { createInventoryIndex } from "./ownership.ts";
export * from "./ports.ts";
export * from "./pull-request.ts";
export * from "./reconcile.ts";
export * from "./run-all.ts";
export * from "./tick.ts";
