// The App API: schema, types, validation and labels/finalizer names.

export * from "./annotations.ts";
export * from "./app-source.ts";
export * from "./cron.ts";
export * from "./duration.ts";
export * from "./policy.ts";
export * from "./row.ts";
export * from "./schema.ts";
export * from "./sources.ts";
export * from "./tag-policy.ts";
export * from "./tracking.ts";
export * from "./validate.ts";
