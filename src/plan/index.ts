// Pure planning: gates, prune plan, conditions, schedule and notification decisions.
export * from "./applied.ts";
export * from "./compare.ts";
export * from "./conditions.ts";
export * from "./dns.ts";
export * from "./drift.ts";
export * from "./events.ts";
export * from "./gates.ts";
export * from "./inventory.ts";
export * from "./notify.ts";
export * from "./observed.ts";
export * from "./operations.ts";
export * from "./prune.ts";
export * from "./resources.ts";
export * from "./schedule.ts";
export * from "./status.ts";
export * from "./steady.ts";
