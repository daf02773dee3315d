// The app source's renderer (spec.source.app): services, needs and jobs to objects.
export * from "./needs.ts";
export * from "./pins.ts";
export * from "./render-app.ts";
export * from "./sizes.ts";
export * from "./workload.ts";
