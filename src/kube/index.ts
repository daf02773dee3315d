// The Kubernetes adapter: the import point for code that talks to the API server, on any
// runtime. Node-only parts (kubeconfig files, node:https) are imported from ./node.ts.
export * from "./adapter.ts";
export * from "./destinations.ts";
export * from "./discovery.ts";
export * from "./fetch-transport.ts";
export * from "./kubeconfig.ts";
export * from "./retry.ts";
export * from "./signouts.ts";
export * from "./transport.ts";
