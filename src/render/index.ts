// Render: pure functions from source files (or an image spec) to the desired set; the engines'
// port and what goes in and out of them (Kustomize, Helm).
export * from "./engine.ts";
export * from "./helm.ts";
export * from "./helm-extras.ts";
export * from "./hooks.ts";
export * from "./image.ts";
export * from "./kustomize.ts";
export * from "./manifests.ts";
export * from "./render.ts";
export * from "./service/index.ts";
