// Pure planning: gates, prune plan, conditions, schedule and notification decisions.
export * from "./conditions.ts";
export * from "./drift.ts";
export * from "./gates.ts";
export * from "./notify.ts";
export * from "./prune.ts";
export * from "./schedule.ts";
export * from "./status.ts";
