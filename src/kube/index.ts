// The Kubernetes adapter: the only import point for code that talks to the API server.
export * from "./adapter.ts";
export * from "./discovery.ts";
export * from "./transport.ts";
