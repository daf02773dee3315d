// Render: pure functions from source files (or an image spec) to the desired set.
export * from "./hash.ts";
export * from "./image.ts";
export * from "./manifests.ts";
export * from "./refs.ts";
export * from "./render.ts";
