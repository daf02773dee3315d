// Render: pure functions from source files (or an image spec) to the desired set.
export * from "./image.ts";
export * from "./manifests.ts";
export * from "./render.ts";
export * from "./service/index.ts";
